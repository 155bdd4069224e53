"""Windows that ignore the entity, so one entity's rows feed another's features.

Mutant of the rolling_feature_leakage reference; everything else is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from pandas.api.indexers import BaseIndexer
from pandas.api.types import (
    is_bool_dtype,
    is_datetime64_any_dtype,
    is_integer_dtype,
    is_numeric_dtype,
)

STATS = ("mean", "std", "min", "max")  # std is the sample std (ddof=1), as in pandas
CUTS = 8  # cut times the detector tries, spread over the distinct timestamps


class Bounds(BaseIndexer):
    """Hands precomputed [start, end) row bounds to pandas' rolling kernels."""

    def get_window_bounds(self, num_values=0, min_periods=None, center=None, closed=None,
                          step=None) -> tuple[np.ndarray, np.ndarray]:
        return self.start, self.end


def _duration(window: str) -> pd.Timedelta:
    """A fixed duration from an offset string: "7D", "12h", "90min"; no month ends or weeks."""
    try:
        offset = pd.tseries.frequencies.to_offset(window)
    except ValueError as exc:
        raise ValueError(f"window {window!r} is not a pandas offset such as '7D' or '12h'") from exc
    if not isinstance(offset, pd.offsets.Tick | pd.offsets.Day):
        raise ValueError(f"window {window!r} is a calendar offset; expected a fixed duration "
                         "such as '7D', '12h' or '90min'")
    duration = pd.Timedelta(offset)
    if duration <= pd.Timedelta(0):
        raise ValueError(f"window {window!r} must be a positive duration")
    return duration


def _validate(df, entity, time, value, window, stats, min_periods) -> pd.Timedelta | None:
    """Check the arguments; return the window's duration, or None for a count window."""
    missing = [c for c in (entity, time, value) if c not in df.columns]
    if missing:
        raise ValueError(f"df has no column(s) {missing}; it has {list(df.columns)}")
    unknown = [s for s in stats if s not in STATS]
    if unknown:
        raise ValueError(f"unknown stat(s) {unknown}; expected some of {STATS}")
    if isinstance(min_periods, bool) or not isinstance(min_periods, int | np.integer) \
            or min_periods < 1:
        raise ValueError(f"min_periods must be an int >= 1, got {min_periods!r}")
    if not is_numeric_dtype(df[value]):
        raise ValueError(f"value column {value!r} must be numeric, got dtype {df[value].dtype}")
    if df[time].isna().any():
        raise ValueError(f"time column {time!r} has missing values")
    if isinstance(window, bool) or not isinstance(window, int | np.integer | str):
        raise TypeError(f"window must be an int (rows) or an offset string, got {window!r}")
    if not isinstance(window, str):
        if window < 1:
            raise ValueError(f"a count window must be >= 1, got {window}")
        return None
    duration = _duration(window)
    if not is_datetime64_any_dtype(df[time]):
        raise ValueError(f"a time window needs datetime values in {time!r}, "
                         f"got dtype {df[time].dtype}")
    return duration


