"""`kata bench slo_batcher`: a deadline batcher against fixed max_wait batching.

- Serving: Poisson arrivals at 30, 60 and 90 % of capacity on one simulated worker whose batch of
  b runs 5 + 0.5·b ms plus seeded noise (exponential, mean 1 ms); SLO 50 ms, max_batch 32, so
  capacity is 32 / 21 ms ≈ 1,524 requests/s. The baseline sends when max_batch are queued or the
  oldest has waited max_wait_ms (1, 10, 30 or 40 ms), whatever the batch will cost to run.
  Against it: the implementation's DeadlineBatcher
  with a LinearCost(5, 0.5) and with an OnlineCost learned from the runs (both plan for
  slo_ms = 45, leaving 5 ms for noise), and the reference with late batches shrunk (its mutant
  late_batch_shrunk). Violations (e2e > 50 ms), throughput, p50 and p99 are printed, each
  against the best fixed setting at that load (the fewest violations, then the lowest p99): a
  ratio, or for violations, whose best is often none, the difference in percentage points. The
  mean batch and the share of time the worker runs show what waiting buys: fewer, bigger batches
  leave the GPU free for longer.
- Cost: microseconds per next_dispatch_time() with 10 and 100,000 requests queued (max_batch
  10⁶, an OnlineCost holding 1,000 observations); the goal is a flat cost.
"""

from __future__ import annotations

import random
import shutil
import time
from collections import deque
from pathlib import Path
from typing import NamedTuple

import numpy as np

from harness import catalog, mutants
from harness.bench import Table
from harness.loader import load_module
from harness.suites.slo_batcher.helpers import Server

FIXED_MS, PER_ITEM_MS, MAX_BATCH, SLO, PLAN_SLO = 5.0, 0.5, 32, 50.0, 45.0
CAPACITY = MAX_BATCH / (FIXED_MS + PER_ITEM_MS * MAX_BATCH)  # requests per ms
LOADS = (0.3, 0.6, 0.9)
WAITS = (1, 10, 30, 40)


class Batch(NamedTuple):
    batch_id: int
    request_ids: tuple
    dispatch_ms: float


class FixedWait:
    """Send when max_batch are queued or the oldest has waited max_wait_ms, as Triton's
    max_queue_delay and TF Serving's batch_timeout do; one worker, blind to run time."""

    def __init__(self, max_wait_ms: float, max_batch: int) -> None:
        self.max_wait_ms, self.max_batch = max_wait_ms, max_batch
        self.queue: deque[tuple[object, float]] = deque()
        self.busy, self.sent, self.batches = False, [], 0

    def __len__(self) -> int:
        return len(self.queue)

    def next_dispatch_time(self) -> float | None:
        if self.busy or not self.queue:
            return None
        return self.queue[0][1] + self.max_wait_ms

    def _send(self, t: float) -> None:
        ids = tuple(self.queue.popleft()[0] for _ in range(min(len(self.queue), self.max_batch)))
        self.sent.append(Batch(self.batches, ids, t))
        self.batches += 1
        self.busy = True

    def _advance(self, now: float) -> None:
        """A timer that expired while the worker was free fires at its own time."""
        timer = self.next_dispatch_time()
        if timer is not None and timer <= now:
            self._send(timer)

    def _plan(self, now: float) -> None:
        timer = self.next_dispatch_time()
        if timer is not None and (timer <= now or len(self.queue) >= self.max_batch):
            self._send(now)

    def add(self, request_id, now: float) -> None:
        self._advance(now)
        self.queue.append((request_id, now))
        self._plan(now)

    def poll(self, now: float) -> list[Batch]:
        self._advance(now)
        sent, self.sent = self.sent, []
        return sent

    def complete(self, batch_id: int, now: float) -> None:
        self.busy = False
        self._plan(now)  # the oldest may have waited past max_wait_ms behind the busy worker


def arrivals(load: float, n: int, seed: int) -> list[tuple[int, float]]:
    rng, t, out = random.Random(seed), 0.0, []
    for i in range(n):
        t += rng.expovariate(load * CAPACITY)
        out.append((i, t))
    return out


def serve(batcher, jobs: list[tuple[int, float]], seed: int) -> dict[str, float]:
    """Violations (%), throughput (requests/s), p50 and p99 e2e (ms), mean batch size, and the
    share of the time the worker was running (%)."""
    rng = random.Random(seed)
    noise = [rng.expovariate(1.0) for _ in jobs]
    server = Server(batcher, lambda b, i: FIXED_MS + PER_ITEM_MS * b + noise[i])
    sent = server.run(jobs)
    arrival = dict(jobs)
    e2e = np.array([s.end - arrival[rid] for s in sent for rid in s.ids])
    span = max(s.end for s in sent) - jobs[0][1]
    running = sum(s.end - s.dispatch for s in sent)
    return {"violations": 100 * float(np.mean(e2e > SLO)), "throughput": 1000 * len(e2e) / span,
            "p50": float(np.percentile(e2e, 50)), "p99": float(np.percentile(e2e, 99)),
            "batch": len(e2e) / len(sent), "busy": 100 * running / span}


