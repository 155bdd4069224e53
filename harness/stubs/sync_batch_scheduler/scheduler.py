"""Kata sync_batch_scheduler: dynamic batching for one GPU. Read the prompt with
`kata show sync_batch_scheduler`, then grade with `pytest katas/sync_batch_scheduler`.
Standard library only."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any


class QueueFullError(Exception):
    """Raised by submit when max_queue_size requests are already waiting (backpressure)."""


class SchedulerClosedError(Exception):
    """Raised by submit after close() has been called."""


class BatchScheduler:
    """Collects requests from many threads into batches and runs them on one worker thread.

    run_batch(requests: list) -> list gets one response per request, in order. It is only
    ever called from the scheduler's worker thread, one call at a time, with 1 to
    max_batch_size requests.
    """

    def __init__(self, run_batch: Callable[[list], list], *, max_batch_size: int,
                 max_wait_ms: float, max_queue_size: int | None = None,
                 latency_budget_ms: float | None = None,
                 estimate_batch_ms: Callable[[int], float] | None = None) -> None:
        """Validate the settings (ValueError) and start the worker thread.

        A batch leaves when max_batch_size requests wait, or when the oldest waiting request
        has waited max_wait_ms since its own submit (float("inf") allowed), or (Level 3) when
        the oldest's wait plus estimate_batch_ms(n) reaches latency_budget_ms.
        """
        raise NotImplementedError

    def submit(self, request: Any) -> Any:
        """Block until the batch holding `request` has run; return this request's response.

        Raises what run_batch raised, RuntimeError for a wrong number of responses,
        QueueFullError when max_queue_size requests already wait, SchedulerClosedError after
        close().
        """
        raise NotImplementedError

    @property
    def queue_depth(self) -> int:
        """Requests waiting to be dispatched, not counting the batch in flight."""
        raise NotImplementedError

    def close(self) -> None:
        """Stop accepting, dispatch everything waiting at once, and return after those
        callers have their answers and the worker has stopped. Safe to call twice."""
        raise NotImplementedError

    def __enter__(self) -> BatchScheduler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
