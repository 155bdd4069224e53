"""Deadline batching on a simulated clock: fold the run time into the latency budget, learn the
cost online, and find what makes the p99 in the server's log."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np
import pandas as pd


def is_number(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def check_ms(name: str, x: object) -> None:
    if not is_number(x) or not math.isfinite(x) or x < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {x!r}")


def check_count(name: str, x: object) -> None:
    if not isinstance(x, int) or isinstance(x, bool) or x < 1:
        raise ValueError(f"{name} must be an int >= 1, got {x!r}")


# Level 1: one worker, a known cost.

@dataclass(frozen=True)
class Batch:
    batch_id: int
    request_ids: tuple
    dispatch_ms: float


class LinearCost:
    def __init__(self, fixed_ms: float, per_item_ms: float):
        check_ms("fixed_ms", fixed_ms)
        check_ms("per_item_ms", per_item_ms)
        self.fixed_ms, self.per_item_ms = fixed_ms, per_item_ms

    def run_ms(self, batch_size: int) -> float:
        check_count("batch_size", batch_size)
        return self.fixed_ms + self.per_item_ms * batch_size

    def observe(self, batch_size: int, run_ms: float) -> None:
        """A known cost has nothing to learn."""


class DeadlineBatcher:
    """Waits as long as the oldest request's deadline allows, minus the batch's run time."""

    def __init__(self, *, slo_ms: float, max_batch: int, cost) -> None:
        if not is_number(slo_ms) or not math.isfinite(slo_ms) or slo_ms <= 0:
            raise ValueError(f"slo_ms must be a finite number > 0, got {slo_ms!r}")
        check_count("max_batch", max_batch)
        self.slo_ms, self.max_batch, self.cost = slo_ms, max_batch, cost
        self._queue: deque[tuple[Hashable, float]] = deque()  # (request_id, deadline), oldest first
        self._flight: tuple[Batch, list[float]] | None = None  # the batch running, its deadlines
        self._ids: set[Hashable] = set()  # queued or in flight
        self._sent: list[Batch] = []  # since the last poll
        self._batches = 0
        self._violations = 0
        self._now = -math.inf

    @property
    def violations(self) -> int:
        return self._violations

    def __len__(self) -> int:
        return len(self._queue)

    def _m(self) -> int:
        return min(len(self._queue), self.max_batch)

    def _latest(self, b: int) -> float:
        """The last moment the first `b` requests can be sent and meet the oldest's deadline."""
        return self._queue[0][1] - self.cost.run_ms(b)

    def next_dispatch_time(self) -> float | None:
        if self._flight is not None or not self._queue:
            return None
        return self._latest(self._m())

    def _send(self, count: int, t: float) -> None:
        taken = [self._queue.popleft() for _ in range(count)]
        batch = Batch(self._batches, tuple(rid for rid, _ in taken), t)
        self._batches += 1
        self._flight = (batch, [deadline for _, deadline in taken])
        self._sent.append(batch)

    def _check_now(self, now: float) -> None:
        if not is_number(now) or not math.isfinite(now):
            raise ValueError(f"now must be a finite number, got {now!r}")
        if now < self._now:
            raise ValueError(f"now {now} is before the clock ({self._now})")

    def _advance(self, now: float) -> None:
        """Move the clock to `now`; a timer that expired on the way fires at its own time."""
        timer = self.next_dispatch_time()
        if timer is not None and timer <= now:
            self._send(self._m(), timer)
        self._now = now

    def _plan(self, now: float) -> None:
        if self._flight is not None or not self._queue:
            return
        m = self._m()
        if len(self._queue) < self.max_batch and self._latest(m) > now:
            return  # wait: the timer is next_dispatch_time()
        self._send(m, now)  # on time or not: a late batch still goes whole

    def add(self, request_id: Hashable, now: float) -> None:
        self._check_now(now)
        if request_id in self._ids:
            raise ValueError(f"request {request_id!r} is already queued or in flight")
        self._advance(now)
        waiting = len(self._queue)
        if self._flight is None and waiting and self._latest(waiting + 1) < now:
            self._send(waiting, now)  # the newcomer would make them late
        self._queue.append((request_id, now + self.slo_ms))
        self._ids.add(request_id)
        self._plan(now)

    def poll(self, now: float) -> list[Batch]:
        self._check_now(now)
        self._advance(now)
        self._plan(now)
        sent, self._sent = self._sent, []
        return sent

    def complete(self, batch_id: int, now: float) -> None:
        self._check_now(now)
        if self._flight is None or self._flight[0].batch_id != batch_id:
            raise KeyError(f"batch {batch_id!r} is not in flight")
        self._advance(now)  # nothing expires while a batch is in flight
        batch, deadlines = self._flight
        self._violations += sum(now > deadline for deadline in deadlines)
        self.cost.observe(len(deadlines), now - batch.dispatch_ms)
        self._flight = None
        self._ids.difference_update(batch.request_ids)
        self._plan(now)


# Level 2: a cost learned from the run times that complete reports.

