"""The changed copies a detector hands to `build_features`, read back against the original frame.

The prompt pins what a copy looks like: rows before the cut untouched and all kept; in the rows at
or after it, time and keys as they were and every other column changed wherever that column holds
more than one distinct value in df; about half of those rows deleted. The cut is read from the
copy as the earliest time of a row that was changed or deleted, so the rows before it are as they
were by construction; what is left to check is everything at or after it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from pandas.api.types import is_bool_dtype, is_datetime64_any_dtype, is_numeric_dtype


def kind(column: pd.Series) -> str:
    """The kind of values a column holds, as a pipeline reads them."""
    if is_bool_dtype(column):
        return "booleans"
    if isinstance(column.dtype, pd.CategoricalDtype):
        return "categories"
    if is_datetime64_any_dtype(column):
        return "dates"
    return "numbers" if is_numeric_dtype(column) else "text"


def differs(old: pd.Series, new: pd.Series) -> np.ndarray:
    """Per row: is the value different? NaN equals NaN, and 3 equals 3.0."""
    o, n = old.astype(object).to_numpy(), new.astype(object).to_numpy()
    missing_o, missing_n = pd.isna(o), pd.isna(n)
    equal = np.array([bool(a == b) for a, b in zip(o, n, strict=True)], dtype=bool)
    return ~((missing_o & missing_n) | (~missing_o & ~missing_n & equal))


@dataclass
class Copy:
    """One call's frame, compared with df by index label."""

    number: int  # which call of build_features, counting from 1
    cut: pd.Timestamp
    at_or_after: int  # rows of df at or after the cut
    kept: int  # of those, rows still in the copy
    moved: list[str]  # time or key values that changed: none may
    stayed: list[str]  # values at or after the cut that did not change: none may
    retyped: list[str]  # columns whose kind of values changed: none may


def read_copy(df: pd.DataFrame, copy: pd.DataFrame, number: int, time: str,
              keys: tuple[str, ...]) -> Copy | None:
    """What `copy` did to `df`, or None when it is df itself (same labels, nothing changed)."""
    assert set(copy.columns) == set(df.columns) and set(copy.index) <= set(df.index), (
        f"call {number} of build_features got columns {list(copy.columns)} and {len(copy)} rows; "
        f"expected the columns of df {list(df.columns)} and a subset of its index labels")
    kept = df.index.isin(copy.index)
    shared = df.loc[kept]
    other = copy.loc[shared.index]
    varied = [c for c in df.columns if c != time and c not in keys and df[c].nunique() > 1]
    change = {c: differs(shared[c], other[c]) for c in df.columns}
    touched = np.zeros(len(df), dtype=bool)
    touched[~kept] = True
    touched[kept] = np.any(list(change.values()), axis=0)
    if not touched.any():
        return None
    cut = df[time][touched].min()
    after = (df[time] >= cut).to_numpy()
    moved, stayed = [], []
    for c in (time, *keys):
        rows = shared.index[change[c]]
        if len(rows):
            moved.append(f"call {number} (cut {cut}) changed {c!r}, which must stay as it was: "
                         f"index {rows[0]}, {shared.at[rows[0], c]!r} -> "
                         f"{other.at[rows[0], c]!r}")
    late = after[kept]  # the kept rows at or after the cut
    for c in varied:
        rows = shared.index[late & ~change[c]]
        if len(rows):
            stayed.append(f"call {number} (cut {cut}) left {c!r} ({df[c].dtype}) as it was at "
                          f"index {rows[0]}: {shared.at[rows[0], c]!r}; every row at or after "
                          "the cut needs a different value")
    retyped = [f"call {number} (cut {cut}) turned {c!r} from {kind(df[c])} into "
               f"{kind(copy[c])}" for c in df.columns if kind(copy[c]) != kind(df[c])]
    return Copy(number, cut, int(after.sum()), int((after & kept).sum()), moved, stayed,
                retyped)


def record(impl, df: pd.DataFrame, pipeline, *, time: str,
           keys: tuple[str, ...]) -> list[Copy | None]:
    """Runs the detector with a pipeline that keeps every frame it is given; reads each back,
    in the order of the calls (None for a call on df itself)."""
    frames = []

    def recording(frame):
        frames.append(frame.copy(deep=True))
        return pipeline(frame)

    impl.find_leaky_columns(recording, df, time=time, keys=keys)
    return [read_copy(df, f, n, time, keys) for n, f in enumerate(frames, 1)]
