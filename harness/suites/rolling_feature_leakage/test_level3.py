"""Level 3: find_leaky_columns, a detector for feature pipelines that look into the future."""

import numpy as np
import pandas as pd
import pytest

from harness.marks import level

from .copies import record
from .pipelines import (
    CLEAN,
    KEYS,
    LEAKY,
    TYPED_CLEAN,
    TYPED_LEAKY,
    event_log,
    label_first,
    own_value,
    point_in_time_mean,
    typed_log,
)

grade = level(3)


DF = event_log()
TYPED = typed_log()  # the same events with columns of every dtype

# Which part of the method each leak needs: rows at the cut perturbed and compared ("cut"),
# rows deleted ("drop"), or just a look at the past after changing the future ("detect").
LEAK_HINTS = {
    "a rolling mean that includes the row itself": "cut",
    "shift(1) that lets same-timestamp rows see each other": "cut",
    "a copy of the row's own target": "cut",
    "a time window closed on the right": "cut",
    "the time until the entity's next event": "drop",
    "the entity's total row count": "drop",
    "the leaky columns of a mixed pipeline": "output",
    "the own text value of an entity that always has the smaller one": "change",
    "the own text value of an entity that always has the larger one": "change",
    "the own note where it is x, missing elsewhere": "change",
}


def detect(impl, pipeline, df=DF, **kw):
    return impl.find_leaky_columns(pipeline, df, time="time", keys=KEYS, **kw)


@pytest.mark.parametrize(
    "pipeline, leaky, df",
    [pytest.param(fn, leaky, df, id=fn.__name__,
                  marks=grade(f"{name} must be flagged", LEAK_HINTS.get(name, "detect"),
                              timeout=20))
     for catalogue, df in ((LEAKY, DF), (TYPED_LEAKY, TYPED)) for name, fn, leaky in catalogue])
def test_flags_leaky_pipeline(impl, pipeline, leaky, df):
    assert detect(impl, pipeline, df) == leaky


@pytest.mark.parametrize(
    "pipeline, df",
    [pytest.param(fn, df, id=fn.__name__, marks=grade(f"{name} must not be flagged", "clean",
                                                      timeout=20))
     for catalogue, df in ((CLEAN, DF), (TYPED_CLEAN, TYPED)) for name, fn in catalogue])
def test_leaves_clean_pipeline(impl, pipeline, df):
    assert detect(impl, pipeline, df) == []


def copies(impl):
    """Every changed copy of TYPED that the detector passes to build_features, read back."""
    found = [c for c in record(impl, TYPED, point_in_time_mean, time="time", keys=KEYS) if c]
    assert found, ("find_leaky_columns(...) called build_features with df itself only; "
                   "expected changed copies too")
    return found


@grade("every value at or after a cut must change, in columns of every dtype, missing ones too",
       "change", timeout=20)
def test_copies_change_every_later_value(impl):
    stayed = [line for copy in copies(impl) for line in copy.stayed]
    assert not stayed, "\n".join(stayed[:5])


@grade("a changed copy must keep each column's kind of values (numbers, booleans, categories, "
       "dates, text)", "change", timeout=20)
def test_copies_keep_kinds_of_values(impl):
    retyped = [line for copy in copies(impl) for line in copy.retyped]
    assert not retyped, "\n".join(retyped[:5])


@grade("build_features must be called on df itself once", "detect", timeout=20)
def test_called_on_df_once(impl):
    calls = record(impl, TYPED, point_in_time_mean, time="time", keys=KEYS)
    assert calls.count(None) == 1, (
        f"{calls.count(None)} of the {len(calls)} calls of build_features got df itself")


@grade("a changed copy must keep its time and key columns as they were", "clean", timeout=20)
def test_copies_keep_time_and_keys(impl):
    moved = [line for copy in copies(impl) for line in copy.moved]
    assert not moved, "\n".join(moved[:5])


@grade("the cuts must be at least 5 timestamps of df, its first and last among them", "cut",
       timeout=20)
def test_cuts_cover_first_and_last(impl):
    cuts = sorted({copy.cut for copy in copies(impl)})
    first, last = TYPED["time"].min(), TYPED["time"].max()
    assert len(cuts) >= 5 and first in cuts and last in cuts, (
        f"cuts read from the changed copies: {[str(c) for c in cuts]}; expected at least 5, "
        f"{first} and {last} among them")


