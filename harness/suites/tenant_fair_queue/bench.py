"""`kata bench tenant_fair_queue`: FIFO against DRR, VTC and guaranteed shares on a simulated
continuous-batching engine (8 slots, one token per running request per step, time in steps).

- Flood: a heavy tenant bursts 200 requests at step 0, a light tenant sends 20 (10x fewer), one
  every 10 steps; weights 1 and 1. The light tenant's mean and p99 wait (arrival to admission),
  and the mean as a fraction of FIFO's (the baseline).
- Backlogged: three tenants with weights 1, 1 and 2 burst 300 requests each at step 0; A's
  outputs are long (32 tokens), B's short (4), C's mixed. Each tenant's share of the tokens
  generated while all three are backlogged (the goal is its weight share: 0.25, 0.25, 0.50), its
  share of priced service (prompt + 2 x output tokens: what VTC equalises), and Jain's fairness
  index of generated tokens / weight over windows of 25 steps (1.0 is perfectly fair).
  DRR has no weights; its cost is prompt + output tokens, known up front here (a real router
  would have to guess the output).
- Cost of pop (DRR, VTC) with 10 and 10,000 tenants kept backlogged, in microseconds per call.
"""

from __future__ import annotations

import math
import statistics
import time
from pathlib import Path

from harness.bench import Table
from harness.suites.tenant_fair_queue.engine import Fifo, Job, PopAdmission, flood, simulate, waits

CAPACITY, WINDOW = 8, 25
WEIGHTS = {"A": 1, "B": 1, "C": 2}


def policies(impl, weights, jobs):
    cost = {j.rid: j.prompt + j.output for j in jobs}
    return {
        "FIFO (baseline)": lambda: Fifo(CAPACITY),
        "DRR (quantum 32)": lambda: PopAdmission(impl.DeficitRoundRobin(32), CAPACITY,
                                                 cost.__getitem__),
        "VTC": lambda: PopAdmission(impl.VirtualTokenCounter(weights), CAPACITY, charges=True),
        "Level 3 shares": lambda: impl.FairScheduler(CAPACITY, weights, max_queued=10_000),
    }


def backlogged(n: int) -> list[Job]:
    outputs = {"A": lambda i: 32, "B": lambda i: 4, "C": lambda i: 4 + (11 * i) % 29}
    return [Job(t, f"{t}{i}", 0, 8, outputs[t](i)) for t in WEIGHTS for i in range(n)]


def shares_and_jain(trace, jobs) -> tuple[dict[str, float], dict[str, float], float]:
    """(token shares, priced-service shares, mean Jain index) while all three are backlogged:
    up to the first step at which some tenant has no request left waiting (its last admission).
    Priced service counts prompt tokens at admission (price 1) and each output token (price 2)."""
    last_admit = {t: max(trace.start[j.rid] for j in jobs if j.tenant == t) for t in WEIGHTS}
    end = min(last_admit.values())
    tokens, priced = dict.fromkeys(WEIGHTS, 0), dict.fromkeys(WEIGHTS, 0)
    windows: dict[int, dict[str, int]] = {}
    for step, tenant in trace.tokens:
        if step < end:
            tokens[tenant] += 1
            priced[tenant] += 2
            windows.setdefault(step // WINDOW, dict.fromkeys(WEIGHTS, 0))[tenant] += 1
    for j in jobs:
        if trace.start[j.rid] < end:
            priced[j.tenant] += j.prompt
    jain = []
    for counts in windows.values():
        x = [counts[t] / WEIGHTS[t] for t in WEIGHTS]
        jain.append(sum(x) ** 2 / (len(x) * sum(v * v for v in x)))
    return ({t: tokens[t] / sum(tokens.values()) for t in WEIGHTS},
            {t: priced[t] / sum(priced.values()) for t in WEIGHTS}, statistics.mean(jain))


def pop_cost(make, tenants: int, pops: int) -> float:
    """Microseconds per pop with `tenants` tenants backlogged throughout (each served request is
    replaced by a new one of the same tenant, pushed outside the timed pop)."""
    q = make()
    for t in range(tenants):
        for k in range(2):
            q.push(t, (t, k), 1 + (t * 7 + k) % 5)
    spent, n = 0.0, tenants * 2
    for _ in range(pops):
        start = time.perf_counter()
        tenant, _ = q.pop()
        spent += time.perf_counter() - start
        q.push(tenant, ("new", n), 1 + n % 5)
        n += 1
    return spent / pops * 1e6


def p99(values: list[int]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)]


def main(impl, *, quick: bool = False, out: Path | None = None) -> Table:
    fjobs = flood()
    bjobs = backlogged(60 if quick else 300)
    flood_runs = {name: simulate(make(), fjobs)
                  for name, make in policies(impl, {"heavy": 1, "light": 1}, fjobs).items()}
    back_runs = {name: simulate(make(), bjobs) for name, make in
                 policies(impl, WEIGHTS, bjobs).items()}
    fifo_mean = statistics.mean(waits(flood_runs["FIFO (baseline)"], fjobs, "light"))
    big, pops = (1000, 50) if quick else (10_000, 200)
    costs = {
        "DRR (quantum 32)": [pop_cost(lambda: impl.DeficitRoundRobin(32), n, pops)
                             for n in (10, big)],
        "VTC": [pop_cost(lambda: impl.VirtualTokenCounter(), n, pops) for n in (10, big)],
    }
    table = Table("policy", "light mean wait (steps)", "light p99 wait",
                  "light mean / FIFO", "generated-token shares A, B, C (weights .25, .25, .50)",
                  "priced-service shares A, B, C",
                  f"Jain index of tokens / weight ({WINDOW}-step windows)", "pop µs at 10 tenants",
                  f"pop µs at {big:,} tenants")
    for name in flood_runs:
        light = waits(flood_runs[name], fjobs, "light")
        shares, priced, jain = shares_and_jain(back_runs[name], bjobs)
        pop = costs.get(name)
        table.add(name, f"{statistics.mean(light):.2f}", p99(light),
                  f"{statistics.mean(light) / fifo_mean:.3f}",
                  ", ".join(f"{shares[t]:.2f}" for t in WEIGHTS),
                  ", ".join(f"{priced[t]:.2f}" for t in WEIGHTS), f"{jain:.3f}",
                  f"{pop[0]:.1f}" if pop else "-", f"{pop[1]:.1f}" if pop else "-")
    return table
