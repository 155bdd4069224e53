"""Kata rolling_feature_leakage: point-in-time rolling features, and a leakage detector.

Read the prompt with `kata show rolling_feature_leakage`, then grade with
`pytest katas/rolling_feature_leakage` (or `kata grade rolling_feature_leakage`). pandas and NumPy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd


def rolling_features(df: pd.DataFrame, *, entity: str, time: str, value: str,
                     window: int | str, stats: Sequence[str] = ("mean", "std", "min", "max"),
                     min_periods: int = 1) -> pd.DataFrame:
    """Per-row stats of `value` over earlier rows of the same `entity`, never the row itself.

    - `window` an int w >= 1: the last w rows of the entity whose time is strictly earlier than
      the row's (among equal timestamps, the row later in df counts as later).
    - `window` a fixed-duration offset string ("7D", "12h", "90min"): the entity's rows with time
      in [t - window, t). Calendar offsets (month ends, business days) are rejected.
    - stats from "mean", "std" (sample, ddof=1), "min", "max"; one float column per stat, in the
      order of `stats`, named f"{value}_{stat}_{window}".
    - Missing values are skipped and do not count toward `min_periods`; fewer usable rows than
      `min_periods` give NaN.

    Returns a new DataFrame with df's index, rows in df's order. df is never modified.
    Raises ValueError for bad input (see the prompt for the list).
    """
    raise NotImplementedError


def find_leaky_columns(build_features: Callable[[pd.DataFrame], pd.DataFrame], df: pd.DataFrame,
                       *, time: str, keys: Sequence[str] = (), seed: int = 0) -> list[str]:
    """The output columns of `build_features` that break the point-in-time contract, in order.

    A feature of row r may use r's time, r's `keys` and rows with a strictly earlier time.
    For several cut times: give every column except `time` and `keys` new values in the rows at
    or after the cut, delete some of those rows, run `build_features` again, and flag each
    column whose value changed for a remaining row at or before the cut (NaN equals NaN).
    `build_features(df)` returns a DataFrame aligned to its input by index label.

    Deterministic for a given `seed`. Raises ValueError for a missing `time` or key column and
    when `build_features` returns a different set of index labels.
    """
    raise NotImplementedError
