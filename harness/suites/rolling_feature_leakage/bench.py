"""`kata bench rolling_feature_leakage`: rolling_features against pandas' own
groupby().rolling(closed="left"), on 10^6 events of 1,000 entities, count and "7D" windows."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from harness.bench import Table, pyplot, save_plots

STATS = ("mean", "std", "min", "max")


def events(n: int, entities: int, seed: int = 0) -> pd.DataFrame:
    """n events over a year, in time order (pandas needs that per entity for time windows)."""
    rng = np.random.default_rng(seed)
    seconds = np.sort(rng.integers(0, 365 * 24 * 3600, n))
    return pd.DataFrame({"entity": rng.integers(0, entities, n),
                         "time": pd.Timestamp("2024-01-01") + pd.to_timedelta(seconds, unit="s"),
                         "value": rng.normal(size=n)})


def with_pandas(df: pd.DataFrame, window) -> None:
    if isinstance(window, int):
        rolling = df.groupby("entity")["value"].rolling(window, closed="left", min_periods=1)
    else:
        rolling = df.groupby("entity").rolling(window, on="time", closed="left",
                                               min_periods=1)["value"]
    for stat in STATS:
        getattr(rolling, stat)()


def _seconds(fn, *args, **kwargs) -> float:
    start = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - start


def main(impl, *, quick: bool = False, out: Path | None = None) -> Table:
    n, entities = (20_000, 100) if quick else (1_000_000, 1_000)
    df = events(n, entities)
    table = Table("rows", "entities", "window", "impl s", "pandas s", "ratio (goal <= 1.0)")
    timings = []
    for window in (10, "7D"):
        run = dict(entity="entity", time="time", value="value", window=window, stats=STATS)
        impl.rolling_features(df.head(1000), **run)  # warm up both before timing
        with_pandas(df.head(1000), window)
        ours, theirs = _seconds(impl.rolling_features, df, **run), _seconds(with_pandas, df, window)
        timings.append((str(window), ours, theirs))
        table.add(f"{n:,}", entities, window, f"{ours:.3f}", f"{theirs:.3f}",
                  f"{ours / theirs:.2f}x")
    if out is not None:
        _plot(timings, n, Path(out))
    return table


def _plot(timings, n: int, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    x = np.arange(len(timings))

    def draw(say):
        fig, ax = pyplot().subplots(figsize=(7, 3.8))
        ax.bar(x - 0.2, [t[1] for t in timings], 0.4, label="rolling_features")
        ax.bar(x + 0.2, [t[2] for t in timings], 0.4, label="pandas groupby().rolling")
        ax.set_xticks(x, [say(f"window {t[0]}", f"視窗 {t[0]}") for t in timings])
        ax.set_ylabel(say("wall time (s)", "實際耗時（秒）"))
        ax.set_ylim(bottom=0)
        ax.set_title(say(f"{n:,} rows, 4 statistics per window", f"{n:,} 列，每個視窗 4 項統計"))
        ax.legend(loc="upper left")
        fig.tight_layout()
        return fig

    save_plots(out / "rolling_feature_leakage.png", draw)
