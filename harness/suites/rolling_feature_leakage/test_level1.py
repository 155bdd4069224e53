"""Level 1: count windows over strictly earlier rows of the same entity."""

import math

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.marks import level

from .oracle import (
    START,
    STATS,
    assert_frames_close,
    column,
    count_windows,
    expected,
    features,
    first_call,
    frames,
    same,
    tie_free_frames,
    with_pandas,
)
from .properties import later_rows_do_not_matter, matches_definition, point_in_time

grade = level(1)


@st.composite
def count_cases(draw, nan=True):
    df = draw(frames(nan=nan))
    window = draw(count_windows)
    return df, window, draw(st.integers(1, window))


def day(k):
    return START + pd.Timedelta(days=k)


def frame(rows, index=None):
    """rows of (entity, day number, amount)."""
    ents, days, amounts = zip(*rows, strict=True) if rows else ((), (), ())
    return pd.DataFrame({"entity": list(ents), "time": [day(k) for k in days],
                         "amount": [float(a) for a in amounts]}, index=index)


nan = math.nan


@grade("a row must never see its own value", "leakage", timeout=5)
def test_never_sees_itself(impl):
    df = frame([("a", 0, 1), ("a", 1, 2), ("a", 2, 3), ("a", 3, 10)])
    out = features(impl, df, 2)
    assert same(column(out, "mean", 2), [nan, 1.0, 1.5, 2.5])
    assert same(column(out, "max", 2), [nan, 1.0, 2.0, 3.0])


@grade("rows with the same timestamp must not see each other", "ties", timeout=5)
def test_same_timestamp_rows_do_not_see_each_other(impl):
    df = frame([("a", 0, 1), ("a", 1, 5), ("a", 1, 7), ("a", 1, 9), ("a", 2, 100)])
    out = features(impl, df, 3)
    assert same(column(out, "mean", 3), [nan, 1.0, 1.0, 1.0, 7.0])
    assert same(column(out, "min", 3), [nan, 1.0, 1.0, 1.0, 5.0])


@grade("among equal timestamps the row later in df must count as later", "ties", timeout=5)
def test_tie_break_by_position(impl):
    df = frame([("a", 0, 4), ("a", 0, 8), ("a", 1, 0)])
    assert column(features(impl, df, 1), "mean", 1)[2] == 8.0
    swapped = frame([("a", 0, 8), ("a", 0, 4), ("a", 1, 0)])
    assert column(features(impl, swapped, 1), "mean", 1)[2] == 4.0
    # The tie-break uses the position in df, not the index label or the value.
    labelled = frame([("a", 0, 8), ("a", 0, 4), ("a", 1, 0)], index=[9, 0, 5])
    assert column(features(impl, labelled, 1), "mean", 1)[2] == 4.0


@grade("each entity must only see its own rows", "entity", timeout=5)
def test_entities_are_separate(impl):
    df = frame([("a", 0, 1), ("b", 1, 50), ("a", 2, 3), ("b", 3, 70), ("a", 4, 0)])
    out = features(impl, df, 5)
    assert same(column(out, "mean", 5), [nan, nan, 1.0, 50.0, 2.0])


@grade("the result must keep df's index and row order, whatever order the rows come in",
       "output", timeout=5)
def test_unsorted_rows_keep_their_order(impl):
    df = frame([("b", 3, 70), ("a", 2, 3), ("a", 4, 0), ("b", 1, 50), ("a", 0, 1)],
               index=["e", "c", "d", "b", "a"])
    out = features(impl, df, 5)
    assert list(out.index) == ["e", "c", "d", "b", "a"]
    assert same(column(out, "mean", 5), [50.0, 1.0, 2.0, nan, nan])


def with_gaps():
    return frame([("a", 0, 2), ("a", 1, nan), ("a", 2, 6), ("a", 3, nan), ("a", 4, 0)])


@grade("missing values must be skipped and must not count toward min_periods", "missing",
       timeout=5)
def test_missing_values_skipped(impl):
    df = with_gaps()
    out = features(impl, df, 2, min_periods=2)
    # Row 4's window holds days 2 and 3: only one usable value, fewer than min_periods.
    assert same(column(out, "mean", 2), [nan, nan, nan, nan, nan])
    out = features(impl, df, 3, min_periods=2)
    assert same(column(out, "mean", 3), [nan, nan, nan, 4.0, nan])
    assert same(column(out, "max", 3), [nan, nan, nan, 6.0, nan])


@grade("rows with a missing value must still count among the last w rows", "missing",
       timeout=5)
def test_missing_values_take_window_slots(impl):
    out = features(impl, with_gaps(), 2, min_periods=1)
    # Row 4 sees days 2 and 3 (6 and a gap), not the last two usable values (2 and 6).
    assert same(column(out, "mean", 2), [nan, 2.0, 2.0, 6.0, 6.0])


@grade("fewer usable rows than min_periods must give NaN", "missing", timeout=5)
def test_min_periods(impl):
    df = frame([("a", k, v) for k, v in enumerate([1, 2, 3, 4])])
    out = features(impl, df, 3, min_periods=2)
    assert same(column(out, "mean", 3), [nan, nan, 1.5, 2.0])
    assert same(column(out, "min", 3), [nan, nan, 1.0, 1.0])