class OnlineCost:
    """Least squares over the last `window` (batch size, run ms) observations."""

    def __init__(self, *, window: int, prior_fixed_ms: float, prior_per_item_ms: float):
        check_count("window", window)
        check_ms("prior_fixed_ms", prior_fixed_ms)
        check_ms("prior_per_item_ms", prior_per_item_ms)
        self.prior_per_item_ms = prior_per_item_ms
        self._seen: deque[tuple[int, float]] = deque(maxlen=window)
        self._coefficients = (prior_fixed_ms, prior_per_item_ms)

    @property
    def coefficients(self) -> tuple[float, float]:
        return self._coefficients

    def observe(self, batch_size: int, run_ms: float) -> None:
        check_count("batch_size", batch_size)
        check_ms("run_ms", run_ms)
        self._seen.append((batch_size, run_ms))
        self._coefficients = self._fit()  # once per observation: run_ms stays O(1)

    def _fit(self) -> tuple[float, float]:
        xs = [x for x, _ in self._seen]
        ys = [y for _, y in self._seen]
        x_mean, y_mean = sum(xs) / len(xs), sum(ys) / len(ys)
        if len(set(xs)) > 1:
            sxy = sum((x - x_mean) * (y - y_mean) for x, y in self._seen)
            slope = sxy / sum((x - x_mean) ** 2 for x in xs)
        else:  # one size says nothing about the slope
            slope = self.prior_per_item_ms
        slope = max(slope, 0.0)
        return y_mean - slope * x_mean, slope

    def run_ms(self, batch_size: int) -> float:
        check_count("batch_size", batch_size)
        fixed, slope = self._coefficients
        return max(0.0, fixed + slope * batch_size)


# Level 3: the p99 post-mortem over the server's log.

COLUMNS = ("request_id", "arrival", "dispatch", "start", "end", "batch_id", "worker")
TIMES = ("arrival", "dispatch", "start", "end")
PARTS = ("linger", "queue", "run")


def read_trace(trace: pd.DataFrame, window_ms: float) -> pd.DataFrame:
    """The trace's own columns, checked, with the components and each request's window."""
    if not is_number(window_ms) or not math.isfinite(window_ms) or window_ms <= 0:
        raise ValueError(f"window_ms must be a finite number > 0, got {window_ms!r}")
    missing = [c for c in COLUMNS if c not in trace.columns]
    if missing:
        raise ValueError(f"the trace has no column {', '.join(missing)}")
    t = trace[list(COLUMNS)].copy()
    for c in TIMES:
        if not pd.api.types.is_numeric_dtype(t[c]) or not np.isfinite(t[c]).all():
            raise ValueError(f"{c} must hold finite numbers")
    ordered = (t.arrival <= t.dispatch) & (t.dispatch <= t.start) & (t.start <= t.end)
    if not ordered.all():
        raise ValueError(f"arrival <= dispatch <= start <= end fails for "
                         f"{t.request_id[~ordered].tolist()}")
    if t.request_id.duplicated().any():
        raise ValueError("a request_id is repeated")
    per_batch = t.groupby("batch_id")[["dispatch", "start", "end", "worker"]].nunique()
    if (per_batch > 1).any().any():
        raise ValueError("the rows of a batch_id differ in dispatch, start, end or worker")
    t["linger"] = t.dispatch - t.arrival
    t["queue"] = t.start - t.dispatch
    t["run"] = t.end - t.start
    t["e2e"] = t.end - t.arrival
    t["window"] = np.floor(t.arrival / window_ms) * window_ms
    t["size"] = t.groupby("batch_id").request_id.transform("size")
    return t


def window_stats(trace: pd.DataFrame, window_ms: float) -> pd.DataFrame:
    t = read_trace(trace, window_ms)
    batches = t.drop_duplicates("batch_id")  # a batch's time counts once, whoever it carries
    capacity = t.worker.nunique() * window_ms
    rows = {}
    for lo, g in t.groupby("window"):
        hi = lo + window_ms
        busy = (np.minimum(batches.end, hi) - np.maximum(batches.start, lo)).clip(lower=0)
        row = {"requests": len(g), "utilisation": busy.sum() / capacity,
               "batch_size_mean": g["size"].mean()}
        for c in (*PARTS, "e2e"):
            row[f"{c}_p50"], row[f"{c}_p99"] = np.percentile(g[c], [50, 99])
        rows[lo] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def attribute_tail(trace: pd.DataFrame, window_ms: float) -> pd.DataFrame:
    t = read_trace(trace, window_ms)
    rows = {}
    for lo, g in t.groupby("window"):
        p99 = np.percentile(g.e2e, 99)
        tail = g[g.e2e >= p99]
        means = tail[list(PARTS)].mean()
        # Percentiles of the parts do not add up to the p99: the tail's own requests decide.
        rows[lo] = {"e2e_p99": p99, "tail": len(tail), **means, "cause": means.idxmax()}
    return pd.DataFrame.from_dict(rows, orient="index")
