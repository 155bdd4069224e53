"""The latency budget uses the estimate for a full batch, so small batches leave far too early.

Mutant of the reference: one classic mistake, everything else unchanged.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class QueueFullError(Exception):
    """submit found max_queue_size requests already waiting."""


class SchedulerClosedError(Exception):
    """submit was called after close()."""


@dataclass
class Pending:
    """One waiting request and the slot its caller blocks on."""

    request: Any
    arrived: float  # time.monotonic() when submit enqueued it
    done: threading.Event = field(default_factory=threading.Event)
    response: Any = None
    error: BaseException | None = None

    def finish(self, response: Any = None, error: BaseException | None = None) -> None:
        self.response, self.error = response, error
        self.done.set()


class BatchScheduler:
    def __init__(self, run_batch: Callable[[list], list], *, max_batch_size: int,
                 max_wait_ms: float, max_queue_size: int | None = None,
                 latency_budget_ms: float | None = None,
                 estimate_batch_ms: Callable[[int], float] | None = None) -> None:
        if not callable(run_batch):
            raise ValueError(f"run_batch must be callable, got {type(run_batch).__name__}")
        if max_batch_size < 1:
            raise ValueError(f"max_batch_size must be >= 1, got {max_batch_size}")
        if not max_wait_ms >= 0:
            raise ValueError(f"max_wait_ms must be >= 0 (or inf), got {max_wait_ms}")
        if max_queue_size is not None and max_queue_size < 1:
            raise ValueError(f"max_queue_size must be >= 1 or None, got {max_queue_size}")
        if (latency_budget_ms is None) != (estimate_batch_ms is None):
            raise ValueError("latency_budget_ms and estimate_batch_ms must be given together, "
                             "got only one of them")
        self.run_batch = run_batch
        self.max_batch_size = max_batch_size
        self.max_wait = max_wait_ms / 1000
        self.max_queue_size = max_queue_size
        self.latency_budget = None if latency_budget_ms is None else latency_budget_ms / 1000
        self.estimate_batch_ms = estimate_batch_ms
        self.pending: deque[Pending] = deque()
        self.closed = False
        self.cond = threading.Condition()
        # A daemon, so a scheduler nobody closes cannot keep the process alive.
        self.worker = threading.Thread(target=self.loop, name="batch-worker", daemon=True)
        self.worker.start()

    def submit(self, request: Any) -> Any:
        """Block until the batch holding `request` has run; return its response or raise."""
        with self.cond:
            if self.closed:
                raise SchedulerClosedError("submit called after close()")
            if self.max_queue_size is not None and len(self.pending) >= self.max_queue_size:
                raise QueueFullError(f"{len(self.pending)} requests already waiting "
                                     f"(max_queue_size={self.max_queue_size}); retry later")
            item = Pending(request, time.monotonic())
            self.pending.append(item)
            self.cond.notify()  # only the worker waits on the condition
        item.done.wait()
        if item.error is not None:
            raise item.error
        return item.response

    @property
    def queue_depth(self) -> int:
        with self.cond:
            return len(self.pending)

    def close(self) -> None:
        """Stop accepting, flush what waits, and return once the worker has stopped."""
        with self.cond:
            self.closed = True
            self.cond.notify()
        self.worker.join()

    def __enter__(self) -> BatchScheduler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def seconds_to_dispatch(self) -> float:
        """How long until a trigger fires for what waits now (<= 0: dispatch now). Under lock."""
        n = min(len(self.pending), self.max_batch_size)
        if n == self.max_batch_size or self.closed:
            return 0.0
        # Measured from the oldest request's own submit, never from when the worker looked.
        waited = time.monotonic() - self.pending[0].arrived
        delay = self.max_wait - waited
        if self.latency_budget is not None:
            # Leave early enough that waiting plus running this batch fits the budget.
            delay = min(delay, self.latency_budget - self.estimate_batch_ms(
                self.max_batch_size) / 1000 - waited)
        return delay

    def loop(self) -> None:
        while True:
            with self.cond:
                while True:
                    if not self.pending:
                        if self.closed:
                            return
                        self.cond.wait()
                        continue
                    delay = self.seconds_to_dispatch()
                    if delay <= 0:
                        break
                    # A new arrival or close() wakes us early; then the trigger is recomputed.
                    self.cond.wait(min(delay, threading.TIMEOUT_MAX))
                n = min(len(self.pending), self.max_batch_size)
                batch = [self.pending.popleft() for _ in range(n)]
            self.run(batch)  # outside the lock: submit keeps queueing while the batch runs

    def run(self, batch: list[Pending]) -> None:
        try:
            responses = self.run_batch([p.request for p in batch])
            if responses is None or len(responses) != len(batch):
                got = "None" if responses is None else f"{len(responses)} responses"
                raise RuntimeError(f"run_batch returned {got} for {len(batch)} requests; "
                                   f"expected {len(batch)} responses, one per request, in order")
        except Exception as exc:  # the whole batch fails; the worker keeps serving
            for p in batch:
                p.finish(error=exc)
            return
        for p, response in zip(batch, responses, strict=True):
            p.finish(response)
