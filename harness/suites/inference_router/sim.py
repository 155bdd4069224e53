"""Replicas behind a router on a simulated clock: requests arrive, each dispatched attempt runs
for its replica's service time and then succeeds or fails, and the router is ticked once a
second. Used by the benchmark and the end-to-end test."""

from __future__ import annotations

import heapq
import random
from collections import Counter
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Arrival:
    t: float
    rid: str
    key: str
    priority: int = 1
    cls: int = 1  # the request's true class, kept when a baseline submits everything at 1


@dataclass
class Outcome:
    """What happened to every request: its end, its latency if served, its attempts."""

    ends: dict[str, str] = field(default_factory=dict)  # rid -> done | fail | reject | ...
    latency: dict[str, float] = field(default_factory=dict)  # rid -> done time - arrival
    attempts: Counter = field(default_factory=Counter)  # rid -> attempts dispatched
    log: list[tuple[float, tuple]] = field(default_factory=list)  # (time, event) in order


def poisson(rate: float, duration: float, seed: int, mix=((1, 1.0),)) -> list[Arrival]:
    """Poisson arrivals at `rate` per second for `duration` s; `mix` is ((priority, share), ...)."""
    rng = random.Random(seed)
    priorities, shares = zip(*mix, strict=True)
    out, t = [], 0.0
    while (t := t + rng.expovariate(rate)) < duration:
        p = rng.choices(priorities, shares)[0]
        out.append(Arrival(t, f"q{len(out)}", f"user{rng.randrange(10**6)}", p, p))
    return out


def run(router, model: str, arrivals: list[Arrival], service: dict[str, float],
        fails=lambda replica, t: False, until: float | None = None, calls=()) -> Outcome:
    """Drive `router` through `arrivals`; an attempt on replica r started at t takes service[r]
    seconds and fails iff fails(r, t). Ticks once a second up to `until` (default: the last
    arrival plus a minute); `calls` are (t, fn) pairs, fn(router, t) returning a call's events
    (an operator's drain or start_rollout)."""
    out, born = Outcome(), {a.rid: a.t for a in arrivals}
    queue: list[tuple[float, int, str, object]] = []
    for n, a in enumerate(arrivals):
        heapq.heappush(queue, (a.t, n, "submit", a))
    end = until if until is not None else (arrivals[-1].t if arrivals else 0) + 60
    for s in range(int(end) + 1):
        heapq.heappush(queue, (float(s), -1, "tick", None))
    for t, fn in calls:
        heapq.heappush(queue, (t, -2, "call", fn))
    order = len(arrivals)
    while queue:
        t, _, kind, what = heapq.heappop(queue)
        if kind == "submit":
            events = router.submit(t, what.rid, model, what.key, what.priority)
        elif kind == "complete":
            events = router.complete(t, what[0], ok=what[1])
        elif kind == "call":
            events = what(router, t)
        else:
            events = router.tick(t)
        for e in events:
            kind_, rid, replica, _ = tuple(e)
            out.log.append((t, tuple(e)))
            if kind_ in ("dispatch", "retry"):
                out.attempts[rid] += 1
                order += 1
                ok = not fails(replica, t)
                heapq.heappush(queue, (t + service[replica], order, "complete", (rid, ok)))
            elif kind_ == "done":
                out.ends[rid] = "done"
                out.latency[rid] = t - born[rid]
            elif kind_ != "removed":
                out.ends[rid] = kind_  # fail, reject, shed or timeout; queue is overwritten later
    return out


def p99(values) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, -(-99 * len(ordered) // 100) - 1))]
