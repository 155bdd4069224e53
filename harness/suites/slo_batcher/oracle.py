"""Level 3 by hand: a plain recount of a trace, row by row, and the traces it runs on."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from hypothesis import strategies as st

COLUMNS = ["request_id", "arrival", "dispatch", "start", "end", "batch_id", "worker"]
PARTS = {
    "linger": lambda r: r["dispatch"] - r["arrival"],
    "queue": lambda r: r["start"] - r["dispatch"],
    "run": lambda r: r["end"] - r["start"],
    "e2e": lambda r: r["end"] - r["arrival"],
}


def frame(rows: list[tuple]) -> pd.DataFrame:
    """A trace from (request_id, arrival, dispatch, start, end, batch_id, worker) rows."""
    return pd.DataFrame(rows, columns=COLUMNS)


def by_window(trace: pd.DataFrame, w: float) -> dict[float, list[dict]]:
    rows = trace.to_dict("records")
    windows: dict[float, list[dict]] = {}
    for r in rows:
        windows.setdefault(math.floor(r["arrival"] / w) * w, []).append(r)
    return dict(sorted(windows.items()))


def stats(trace: pd.DataFrame, w: float) -> dict[float, dict]:
    rows = trace.to_dict("records")
    batches = {r["batch_id"]: r for r in rows}
    size = {b: sum(r["batch_id"] == b for r in rows) for b in batches}
    workers = len({r["worker"] for r in rows})
    out = {}
    for lo, mine in by_window(trace, w).items():
        busy = sum(max(0, min(b["end"], lo + w) - max(b["start"], lo)) for b in batches.values())
        row = {"requests": len(mine), "utilisation": busy / (workers * w),
               "batch_size_mean": sum(size[r["batch_id"]] for r in mine) / len(mine)}
        for name, part in PARTS.items():
            values = [part(r) for r in mine]
            row[f"{name}_p50"], row[f"{name}_p99"] = np.percentile(values, [50, 99])
        out[lo] = row
    return out


def tails(trace: pd.DataFrame, w: float) -> dict[float, dict]:
    out = {}
    for lo, mine in by_window(trace, w).items():
        p99 = np.percentile([PARTS["e2e"](r) for r in mine], 99)
        tail = [r for r in mine if PARTS["e2e"](r) >= p99]
        means = {name: sum(PARTS[name](r) for r in tail) / len(tail)
                 for name in ("linger", "queue", "run")}
        cause = max(means, key=lambda name: means[name])  # max keeps the first of ties
        out[lo] = {"e2e_p99": p99, "tail": len(tail), **means, "cause": cause}
    return out


def same(got: pd.DataFrame, want: dict[float, dict]) -> None:
    """Assert the frame holds `want`: the index as floats, numbers within 1e-9, text equal."""
    assert [float(i) for i in got.index] == list(want), "windows"
    for lo, row in want.items():
        for column, value in row.items():
            actual = got.loc[lo, column]
            if isinstance(value, str):
                assert actual == value, (lo, column)
            else:
                assert abs(actual - value) <= 1e-9 * abs(value) + 1e-9, (lo, column, actual)


half = st.integers(0, 40).map(lambda k: k / 2)


@st.composite
def traces(draw, *, overlapping: bool = True) -> pd.DataFrame:
    """Batches of 1 to 4 requests on workers "g0".."g2", times in halves. Unless `overlapping`,
    each worker runs its batches one after another."""
    rows, free = [], {}
    for b in range(draw(st.integers(1, 7))):
        worker = draw(st.sampled_from(["g0", "g1", "g2"]))
        dispatch = draw(st.integers(0, 200).map(lambda k: k / 2))
        start = dispatch + draw(half)
        if not overlapping:
            start = max(start, free.get(worker, 0))
        end = start + draw(half)
        free[worker] = end
        for _ in range(draw(st.integers(1, 4))):
            arrival = dispatch - draw(st.integers(0, int(2 * dispatch)).map(lambda k: k / 2))
            rows.append((len(rows), arrival, dispatch, start, end, b, worker))
    return frame(rows)


windows = st.sampled_from([0.5, 1, 2.5, 10, 25, 40])