def eight_values(impl):
    return features(impl, frame([("a", k, v) for k, v in enumerate([2, 4, 4, 4, 5, 5, 7, 9, 0])]),
                    8)


@grade("std must be the sample standard deviation (ddof = 1)", "stats", timeout=5)
def test_sample_std(impl):
    assert math.isclose(column(eight_values(impl), "std", 8)[8], math.sqrt(32 / 7), rel_tol=1e-9)


@grade("the std of a single value must be NaN (its other stats are not)", "stats", timeout=5)
def test_single_value_std(impl):
    out = eight_values(impl)
    assert math.isnan(column(out, "std", 8)[1]), "the std of a single value must be NaN"
    assert same(column(out, "min", 8)[1:3], [2.0, 2.0])


@grade("columns must be named value_stat_window", "output", timeout=5)
def test_column_names(impl):
    out = features(impl, frame([("a", 0, 1), ("a", 1, 2)]), 2)
    assert list(out.columns) == [f"amount_{s}_2" for s in STATS]


@grade("columns must come in the order of stats", "output", timeout=5)
def test_column_order(impl):
    out = features(impl, frame([("a", 0, 1), ("a", 1, 2)]), 3, stats=("max", "mean"))
    assert list(out.columns) == ["amount_max_3", "amount_mean_3"]


@grade("every feature column must hold floats, also for an int value column", "output",
       timeout=5)
def test_float_columns(impl):
    df = frame([("a", 0, 1), ("a", 1, 2), ("a", 2, 5)])
    df["amount"] = df["amount"].astype("int64")
    out = features(impl, df, 2)
    assert all(out[c].dtype.kind == "f" for c in out.columns), dict(out.dtypes)


@grade("rolling_features called without stats and min_periods must give the four stats, "
       "min_periods=1", "output", timeout=5)
def test_defaults(impl):
    df = frame([("a", 0, 1), ("a", 1, 2), ("a", 2, 5), ("b", 2, 7)])
    out = impl.rolling_features(df, entity="entity", time="time", value="amount", window=2)
    assert_frames_close(out, expected(df, 2))


@grade("the prompt's example (one user, window=2) must come out as shown", "ties", timeout=5)
def test_prompt_example(impl):
    df = frame([("u", 0, 10), ("u", 1, 20), ("u", 1, 30), ("u", 2, 40), ("u", 4, 50)])
    assert same(column(features(impl, df, 2), "mean", 2), [nan, 10.0, 10.0, 25.0, 35.0])


@grade("df must not be modified", "inputs", timeout=5)
def test_df_untouched(impl):
    df = frame([("b", 3, 70), ("a", 2, 3), ("a", 2, nan), ("b", 1, 50)], index=[3, 1, 2, 0])
    copy = df.copy()
    features(impl, df, 2)
    pd.testing.assert_frame_equal(df, copy)


@grade("a count window must work with a numeric time column", "inputs", timeout=5)
def test_numeric_time(impl):
    df = pd.DataFrame({"entity": [7, 7, 8, 7], "time": [30, 10, 5, 20],
                       "amount": [1.0, 2.0, 3.0, 4.0]})
    assert same(column(features(impl, df, 1), "mean", 1), [4.0, nan, nan, 2.0])


@grade("the entity, time and value columns must be the ones named, whatever their names",
       "inputs", timeout=5)
def test_other_names(impl):
    df = pd.DataFrame({"user": [7, 7, 8, 7], "when": [day(3), day(1), day(0), day(2)],
                       "x": [1, 2, 3, 4], "amount": [0, 0, 0, 0], "time": [day(0)] * 4})
    out = impl.rolling_features(df, entity="user", time="when", value="x", window=1,
                                stats=("mean",))
    assert list(out.columns) == ["x_mean_1"]
    assert same(out["x_mean_1"].tolist(), [4.0, nan, nan, 2.0])


@grade("missing values of a nullable integer column must be skipped", "missing", timeout=5)
def test_nullable_values(impl):
    df = frame([("a", k, 0) for k in range(4)])
    df["amount"] = pd.array([1, None, 3, 5], dtype="Int64")
    out = features(impl, df, 2)
    assert same(column(out, "mean", 2), [nan, 1.0, 1.0, 3.0])


@grade("each row's stats must come from the last w strictly earlier rows of its entity",
       "window", timeout=60)
def test_matches_definition(impl):
    matches_definition(impl, count_cases())


@grade("a row's features must equal those computed from only the rows up to its time",
       "leakage", timeout=60)
def test_point_in_time(impl):
    point_in_time(impl, count_cases())


@grade("changing or deleting later rows must not change earlier features", "leakage",
       timeout=60)
def test_later_rows_do_not_matter(impl):
    later_rows_do_not_matter(impl, count_cases())


@grade("results must match pandas' groupby().rolling(closed='left') on sorted, tie-free data",
       "window", timeout=60)
def test_matches_pandas(impl):
    first_call(impl)

    @settings(max_examples=20)
    @given(tie_free_frames(pd.Timedelta(days=1)), count_windows, st.data())
    def check(df, window, data):
        min_periods = data.draw(st.integers(1, window))
        assert_frames_close(features(impl, df, window, min_periods=min_periods),
                            with_pandas(df, window, min_periods))
    check()
