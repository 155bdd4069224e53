"""Shared pieces of the hidden suite: drain a queue, random operation lists, a backlog ledger
and a replay of operations against it.

Weights and prices drawn here are powers of two and tokens are integers, so every counter is an
exact binary fraction and ties are exact whatever order an implementation adds things in.
"""

from __future__ import annotations

from collections import deque

from hypothesis import strategies as st

TENANTS = ("A", "B", "C", "D")
POW2 = (0.5, 1, 2, 4)


def drain(q) -> list:
    """Pop until empty; return the request ids in order (a bounded loop: a hang is a failure)."""
    out = []
    for _ in range(10_000):
        got = q.pop()
        if got is None:
            return out
        out.append(got[1])
    raise AssertionError("pop() kept returning requests after 10,000 calls")


def ops(cost_min: int, cost_max: int, *, tenants=TENANTS, size: int = 60):
    """A list of ("push", tenant, cost) and ("pop",) operations."""
    push = st.tuples(st.just("push"), st.sampled_from(tenants), st.integers(cost_min, cost_max))
    return st.lists(st.one_of(push, push, st.just(("pop",))), max_size=size)


class Ledger:
    """The test's own account of what is queued, per tenant, in push order."""

    def __init__(self) -> None:
        self.queues: dict[object, deque] = {}
        self.next_id = 0

    def push(self, q, tenant, size: int) -> tuple[object, bool]:
        """Push a fresh id; return it and whether the tenant was idle before."""
        rid = f"r{self.next_id}"
        self.next_id += 1
        queue = self.queues.setdefault(tenant, deque())
        idle = not queue
        q.push(tenant, rid, size)
        queue.append((rid, size))
        return rid, idle

    def backlogged(self) -> list:
        return [t for t, queue in self.queues.items() if queue]

    def total(self) -> int:
        return sum(len(queue) for queue in self.queues.values())

    def check_conserving(self, got) -> None:
        """pop() returns None exactly when nothing is queued (before the ledger takes `got`)."""
        if self.total() == 0:
            assert got is None, f"pop() on an empty queue returned {got!r}"
        else:
            assert got is not None, f"pop() returned None with {self.total()} requests queued"

    def check_fifo(self, got) -> None:
        """A served request is the earliest its tenant has queued (before the ledger takes it)."""
        if got is not None and self.queues.get(got[0]):
            head = self.queues[got[0]][0][0]
            assert got[1] == head, f"{got[0]!r}: served {got[1]!r} before its earlier {head!r}"

    def take(self, got) -> tuple[object, int]:
        """Take a served request off the ledger; return (tenant, size), or (None, 0) for None."""
        if got is None:
            return None, 0
        tenant, rid = got
        sizes = dict(self.queues.get(tenant, ()))
        assert rid in sizes, f"pop() returned {got!r}, which is not queued"
        self.queues[tenant].remove((rid, sizes[rid]))
        return tenant, sizes[rid]


def replay(q, ledger: Ledger, script: list, *, tail: int):
    """Play ("push", tenant, size) and ("pop",) on `q`, then `tail` more pops; yield each operation
    with the pop's result (None after a push), before the ledger takes a served request off."""
    for op in [*script, *[("pop",)] * tail]:
        if op[0] == "push":
            ledger.push(q, op[1], op[2])
            yield op, None
        else:
            got = q.pop()
            yield op, got
            ledger.take(got)
