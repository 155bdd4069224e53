"""Shared pieces of the hidden suite: costs to plug into a batcher, and a server that drives one
on the simulated clock while keeping its own ledger of what is queued and what is in flight.

Times drawn here are integers and halves, so every sum is exact and every tie is a real tie.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import strategies as st


class SpyCost:
    """`fixed + per_item * b`, recording every observe call."""

    def __init__(self, fixed: float, per_item: float) -> None:
        self.fixed, self.per_item = fixed, per_item
        self.observed: list[tuple[int, float]] = []

    def run_ms(self, b: int) -> float:
        return self.fixed + self.per_item * b

    def observe(self, b: int, ms: float) -> None:
        self.observed.append((b, ms))


class TableCost(SpyCost):
    """Run times read from a table: neither linear nor a LinearCost."""

    def __init__(self, table: dict[int, float]) -> None:
        super().__init__(0, 0)
        self.table = table

    def run_ms(self, b: int) -> float:
        return self.table[b]


class LastRunCost(SpyCost):
    """Predicts the last measured run time, whatever the size: a cost that learns."""

    def observe(self, b: int, ms: float) -> None:
        super().observe(b, ms)
        self.fixed = ms


def batches(got) -> list[tuple]:
    """Batches as plain (batch_id, request_ids, dispatch_ms) tuples."""
    return [(b.batch_id, tuple(b.request_ids), b.dispatch_ms) for b in got]


@dataclass(frozen=True)
class Sent:
    batch_id: int
    ids: tuple
    dispatch: float
    end: float
    via: str  # the call after which the server found it: "add", "poll" or "complete"
    waiting: int  # requests queued, by the server's ledger, just before that call


@dataclass(frozen=True)
class State:
    """What the server saw after one call and the poll that follows it."""

    now: float
    timer: float | None  # next_dispatch_time()
    busy: bool
    queued: tuple  # arrival times of the queued requests, oldest first
    length: int  # len(batcher)


class Server:
    """Adds each `(request_id, time)` at its time, completes a batch `duration(size, index)`
    after its dispatch, polls a due timer `lateness` after it is due, and polls at each time in
    `polls`. It polls after every call, so it learns of each batch as soon as it is sent. At
    equal times: a completion first, then an arrival, then a timer, then an extra poll."""

    def __init__(self, batcher, duration: Callable[[int, int], float], *, lateness: float = 0,
                 polls=()) -> None:
        self.batcher, self.duration, self.lateness = batcher, duration, lateness
        self.polls = deque(sorted(polls))
        self.sent: list[Sent] = []
        self.states: list[State] = []

    def run(self, arrivals) -> list[Sent]:
        pending, queued = deque(arrivals), {}
        flight: Sent | None = None
        for _ in range(3 * len(pending) + len(self.polls) + 10):
            timer = self.batcher.next_dispatch_time()
            events = [(flight.end, 0)] if flight else []
            events += [(pending[0][1], 1)] if pending else []
            events += [(timer + self.lateness, 2)] if timer is not None else []
            events += [(self.polls[0], 3)] if self.polls else []
            if not events:
                return self.sent
            now, kind = min(events)
            waiting, call = len(queued), ("complete", "add", "poll", "poll")[kind]
            if kind == 0:
                self.batcher.complete(flight.batch_id, now)
                flight = None
            elif kind == 1:
                rid, _ = pending.popleft()
                self.batcher.add(rid, now)
                queued[rid] = now
            elif kind == 3:
                self.polls.popleft()
            for b in self.batcher.poll(now):
                ids = tuple(b.request_ids)
                for rid in ids:
                    queued.pop(rid, None)
                end = b.dispatch_ms + self.duration(len(ids), len(self.sent))
                flight = Sent(b.batch_id, ids, b.dispatch_ms, end, call, waiting)
                self.sent.append(flight)
            self.states.append(State(now, self.batcher.next_dispatch_time(), flight is not None,
                                     tuple(queued.values()), len(self.batcher)))
        raise AssertionError("the batcher kept sending or waiting after every request was served")


halves = st.integers(0, 40).map(lambda k: k / 2)


@st.composite
def workloads(draw, *, delays: bool = True):
    """A dict of slo, max_batch, fixed, per_item, arrivals [(id, time)] and per-batch delays."""
    gaps = draw(st.lists(st.integers(0, 30).map(lambda k: k / 2), min_size=1, max_size=20))
    times = [sum(gaps[:i + 1]) for i in range(len(gaps))]
    return {
        "slo": draw(st.integers(1, 80).map(lambda k: k / 2)),
        "max_batch": draw(st.integers(1, 5)),
        "fixed": draw(halves),
        "per_item": draw(st.integers(0, 8).map(lambda k: k / 2)),
        "arrivals": [(f"r{i}", t) for i, t in enumerate(times)],
        "delays": draw(st.lists(halves, min_size=1, max_size=5)) if delays else [0],
    }


def serve(impl, w: dict, *, cost=None, **server) -> tuple[object, Server]:
    """Run workload `w` through a fresh DeadlineBatcher; a batch of b runs run_ms(b) plus the
    next of w["delays"]."""
    cost = cost or SpyCost(w["fixed"], w["per_item"])
    batcher = impl.DeadlineBatcher(slo_ms=w["slo"], max_batch=w["max_batch"], cost=cost)
    delays = w["delays"]
    s = Server(batcher, lambda b, i: cost.run_ms(b) + delays[i % len(delays)], **server)
    s.run(w["arrivals"])
    return batcher, s
