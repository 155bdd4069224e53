"""Shared pieces of the hidden suite: events as plain tuples, keys with a known bucket, routers
built from a list of replicas, and a ledger that replays events and checks them against the
queries.

Every time in this suite is an integer or a binary fraction, so no decision hinges on rounding.
"""

from __future__ import annotations

import zlib

from hypothesis import strategies as st


def bucket(key: str) -> int:
    return zlib.crc32(key.encode("utf-8")) % 100


def _keys_by_bucket() -> dict[int, str]:
    found: dict[int, str] = {}
    i = 0
    while len(found) < 100:
        found.setdefault(bucket(f"user{i}"), f"user{i}")
        i += 1
    return found


KEY = _keys_by_bucket()  # KEY[b] is a key whose bucket is b


def ev(events) -> list[tuple]:
    """Events as (kind, request_id, replica_id, retry_after) tuples, whatever their type."""
    return [tuple(e) for e in events]


def dispatch(rid, rep):
    return ("dispatch", rid, rep, None)


def retry(rid, rep):
    return ("retry", rid, rep, None)


def done(rid, rep):
    return ("done", rid, rep, None)


def fail(rid, rep):
    return ("fail", rid, rep, None)


def queue(rid):
    return ("queue", rid, None, None)


def reject(rid, after=None):
    return ("reject", rid, None, after)


def shed(rid, after=None):
    return ("shed", rid, None, after)


def timeout(rid, after=None):
    return ("timeout", rid, None, after)


def removed(rep):
    return ("removed", None, rep, None)


def router(impl, replicas, split=None, *, model="m", **settings):
    """A router with `replicas` [(id, version, capacity)] of `model` added at t = 0, and the
    split `split` (default: the first version at 100) set at t = 0."""
    r = impl.InferenceRouter(**settings)
    for rid, version, capacity in replicas:
        r.add_replica(0, rid, model, version, capacity)
    r.set_split(0, model, split or {replicas[0][1]: 100})
    return r


def fill(r, now, model, ids, key=KEY[0], priority=1):
    """Submit requests `ids` with one key; return all their events."""
    out = []
    for rid in ids:
        out += ev(r.submit(now, rid, model, key, priority))
    return out


# ---- random traces ----

REPLICAS = (("a", "v1", 2), ("b", "v1", 1), ("c", "v2", 1), ("d", "v2", 3))


def l2_ops(size: int = 60):
    """("submit", bucket, priority) | ("complete", k, ok) | ("tick",) | ("split", w1), each after
    a time step of 0, 1/2 or 1."""
    op = st.one_of(
        st.tuples(st.just("submit"), st.integers(0, 99), st.integers(0, 3)),
        st.tuples(st.just("complete"), st.integers(0, 30), st.booleans()),
        st.tuples(st.just("tick")),
        st.tuples(st.just("split"), st.sampled_from((0, 30, 50, 100))),
    )
    return st.lists(st.tuples(st.sampled_from((0, 0.5, 1)), op), max_size=size)


class Ledger:
    """What the events say: where each request runs or waits, checked as it replays them."""

    def __init__(self, replicas) -> None:
        self.capacity = {rid: cap for rid, _, cap in replicas}
        self.version = {rid: v for rid, v, _ in replicas}
        self.running: dict[str, str] = {}  # request -> replica
        self.tried: dict[str, set[str]] = {}
        self.waiting: dict[str, str] = {}  # request -> the version whose queue holds it
        self.rank: dict[str, tuple[int, int]] = {}  # request -> (priority, submit number)

    def apply(self, events, routed: dict[str, str]) -> None:
        """Replay one call's events; `routed[rid]` is the version a newcomer was routed to."""
        for kind, rid, rep, _ in events:
            if kind == "dispatch":
                assert rid not in self.running, f"{rid} dispatched twice"
                want = self.waiting.pop(rid, None) or routed[rid]
                assert self.version[rep] == want, f"{rid} of {want} dispatched to {rep}"
                self.running[rid] = rep
                self.tried[rid] = {rep}
            elif kind == "retry":
                assert rep not in self.tried[rid], f"{rid} retried on {rep}, where it ran before"
                self.running[rid] = rep
                self.tried[rid].add(rep)
            elif kind == "queue":
                self.waiting[rid] = routed[rid]
            elif kind in ("shed", "timeout"):
                del self.waiting[rid]
            elif kind in ("done", "fail"):
                assert self.running.pop(rid) == rep, f"{kind} of {rid} names the wrong replica"
                del self.tried[rid]

    def in_flight(self, rep: str) -> int:
        return sum(r == rep for r in self.running.values())

    def check(self, r, queue_limit: int) -> None:
        for rep, cap in self.capacity.items():
            assert r.in_flight(rep) == self.in_flight(rep) <= cap, rep
        for version in set(self.version.values()):
            got = r.queued("m", version)
            assert sorted(got) == sorted(k for k, v in self.waiting.items() if v == version)
            assert got == sorted(got, key=self.rank.__getitem__), "queue not in (priority, seq)"
            assert len(got) <= queue_limit