def shrinking_reference():
    """The reference with its mutant late_batch_shrunk applied: the variant the prompt rejects."""
    path = mutants.materialise(catalog.get("slo_batcher"), "late_batch_shrunk")
    try:
        return load_module(path, "slo_batcher_shrinking")
    finally:
        shutil.rmtree(path.parent, ignore_errors=True)


def policies(impl, shrinking) -> dict[str, object]:
    def online(module):
        return module.OnlineCost(window=200, prior_fixed_ms=FIXED_MS, prior_per_item_ms=PER_ITEM_MS)

    made = {f"fixed max_wait {w} ms": (lambda w=w: FixedWait(w, MAX_BATCH)) for w in WAITS}
    made["deadline, LinearCost"] = lambda: impl.DeadlineBatcher(
        slo_ms=PLAN_SLO, max_batch=MAX_BATCH, cost=impl.LinearCost(FIXED_MS, PER_ITEM_MS))
    made["deadline, OnlineCost"] = lambda: impl.DeadlineBatcher(
        slo_ms=PLAN_SLO, max_batch=MAX_BATCH, cost=online(impl))
    made["reference, late batches shrunk"] = lambda: shrinking.DeadlineBatcher(
        slo_ms=PLAN_SLO, max_batch=MAX_BATCH, cost=online(shrinking))
    return made


def timer_cost(impl, queued: int, calls: int = 5000) -> float:
    """Microseconds per next_dispatch_time() with `queued` requests waiting (best of 5)."""
    cost = impl.OnlineCost(window=1000, prior_fixed_ms=FIXED_MS, prior_per_item_ms=PER_ITEM_MS)
    rng = random.Random(1)
    for _ in range(1000):
        b = rng.randint(1, MAX_BATCH)
        cost.observe(b, FIXED_MS + PER_ITEM_MS * b + rng.expovariate(1.0))
    batcher = impl.DeadlineBatcher(slo_ms=1e9, max_batch=10**6, cost=cost)
    for i in range(queued):
        batcher.add(i, 0)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            batcher.next_dispatch_time()
        best = min(best, time.perf_counter() - start)
    return best / calls * 1e6


def ratio(x: float, best: float) -> str:
    return f"{x / best:.2f}x"


def points(x: float, best: float) -> str:
    return f"{x - best:+.2f} pts"


def main(impl, *, quick: bool = False, out: Path | None = None) -> Table:
    n = 1500 if quick else 20_000
    shrinking = shrinking_reference()
    table = Table("load", "policy", "violations %", "vs best fixed", "throughput req/s",
                  "vs best fixed", "p50 ms", "vs best fixed", "p99 ms", "vs best fixed",
                  "mean batch", "worker busy %")
    for k, load in enumerate(LOADS):
        jobs = arrivals(load, n, seed=k)
        runs = {name: serve(make(), jobs, seed=100 + k)
                for name, make in policies(impl, shrinking).items()}
        best_name = min((name for name in runs if name.startswith("fixed")),
                        key=lambda name: (runs[name]["violations"], runs[name]["p99"]))
        best = runs[best_name]
        for name, r in runs.items():
            label = f"{name} (best fixed)" if name == best_name else name
            table.add(f"{load:.0%}", label, f"{r['violations']:.2f}",
                      points(r["violations"], best["violations"]), f"{r['throughput']:,.0f}",
                      ratio(r["throughput"], best["throughput"]), f"{r['p50']:.1f}",
                      ratio(r["p50"], best["p50"]), f"{r['p99']:.1f}", ratio(r["p99"], best["p99"]),
                      f"{r['batch']:.1f}", f"{r['busy']:.0f}")
    big = 10_000 if quick else 100_000
    small_us, big_us = timer_cost(impl, 10), timer_cost(impl, big)
    table.notes.append(f"next_dispatch_time(): {small_us:.2f} µs with 10 queued, {big_us:.2f} µs "
                       f"with {big:,} queued (max_batch 10⁶, OnlineCost window 1,000): "
                       f"{big_us / small_us:.2f}x.")
    table.notes.append(f"Capacity {1000 * CAPACITY:,.0f} requests/s; {n:,} requests per run; "
                       f"the deadline batchers plan for slo_ms {PLAN_SLO:g}, violations count "
                       f"e2e > {SLO:g} ms.")
    return table
