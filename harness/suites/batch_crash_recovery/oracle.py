"""Plain simulations of Levels 1 and 2 from the spec: the exact run_batch calls and outcomes.

Requests are plain payloads, unique, submitted before run(); nothing resubmits. Crash decisions
depend on (call number, payloads) only, so the simulation and the runner see the same worker.
"""

from __future__ import annotations

from collections import deque

from .fakes import Crash


def retry_plan(payloads: list, max_batch_size: int, max_attempts: int,
               crash: Crash) -> tuple[list[list], dict]:
    """Level 1: (calls, {payload: (ok, attempts)})."""
    queue, attempts, calls, outcome = deque(payloads), dict.fromkeys(payloads, 0), [], {}
    while queue:
        batch = [queue.popleft() for _ in range(min(max_batch_size, len(queue)))]
        calls.append(batch)
        if not crash(len(calls), batch):
            outcome.update((p, (True, attempts[p] + 1)) for p in batch)
            continue
        for p in batch:
            attempts[p] += 1
        queue.extendleft(reversed([p for p in batch if attempts[p] < max_attempts]))
        outcome.update((p, (False, max_attempts)) for p in batch if attempts[p] == max_attempts)
    return calls, outcome


def bisect_plan(payloads: list, max_batch_size: int, max_attempts: int,
                crash: Crash) -> tuple[list[list], dict]:
    """Level 2: (calls, {payload: (ok, attempts)})."""
    calls, outcome = [], {}

    def resolve(batch: list) -> None:
        calls.append(batch)
        if not crash(len(calls), batch):
            outcome.update((p, (True, 1)) for p in batch)
            return
        if len(batch) > 1:
            half = (len(batch) + 1) // 2
            resolve(batch[:half])
            resolve(batch[half:])
            return
        for attempt in range(2, max_attempts + 1):
            calls.append(batch)
            if not crash(len(calls), batch):
                outcome[batch[0]] = (True, attempt)
                return
        outcome[batch[0]] = (False, max_attempts)

    for first in range(0, len(payloads), max_batch_size):
        resolve(payloads[first : first + max_batch_size])
    return calls, outcome


def poison_depth(n: int, position: int) -> int:
    """Depth of `position` in the split tree of a batch of n (first half ceil(n/2))."""
    depth = 0
    while n > 1:
        half = (n + 1) // 2
        n, position = (half, position) if position < half else (n - half, position - half)
        depth += 1
    return depth
