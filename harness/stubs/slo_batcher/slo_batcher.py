"""Deadline batching on a simulated clock. Read the prompt: `kata show slo_batcher`.

Level 1: Batch, LinearCost, DeadlineBatcher. Level 2: OnlineCost and bad input.
Level 3: window_stats and attribute_tail over the server's log (pandas).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class Batch:
    batch_id: int  # 0, 1, 2, ... in dispatch order
    request_ids: tuple  # oldest first
    dispatch_ms: float


class LinearCost:
    """A known cost: fixed_ms + per_item_ms * batch_size."""

    def __init__(self, fixed_ms: float, per_item_ms: float):
        raise NotImplementedError

    def run_ms(self, batch_size: int) -> float:
        """The estimated run time of a batch of `batch_size` requests."""
        raise NotImplementedError

    def observe(self, batch_size: int, run_ms: float) -> None:
        """A known cost learns nothing."""
        raise NotImplementedError


class DeadlineBatcher:
    """One worker; waits as long as the oldest request's deadline allows, minus the run time."""

    def __init__(self, *, slo_ms: float, max_batch: int, cost) -> None:
        """`cost` has run_ms(b) and observe(b, ms)."""
        raise NotImplementedError

    def add(self, request_id: Hashable, now: float) -> None:
        """Advance the clock to `now`, then queue a request that arrives now."""
        raise NotImplementedError

    def next_dispatch_time(self) -> float | None:
        """The timer: latest(m), or None when nothing is queued or a batch is in flight."""
        raise NotImplementedError

    def poll(self, now: float) -> list[Batch]:
        """Advance the clock to `now`; return the batches sent since the last poll, in order."""
        raise NotImplementedError

    def complete(self, batch_id: int, now: float) -> None:
        """The batch in flight finished at `now`: count violations, observe, plan again."""
        raise NotImplementedError

    @property
    def violations(self) -> int:
        """Requests that finished after their deadline, so far."""
        raise NotImplementedError

    def __len__(self) -> int:
        """Requests queued (not those in flight)."""
        raise NotImplementedError


class OnlineCost:
    """Least squares over the last `window` observations of (batch size, run ms)."""

    def __init__(self, *, window: int, prior_fixed_ms: float, prior_per_item_ms: float):
        raise NotImplementedError

    def observe(self, batch_size: int, run_ms: float) -> None:
        """Record one measured run time."""
        raise NotImplementedError

    def run_ms(self, batch_size: int) -> float:
        """max(0, fixed + slope * batch_size) with the coefficients in use."""
        raise NotImplementedError

    @property
    def coefficients(self) -> tuple[float, float]:
        """(fixed_ms, per_item_ms) in use."""
        raise NotImplementedError


def window_stats(trace: pd.DataFrame, window_ms: float) -> pd.DataFrame:
    """Per window of arrivals: requests, utilisation, batch_size_mean and p50/p99 of linger,
    queue, run and e2e."""
    raise NotImplementedError


def attribute_tail(trace: pd.DataFrame, window_ms: float) -> pd.DataFrame:
    """Per window of arrivals: e2e_p99, tail, the tail's mean linger, queue and run, cause."""
    raise NotImplementedError
