"""A simulated single-worker server: arrivals feed a DynamicBatcher, polled at every arrival and
at next_deadline(); whenever the worker is free, a ModelMultiplexer picks the next ready batch,
which costs swap_ms when its model was not resident, then run_ms(batch)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Start:
    at_ms: float
    batch: list
    evicted: object
    ready: list  # the ready batches choose saw
    resident_before: list
    resident_after: list

    @property
    def model(self) -> tuple:
        r = self.batch[0]
        return (r.model, r.version, r.dtype)

    @property
    def swapped(self) -> bool:
        return self.model not in self.resident_before


@dataclass
class Left:
    at_ms: float
    batch: list


def serve(impl, requests, *, max_batch_size: int, max_wait_ms: float, capacity: int,
          starvation_ms: float, swap_ms: float, run_ms: Callable[[list], float],
          length_buckets=(), per_row_sampling: bool = False) -> tuple[list[Left], list[Start]]:
    """Run `requests` (non-decreasing arrivals) to the end. Returns the batches as they left the
    batcher and the batches as they started on the worker."""
    batcher = impl.DynamicBatcher(max_batch_size=max_batch_size, max_wait_ms=max_wait_ms,
                                  length_buckets=length_buckets, per_row_sampling=per_row_sampling)
    mux = impl.ModelMultiplexer(capacity=capacity, starvation_ms=starvation_ms)
    left: list[Left] = []
    starts: list[Start] = []
    ready: list[list] = []
    t, free_at, i = -math.inf, -math.inf, 0

    def poll(now: float) -> None:
        got = batcher.poll(now)
        left.extend(Left(now, b) for b in got)
        ready.extend(got)

    for _ in range(10 * len(requests) + 10):
        times = [requests[i].arrival_ms] if i < len(requests) else []
        if (deadline := batcher.next_deadline()) is not None:
            times.append(deadline)
        if ready:
            times.append(free_at)
        if not times:
            return left, starts
        t = max(t, min(times))
        while i < len(requests) and requests[i].arrival_ms <= t:
            batcher.add(requests[i])
            poll(requests[i].arrival_ms)
            i += 1
        poll(t)
        if ready and free_at <= t:
            before, seen = mux.resident(), list(ready)
            batch, evicted = mux.choose(ready, t)
            if not any(b is batch for b in ready):
                raise AssertionError("choose returned a batch that is not in ready")
            ready = [b for b in ready if b is not batch]
            start = Start(t, batch, evicted, seen, before, mux.resident())
            starts.append(start)
            free_at = t + (swap_ms if start.swapped else 0) + run_ms(batch)
    raise AssertionError("the simulated server made no progress: a deadline in the past?")
