"""`kata bench inference_router`: three measurements of the router on a simulated clock.

- Overload: 4 replicas of capacity 1, 1.0 s deterministic service, Poisson arrivals at 8/s (2x
  capacity) for 300 s, 20 % priority 0, 30 % priority 1, 50 % priority 3; queue_limit 8,
  queue_timeout_s 2, seed 0. Priority shedding against FIFO tail-drop, the same router with every
  request submitted at priority 1 (the baseline). p0 goodput is the share of priority-0 requests
  completed; p0 p99 is their 99th-percentile latency (arrival to done); completions per second
  count every class.
- Retries: 5 replicas of capacity 2, one of which fails every attempt after 0.1 s while the
  others serve in 1.0 s; Poisson arrivals at 4/s for 300 s, max_attempts 3, queue_limit 16.
  Attempts dispatched per request with no budget (every retry allowed), with Envoy's default
  budget (20 %, at least 3 in flight), and with the budget plus ejection after 5 consecutive
  failures (30 s base, 20 % cap).
- Cost per call: microseconds per submit, tick and complete with 1,000 and 100,000 requests
  queued in one pool.
"""

from __future__ import annotations

import time
from pathlib import Path

from harness.bench import Table
from harness.suites.inference_router.sim import Arrival, p99, poisson, run

MIX = ((0, 0.2), (1, 0.3), (3, 0.5))


def overload(impl, arrivals: list[Arrival], fifo: bool):
    r = impl.InferenceRouter(queue_limit=8, queue_timeout_s=2)
    for i in range(4):
        r.add_replica(0, f"r{i}", "m", "v1", 1)
    r.set_split(0, "m", {"v1": 100})
    if fifo:
        arrivals = [Arrival(a.t, a.rid, a.key, 1, a.cls) for a in arrivals]
    return run(r, "m", arrivals, {f"r{i}": 1.0 for i in range(4)})


def retries(impl, arrivals: list[Arrival], **settings):
    r = impl.InferenceRouter(queue_limit=16, max_attempts=3, **settings)
    service = {"bad": 0.1, **{f"r{i}": 1.0 for i in range(4)}}
    for replica in service:
        r.add_replica(0, replica, "m", "v1", 2)
    r.set_split(0, "m", {"v1": 100})
    return run(r, "m", arrivals, service, fails=lambda replica, t: replica == "bad")


def cost_per_call(impl, queued: int, rounds: int) -> float:
    """Microseconds per call with `queued` requests waiting behind two busy replicas: the best
    of 10 batches of `rounds` rounds of submit, tick, complete and submit (the machine may be
    shared, so the best batch is the router's own cost)."""
    r = impl.InferenceRouter(queue_limit=queued, queue_timeout_s=10**9, max_attempts=2)
    r.add_replica(0, "a", "m", "v1", 1)
    r.add_replica(0, "b", "m", "v1", 1)
    r.set_split(0, "m", {"v1": 100})
    running = [e[1] for name in ("x", "y") for e in r.submit(0, name, "m", "k")]
    for i in range(queued):
        r.submit(1, f"q{i}", "m", "k", i % 4)
    n, batches = 0, []
    for _ in range(10):
        start = time.perf_counter()
        for _ in range(rounds):
            r.submit(2, f"n{n}", "m", "k", 3)  # rejected: nothing queued is worse
            r.tick(2)
            got = r.complete(2, running.pop(0), ok=n % 2 == 0)  # a failure finds no free replica
            running += [e[1] for e in got if e[0] in ("dispatch", "retry")]
            r.submit(2, f"p{n}", "m", "k", 0)  # takes the place that was freed
            n += 1
        batches.append(time.perf_counter() - start)
    return min(batches) / (4 * rounds) * 1e6


def main(impl, *, quick: bool = False, out: Path | None = None) -> Table:
    duration = 60 if quick else 300
    table = Table("experiment", "variant", "p0 goodput", "p0 p99 latency (s)",
                  "completions / s", "attempts / request", "success %")
    load = poisson(8, duration, 0, MIX)
    p0 = [a.rid for a in load if a.cls == 0]
    for name, fifo in (("FIFO tail-drop, all at priority 1 (baseline)", True),
                       ("priority shedding", False)):
        got = overload(impl, load, fifo)
        served = [got.latency[rid] for rid in p0 if rid in got.latency]
        table.add("2x overload", name, f"{len(served) / len(p0):.3f}", f"{p99(served):.2f}",
                  f"{len(got.latency) / duration:.2f}", "-", "-")
    load = poisson(4, duration, 1)
    for name, settings in (
            ("no budget", {"retry_budget_percent": 100, "min_retry_concurrency": 10**6}),
            ("budget 20 %, at least 3", {}),
            ("budget and ejection after 5 failures",
             {"consecutive_failures": 5, "max_ejection_percent": 20})):
        got = retries(impl, load, **settings)
        attempts = sum(got.attempts.values()) / len(load)
        done = sum(end == "done" for end in got.ends.values())
        table.add("one replica always failing", name, "-", "-",
                  f"{len(got.latency) / duration:.2f}", f"{attempts:.2f}",
                  f"{100 * done / len(load):.1f}")
    big, rounds = (10_000, 50) if quick else (100_000, 200)
    small_cost, big_cost = cost_per_call(impl, 1000, rounds), cost_per_call(impl, big, rounds)
    table.notes.append(f"Cost per call (submit, tick, complete): {small_cost:.1f} µs with 1,000 "
                       f"queued, {big_cost:.1f} µs with {big:,} queued: "
                       f"{big_cost / small_cost:.2f}x.")
    table.notes.append("Overload: 4 replicas of capacity 1, 1 s service, Poisson 8/s (2x capacity) "
                       f"for {duration} s, 20 % p0 / 30 % p1 / 50 % p3, queue_limit 8, "
                       "queue_timeout_s 2. Retries: 5 replicas of capacity 2, one failing every "
                       f"attempt in 0.1 s, Poisson 4/s for {duration} s, max_attempts 3.")
    return table