@grade("the cuts must be spread over df's timestamps: no stretch of half of them without one",
       "cut", timeout=20)
def test_cuts_spread(impl):
    times = np.sort(TYPED["time"].unique())
    ranks = sorted({int(np.searchsorted(times, copy.cut)) for copy in copies(impl)})
    between = np.diff([-1, *ranks, len(times)]) - 1  # timestamps between two cuts, or an end
    assert between.max() < len(times) / 2, (
        f"cuts at positions {ranks} of {len(times)} distinct timestamps")


@grade("about half of the rows at or after a cut must be deleted", "drop", timeout=20)
def test_about_half_deleted(impl):
    found = copies(impl)
    later = sum(copy.at_or_after for copy in found)
    deleted = later - sum(copy.kept for copy in found)
    # Summed over all cuts (hundreds of rows), a fair coin stays far inside these bounds.
    assert 0.3 <= deleted / later <= 0.7, (
        f"{deleted} of the {later} rows at or after the cuts were deleted; expected about half")


@grade("the detector must work whatever the time column is called, arguments given by name",
       "detect", timeout=20)
def test_renamed_time_column(impl):
    # "date" sorts before the other columns, and a name built at run time is a new str object.
    name = "".join(["da", "te"])
    df = DF.rename(columns={"time": "date"})

    def renamed(pipeline):
        return lambda d: pipeline(d.rename(columns={"date": "time"}))

    for pipeline, leaky in ((own_value, ["label"]), (point_in_time_mean, [])):
        assert impl.find_leaky_columns(build_features=renamed(pipeline), df=df, time=name,
                                       keys=KEYS) == leaky


@grade("leaky columns must come back in the order build_features returns them", "output",
       timeout=20)
def test_order_of_leaky_columns(impl):
    assert detect(impl, label_first) == ["label", "amount_centered_3"]


@grade("keys must default to none: every column but time is then changed", "detect",
       timeout=20)
def test_keys_default(impl):
    def of_keys(df):  # reads the keys as they are: a changed entity may be any new text
        return pd.DataFrame({"is_web": df["category"] == "web",
                             "entity_web": df["entity"] + "/" + df["category"]})
    assert impl.find_leaky_columns(of_keys, DF, time="time") == ["is_web", "entity_web"]


@grade("the detector must leave NumPy's global random state as it was", "seed", timeout=20)
def test_global_random_state_untouched(impl):
    np.random.seed(11)
    expected = np.random.random()
    np.random.seed(11)
    detect(impl, point_in_time_mean)
    assert np.random.random() == expected


@grade("the same seed must give the same result, whatever the global random state", "seed",
       timeout=20)
def test_deterministic(impl):
    def run():
        seen = []

        def recording(df):
            seen.append(int(pd.util.hash_pandas_object(df).sum()))
            return point_in_time_mean(df)
        return detect(impl, recording, seed=5), seen

    np.random.seed(1)
    first = run()
    np.random.seed(2)
    assert run() == first


@grade("a missing time column must raise ValueError", "errors", timeout=10)
def test_missing_time(impl):
    with pytest.raises(ValueError):
        impl.find_leaky_columns(own_value, DF, time="when", keys=KEYS)


@grade("a missing key column must raise ValueError", "errors", timeout=10)
def test_missing_key(impl):
    with pytest.raises(ValueError):
        impl.find_leaky_columns(own_value, DF, time="time", keys=("entity", "country"))


BAD_OUTPUT = [
    ("one row fewer", lambda df: own_value(df).iloc[1:]),
    ("a reset index", lambda df: own_value(df).reset_index(drop=True)),
    ("an extra row", lambda df: pd.concat([own_value(df),
                                           pd.DataFrame({"label": [0]}, index=[-1])])),
]


@pytest.mark.parametrize(
    "pipeline",
    [pytest.param(fn, id=what, marks=grade(f"a pipeline returning {what} must raise ValueError",
                                           "errors", timeout=10))
     for what, fn in BAD_OUTPUT])
def test_different_index_labels(impl, pipeline):
    with pytest.raises(ValueError):
        detect(impl, pipeline)


@grade("the detector must not modify df", "inputs", timeout=20)
def test_df_untouched(impl):
    df = DF.copy()
    detect(impl, own_value, df=df)
    pd.testing.assert_frame_equal(df, DF)