def window_bounds(df: pd.DataFrame, entity: str, time: str, window: int | str,
                  duration: pd.Timedelta | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(order, start, end): the rows sorted by entity and time, ties kept in input order, and
    each sorted row's window as the positions [start, end) in that order."""
    group = np.zeros(len(df), dtype=np.intp)  # every row in one group
    rank, distinct = pd.factorize(df[time], sort=True)  # each timestamp as its rank 0..m-1
    order = np.lexsort((rank, group))  # stable: among equal timestamps, later in df is later
    group, rank = group[order], rank[order]
    # One sortable key per (entity, timestamp): a single searchsorted serves every entity.
    stride = len(distinct) + 1
    key = group * stride + rank
    end = np.searchsorted(key, key)  # the entity's first row at this timestamp
    if duration is None:
        first = np.searchsorted(key, group * stride)  # the entity's first row
        start = np.maximum(first, end - window)  # the last `window` strictly earlier rows
    else:
        lower = distinct - duration  # in the finer of the two units, so nothing is rounded
        earliest = distinct.as_unit(lower.unit).searchsorted(lower)  # first time >= t - window
        start = np.searchsorted(key, group * stride + earliest[rank])
    return order, start, end


def rolling_features(df: pd.DataFrame, *, entity: str, time: str, value: str,
                     window: int | str, stats: Sequence[str] = STATS,
                     min_periods: int = 1) -> pd.DataFrame:
    """Per-row stats of `value` over earlier rows of the same entity; same index and order as df.

    An int window takes the last `window` rows of the entity with a strictly earlier time; an
    offset string such as "7D" takes the rows with time in [t - window, t). Missing values are
    skipped and do not count toward `min_periods`; too few usable rows give NaN.
    """
    stats = tuple(stats)
    duration = _validate(df, entity, time, value, window, stats, min_periods)
    order, start, end = window_bounds(df, entity, time, window, duration)
    values = df[value].to_numpy(dtype=np.float64, na_value=np.nan)[order]
    rolling = pd.Series(values).rolling(Bounds(start=start, end=end), min_periods=min_periods)
    out = {}
    for stat in stats:
        out[f"{value}_{stat}_{window}"] = column = np.empty(len(df))
        column[order] = getattr(rolling, stat)().to_numpy()  # back to the input order
    return pd.DataFrame(out, index=df.index)


# ----- Level 3: the leakage detector -----

def _perturbed(column: pd.Series, rng: np.random.Generator) -> pd.Series:
    """New values of the column's dtype, each different from the row's own where possible."""
    n = len(column)
    if is_numeric_dtype(column) and not is_bool_dtype(column):
        # Moved by 1-2 times the column's range, either way, so new extremes appear as well.
        lo, hi = column.min(), column.max()
        span = float(hi - lo) if pd.notna(lo) and hi > lo else 1.0
        step = rng.uniform(1.0, 2.0, n) * span * rng.choice([-1.0, 1.0], n)
        moved = column.astype("float64").fillna(0.0 if pd.isna(lo) else float(lo)) + step
        return moved.round().astype(column.dtype) if is_integer_dtype(column) else moved
    # Anything else (bool, strings, categories, dates): another of the column's own values.
    codes, uniques = pd.factorize(column)
    if len(uniques) < 2:
        return column
    other = (np.maximum(codes, 0) + rng.integers(1, len(uniques), n)) % len(uniques)
    return pd.Series(uniques.take(other), index=column.index)


def _features(build_features: Callable, df: pd.DataFrame) -> pd.DataFrame:
    out = build_features(df.copy())  # the pipeline may modify its input; ours stays as it was
    if set(out.index) != set(df.index):
        raise ValueError("build_features must return one row per input row, aligned by index "
                         f"label; got {len(out)} rows for {len(df)} input rows")
    return out


def _same(a: pd.Series, b: pd.Series) -> bool:
    """Equal, with NaN equal to NaN (and floats compared up to rounding noise)."""
    if is_numeric_dtype(a) and is_numeric_dtype(b):
        a = a.to_numpy(dtype=np.float64, na_value=np.nan)
        b = b.to_numpy(dtype=np.float64, na_value=np.nan)
        return bool(np.isclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True).all())
    return bool(((a == b) | (a.isna() & b.isna())).all())


def find_leaky_columns(build_features: Callable[[pd.DataFrame], pd.DataFrame], df: pd.DataFrame,
                       *, time: str, keys: Sequence[str] = (), seed: int = 0) -> list[str]:
    """The output columns of `build_features` that use more than the row's time and keys and
    strictly earlier rows: for several cut times, change every other column in the rows at or
    after the cut, delete about half of those rows, and see which features of the remaining rows
    at or before the cut move."""
    missing = [c for c in (time, *keys) if c not in df.columns]
    if missing:
        raise ValueError(f"df has no column(s) {missing}; it has {list(df.columns)}")
    rng = np.random.default_rng(seed)
    before = _features(build_features, df)
    times = pd.Index(df[time].unique()).sort_values()
    cuts = times[np.unique(np.linspace(0, len(times) - 1, CUTS).round().astype(int))]
    free = [c for c in df.columns if c != time and c not in keys]
    leaky: set[str] = set()
    for cut in cuts:
        later = (df[time] >= cut).to_numpy()
        changed = df.copy()
        for column in free:
            changed[column] = df[column].mask(later, _perturbed(df[column], rng))
        changed = changed[~later | (rng.random(len(df)) < 0.5)]
        after = _features(build_features, changed)
        # Rows at the cut were changed too: only their time and keys may stay what they were.
        rows = changed.index[(changed[time] <= cut).to_numpy()]
        for column in before.columns:
            if column not in after.columns or not _same(before.loc[rows, column],
                                                        after.loc[rows, column]):
                leaky.add(column)
    return [c for c in before.columns if c in leaky]
