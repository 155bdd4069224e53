"""The definitions the hidden suite compares against, written as plainly as possible, and the
random frames they run on."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from hypothesis import strategies as st

STATS = ("mean", "std", "min", "max")
START = pd.Timestamp("2024-01-01")
STEP = pd.Timedelta("12h")  # random timestamps are multiples of 12 hours: many ties, exact edges


def summary(values: list[float], stats, min_periods: int) -> list[float]:
    """The stats of one window's usable (non-missing) values, NaN below min_periods."""
    values = [v for v in values if not math.isnan(v)]
    if len(values) < min_periods or not values:
        return [math.nan] * len(stats)
    mean = math.fsum(values) / len(values)
    std = (math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1))
           if len(values) > 1 else math.nan)
    by_name = {"mean": mean, "std": std, "min": min(values), "max": max(values)}
    return [by_name[s] for s in stats]


def brute_force(df: pd.DataFrame, *, entity: str, time: str, value: str, window,
                stats=STATS, min_periods: int = 1, rows=None) -> pd.DataFrame:
    """Row by row (all rows, or the positions in `rows`): the earlier rows of the entity,
    ordered by (time, position in df), then the last `window` of them or those in
    [t - window, t)."""
    ents, times = list(df[entity]), list(df[time])
    vals = [math.nan if pd.isna(v) else float(v) for v in df[value]]
    width = None if isinstance(window, int) else pd.Timedelta(window)
    rows = range(len(df)) if rows is None else rows
    out = []
    for r in rows:
        earlier = sorted((j for j in range(len(df))
                          if ents[j] == ents[r] and times[j] < times[r]),
                         key=lambda j: (times[j], j))
        if width is None:
            earlier = earlier[-window:]
        else:
            earlier = [j for j in earlier if times[j] >= times[r] - width]
        out.append(summary([vals[j] for j in earlier], stats, min_periods))
    columns = [f"{value}_{s}_{window}" for s in stats]
    return pd.DataFrame(out, index=df.index[list(rows)], columns=columns, dtype="float64")


def assert_frames_close(got: pd.DataFrame, expected: pd.DataFrame) -> None:
    """Same columns, same index in the same order, values equal up to rounding (NaN == NaN)."""
    assert isinstance(got, pd.DataFrame), f"expected a DataFrame, got {type(got).__name__}"
    assert list(got.columns) == list(expected.columns), \
        f"columns {list(got.columns)}, expected {list(expected.columns)}"
    assert list(got.index) == list(expected.index), "the index (or its order) differs from df's"
    a = got.to_numpy(dtype=np.float64, na_value=np.nan)
    b = expected.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isclose(a, b, rtol=1e-7, atol=1e-9, equal_nan=True)
    assert not bad.any(), (f"first mismatch at row {expected.index[np.argwhere(bad)[0][0]]!r}: "
                           f"got {a[bad][0]}, expected {b[bad][0]}")


values = st.one_of(st.integers(-20, 20).map(float), st.just(math.nan))
clean_values = st.integers(-20, 20).map(float)


@st.composite
def frames(draw, max_rows: int = 18, nan: bool = True, entities=("a", "b", "c"),
           max_steps: int = 10):
    """A shuffled frame with entity, time (multiples of 12 hours, ties likely), amount (with
    NaN when `nan`) and a non-default index."""
    n = draw(st.integers(1, max_rows))
    ents = draw(st.lists(st.sampled_from(entities), min_size=n, max_size=n))
    steps = draw(st.lists(st.integers(0, max_steps), min_size=n, max_size=n))
    amounts = draw(st.lists(values if nan else clean_values, min_size=n, max_size=n))
    labels = draw(st.permutations(range(100, 100 + n)))
    times = pd.DatetimeIndex([START + k * STEP for k in steps])
    return pd.DataFrame({"entity": ents, "time": times, "amount": amounts},
                        index=pd.Index(labels, name="row"))


count_windows = st.integers(1, 4)
time_windows = st.sampled_from(["12h", "1D", "36h", "2D", "3D", "90min", "5D"])


def features(impl, df: pd.DataFrame, window, *, stats=STATS, min_periods: int = 1, **columns):
    """impl.rolling_features on the suite's usual column names."""
    names = {"entity": "entity", "time": "time", "value": "amount", **columns}
    return impl.rolling_features(df, window=window, stats=stats, min_periods=min_periods, **names)


def expected(df: pd.DataFrame, window, *, stats=STATS, min_periods: int = 1,
             rows=None) -> pd.DataFrame:
    return brute_force(df, entity="entity", time="time", value="amount", window=window,
                       stats=stats, min_periods=min_periods, rows=rows)


def later_rows_changed(df: pd.DataFrame, cut, new_values: list[float], keep: list[bool]):
    """df with every row later than `cut` given a new amount, then some of those rows dropped."""
    later = (df["time"] > cut).to_numpy()
    changed = df.copy()
    changed.loc[later, "amount"] = new_values[: int(later.sum())]
    drop = later & ~np.resize(np.array(keep or [True], dtype=bool), len(df))
    return changed[~drop]


@st.composite
def tie_free_frames(draw, unit: pd.Timedelta, max_rows: int = 30):
    """Frames on which this kata and pandas agree: sorted by time, no two rows at one time."""
    steps = sorted(draw(st.lists(st.integers(0, 200), min_size=1, max_size=max_rows,
                                 unique=True)))
    n = len(steps)
    amounts = draw(st.lists(st.one_of(st.integers(-2000, 2000).map(lambda v: v / 100),
                                      st.just(math.nan)), min_size=n, max_size=n))
    return pd.DataFrame({"entity": draw(st.lists(st.sampled_from(["x", "y"]), min_size=n,
                                                  max_size=n)),
                         "time": pd.DatetimeIndex([START + k * unit for k in steps]),
                         "amount": amounts},
                        index=pd.Index(draw(st.permutations(range(10, 10 + n)))))


def with_pandas(df: pd.DataFrame, window, min_periods: int) -> pd.DataFrame:
    """pandas' groupby().rolling(closed='left'), put back in df's order."""
    if isinstance(window, int):
        rolling = df.groupby("entity")["amount"].rolling(window, closed="left",
                                                         min_periods=min_periods)
        return pd.DataFrame({f"amount_{s}_{window}": getattr(rolling, s)().droplevel(0)
                             for s in STATS}).reindex(df.index)
    rolling = df.groupby("entity").rolling(window, on="time", closed="left",
                                           min_periods=min_periods)["amount"]
    # With `on=`, pandas indexes the result by time; every time is distinct here.
    return pd.DataFrame({f"amount_{s}_{window}": getattr(rolling, s)().droplevel(0)
                         .reindex(df["time"]).to_numpy() for s in STATS}, index=df.index)


def first_call(impl) -> None:
    """One plain call before a property's search: an unfinished implementation fails here at
    once, instead of after a long search for the smallest failing frame."""
    df = pd.DataFrame({"entity": ["a", "a"], "time": pd.DatetimeIndex([START, START + STEP]),
                       "amount": [1.0, 2.0]})
    features(impl, df, 1)


def column(out, stat, window) -> list:
    """One feature column of build_features' output, as a list."""
    return out[f"amount_{stat}_{window}"].tolist()


def same(a, b) -> bool:
    """Equal lists of floats, NaN equal to NaN."""
    return len(a) == len(b) and all(
        (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)
        for x, y in zip(a, b, strict=True))
