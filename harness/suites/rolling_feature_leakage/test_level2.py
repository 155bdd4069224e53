"""Level 2: time windows, time zones, bad input and scale."""

import functools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.marks import level

from .oracle import (
    START,
    STATS,
    assert_frames_close,
    column,
    expected,
    features,
    first_call,
    frames,
    same,
    tie_free_frames,
    time_windows,
    with_pandas,
)
from .properties import later_rows_do_not_matter, matches_definition, point_in_time

grade = level(2)


@st.composite
def time_cases(draw):
    return draw(frames()), draw(time_windows), draw(st.integers(1, 3))


def at_hours(rows, tz=None):
    """rows of (entity, hours after START, amount)."""
    ents, hours, amounts = zip(*rows, strict=True)
    times = pd.DatetimeIndex([START + pd.Timedelta(hours=h) for h in hours])
    return pd.DataFrame({"entity": list(ents), "time": times if tz is None else
                         times.tz_localize(tz), "amount": [float(a) for a in amounts]})


nan = math.nan


@grade("a time window must hold the rows in [t - window, t)", "boundaries", timeout=5)
def test_window_edges(impl):
    df = at_hours([("a", 0, 1), ("a", 12, 2), ("a", 24, 4), ("a", 24, 8), ("a", 36, 16)])
    out = features(impl, df, "1D")
    assert same(column(out, "mean", "1D"), [nan, 1.0, 1.5, 1.5, 14 / 3])
    assert same(column(out, "max", "1D"), [nan, 1.0, 2.0, 2.0, 8.0])


@grade("a row exactly one window earlier must be inside the time window", "boundaries",
       timeout=5)
def test_left_edge_is_in(impl):
    out = features(impl, at_hours([("a", 0, 1), ("a", 24, 2)]), "1D")
    assert same(column(out, "mean", "1D"), [nan, 1.0])


@grade("rows at time t must be outside the time window of a row at t", "boundaries", timeout=5)
def test_rows_at_t_are_out(impl):
    out = features(impl, at_hours([("a", 0, 1), ("a", 12, 2), ("a", 12, 4)]), "1D")
    assert same(column(out, "mean", "1D"), [nan, 1.0, 1.0])


@grade("time-window columns must be named with the window string as given", "output",
       timeout=5)
def test_time_window_names(impl):
    df = at_hours([("a", 0, 1), ("a", 1, 2)])
    for window in ("12h", "90min", "7D", "1D2h"):
        out = features(impl, df, window, stats=("min", "std"))
        assert list(out.columns) == [f"amount_min_{window}", f"amount_std_{window}"]


@grade("compound offsets such as '1D2h' must give windows of their whole duration", "window",
       timeout=5)
def test_compound_offset(impl):
    df = at_hours([("a", h, h) for h in (0, 1, 2, 3, 4, 5, 27, 28, 30)])
    assert_frames_close(features(impl, df, "1D2h"), expected(df, "1D2h"))


@grade("time windows must skip missing values and honour min_periods", "missing", timeout=5)
def test_time_window_min_periods(impl):
    df = at_hours([("a", 0, 3), ("a", 6, nan), ("a", 12, 5), ("b", 13, 100), ("a", 18, 0)])
    out = features(impl, df, "18h", min_periods=2)
    assert same(column(out, "mean", "18h"), [nan, nan, nan, nan, 4.0])
    assert same(column(out, "std", "18h"), [nan, nan, nan, nan, math.sqrt(2)])


@grade("each row's stats must come from its entity's rows in [t - window, t)", "window",
       timeout=60)
def test_matches_definition(impl):
    matches_definition(impl, time_cases())


@grade("a row's time-window features must equal those computed from the rows up to its time",
       "leakage", timeout=60)
def test_point_in_time(impl):
    point_in_time(impl, time_cases())


@grade("changing or deleting later rows must not change earlier time-window features",
       "leakage", timeout=60)
def test_later_rows_do_not_matter(impl):
    later_rows_do_not_matter(impl, time_cases())


@grade("time windows must match pandas' groupby().rolling(closed='left') on sorted, tie-free "
       "data", "window", timeout=60)
def test_matches_pandas(impl):
    first_call(impl)

    @settings(max_examples=20)
    @given(tie_free_frames(pd.Timedelta(hours=1)),
           st.sampled_from(["1D", "36h", "3D", "90min"]), st.integers(1, 3))
    def check(df, window, min_periods):
        assert_frames_close(features(impl, df, window, min_periods=min_periods),
                            with_pandas(df, window, min_periods))
    check()


@grade("time-zone-aware timestamps must give the same windows as the same instants in UTC",
       "timezones", timeout=5)
def test_time_zone_aware(impl):
    rows = [("a", h, h % 7) for h in range(0, 90, 5)] + [("b", h, h % 5) for h in range(3, 90, 9)]
    naive = at_hours(rows)
    naive["time"] += pd.Timedelta(days=67)  # around 2024-03-10, New York's change to summer time
    aware = naive.assign(time=naive["time"].dt.tz_localize("UTC").dt.tz_convert(
        "America/New_York"))
    for window in ("1D", "7h"):
        assert_frames_close(features(impl, aware, window), expected(naive, window))


@grade("a day-long window must be 24 hours across a daylight-saving change", "timezones",
       timeout=5)
def test_daylight_saving(impl):
    ny = "America/New_York"
    times = pd.to_datetime(["2024-03-09 12:00", "2024-03-10 12:30",  # spring forward
                            "2024-11-02 12:00", "2024-11-03 11:30"]).tz_localize(ny)
    df = pd.DataFrame({"entity": ["s", "s", "f", "f"], "time": times,
                       "amount": [1.0, 2.0, 3.0, 4.0]})
    # 2024-03-10 12:30 EDT is 23.5 hours after 2024-03-09 12:00 EST: inside one day;
    # 2024-11-03 11:30 EST is 24.5 hours after 2024-11-02 12:00 EDT: outside it.
    assert same(column(features(impl, df, "1D"), "mean", "1D"), [nan, 1.0, nan, nan])


def _df():
    return at_hours([("a", 0, 1), ("b", 5, 2), ("a", 30, 3)])


def _with(**changes):
    df = _df()
    for name, values in changes.items():
        df[name] = values
    return df


BAD_INPUT = [
    ("a missing entity column", _df().drop(columns="entity"), {"window": 2}),
    ("a missing time column", _df().drop(columns="time"), {"window": "1D"}),
    ("a missing value column", _df().drop(columns="amount"), {"window": 2}),
    ("a missing time value (int window)", _with(time=[START, pd.NaT, START]), {"window": 2}),
    ("a missing time value (time window)", _with(time=[START, pd.NaT, START]),
     {"window": "1D"}),
    ("integer times with a time window", _with(time=[1, 2, 3]), {"window": "1D"}),
    ("string times with a time window", _with(time=["2024-01-01"] * 3), {"window": "2h"}),
    ("a non-numeric value column", _with(amount=["1", "2", "3"]), {"window": 2}),
    ("an unknown stat", _df(), {"window": 2, "stats": ("mean", "median")}),
    ("window = 0", _df(), {"window": 0}),
    ("a negative window", _df(), {"window": -3}),
    ("min_periods = 0", _df(), {"window": 2, "min_periods": 0}),
    ("min_periods = 0 with a time window", _df(), {"window": "1D", "min_periods": 0}),
    ("a negative min_periods", _df(), {"window": "1D", "min_periods": -1}),
    ("an unparseable window", _df(), {"window": "soon"}),
    ("a unit-less window '7'", _df(), {"window": "7"}),
    ("a month-end window", _df(), {"window": "1ME"}),
    ("a month-start window", _df(), {"window": "MS"}),
    ("a business-day window", _df(), {"window": "3B"}),
    ("a year-end window", _df(), {"window": "1YE"}),
    ("a zero-length window", _df(), {"window": "0D"}),
    ("a zero-length window in hours", _df(), {"window": "0h"}),
    ("a negative window duration", _df(), {"window": "-1D"}),
]


def bad_call(impl, df, kwargs):
    kwargs = {"stats": STATS, "min_periods": 1, **kwargs}
    impl.rolling_features(df, entity="entity", time="time", value="amount", **kwargs)


@pytest.mark.parametrize(
    "df, kwargs",
    [pytest.param(df, kw, id=what, marks=grade(f"{what} must raise ValueError", "errors",
                                               timeout=5))
     for what, df, kw in BAD_INPUT])
def test_bad_input(impl, df, kwargs):
    with pytest.raises(ValueError):
        bad_call(impl, df, kwargs)


@grade("a ValueError must say what is wrong", "errors", timeout=5)
@pytest.mark.parametrize("df, kwargs", [c[1:] for c in BAD_INPUT], ids=[c[0] for c in BAD_INPUT])
def test_error_messages(impl, df, kwargs):
    try:
        bad_call(impl, df, kwargs)
    except ValueError as exc:
        assert str(exc).strip(), "the ValueError has no message"


@grade("the shortest positive window, '1ns', must be accepted", "errors", timeout=5)
def test_one_nanosecond_window(impl):
    out = features(impl, _df(), "1ns")
    assert len(out) == 3 and out.isna().all().all()  # no earlier row is within 1 ns


@grade("df must be accepted as a keyword argument", "inputs", timeout=5)
def test_df_by_name(impl):
    out = impl.rolling_features(df=_df(), entity="entity", time="time", value="amount",
                                window="1D", stats=STATS, min_periods=1)
    assert_frames_close(out, expected(_df(), "1D"))


def scale_frame():
    rng = np.random.default_rng(3)
    n = 300_000
    return pd.DataFrame({"entity": rng.integers(0, 1000, n),
                         "time": START + pd.to_timedelta(rng.integers(0, 90 * 24, n), unit="h"),
                         "amount": rng.normal(size=n)})


@functools.cache
def scale_features(fn) -> dict:
    """rolling_features on scale_frame() for a count and a time window."""
    df = scale_frame()
    return {window: fn(df, entity="entity", time="time", value="amount", window=window,
                       stats=STATS, min_periods=1) for window in (5, "3D")}


@grade("300,000 rows must take seconds, for a count and a time window (no loop over rows)",
       "scale", timeout=40)
def test_scale(impl):
    assert all(out.shape == (300_000, 4) for out in scale_features(impl.rolling_features).values())


@grade("300,000 rows must give every row its own entity's window", "window", timeout=40)
def test_scale_correct(impl):
    df = scale_frame()
    for window, out in scale_features(impl.rolling_features).items():
        for label in df.index[:: len(df) // 5]:  # spot checks against the definition
            own = df[df["entity"] == df.loc[label, "entity"]]
            want = expected(own, window, rows=[own.index.get_loc(label)]).to_numpy()
            assert np.allclose(out.loc[[label]].to_numpy(), want, equal_nan=True)
