"""`kata bench compatible_batcher`: one mixed workload on the simulated single-worker server.

8 models with Zipf popularity, lengths log-uniform over 16..2048 tokens (three buckets at 128
and 512), four sampling settings, Poisson arrivals at a light and a heavy load; the GPU holds 3
models, a swap costs 200 ms and a batch costs 4 ms + 2 us per padded token. Everything runs on the
simulated clock, so the figures do not depend on the machine.

- Multiplexing: swaps per 1,000 requests and p50/p99 wait (arrival to start) for FIFO order
  (the baseline: starvation_ms=0 always takes the oldest batch) vs the Level 3 policy.
- Buckets (heavy load): padding waste (padded tokens per real token) with no boundaries (the
  baseline) vs two and four.
- Sampling (heavy load): batches per 1,000 requests with sampling parameters in the key (the
  baseline) vs per-row sampling.
"""

from __future__ import annotations

import math
import random
import statistics
from pathlib import Path

from harness.bench import Table
from harness.suites.compatible_batcher.server import serve

MODELS = [(f"model-{i}", "v1", "fp16") for i in range(8)]
ZIPF_S = 1.1
SAMPLING = [(0.0, 1.0, ()), (0.7, 0.9, ()), (1.0, 0.95, ("</s>",)), (0.7, 0.9, ("\n\n",))]
LOADS = {"light": 10.0, "heavy": 100.0}  # arrivals per second
SWAP_MS, CAPACITY, MAX_BATCH, MAX_WAIT_MS = 200.0, 3, 16, 200.0
THREE_BUCKETS, FIVE_BUCKETS = (128, 512), (64, 128, 512, 1024)
STARVATION_MS = [0, 1000, 3000]


def workload(impl, n: int, rate_per_s: float, seed: int = 0) -> list:
    rng = random.Random(seed)
    weights = [1 / (k + 1) ** ZIPF_S for k in range(len(MODELS))]
    t, out = 0.0, []
    for i in range(n):
        t += rng.expovariate(rate_per_s / 1000)
        model, version, dtype = rng.choices(MODELS, weights)[0]
        temperature, top_p, stop = rng.choice(SAMPLING)
        out.append(impl.Request(request_id=i, model=model, version=version, dtype=dtype,
                                length=int(math.exp(rng.uniform(math.log(16), math.log(2048)))),
                                arrival_ms=round(t, 3), temperature=temperature, top_p=top_p,
                                stop=stop))
    return out


def run_ms(batch: list) -> float:
    return 4.0 + 0.002 * len(batch) * max(r.length for r in batch)


class Run:
    def __init__(self, impl, reqs, *, starvation_ms: float, length_buckets=THREE_BUCKETS,
                 per_row_sampling: bool = True):
        _, starts = serve(impl, reqs, max_batch_size=MAX_BATCH, max_wait_ms=MAX_WAIT_MS,
                          capacity=CAPACITY, starvation_ms=starvation_ms, swap_ms=SWAP_MS,
                          run_ms=run_ms, length_buckets=length_buckets,
                          per_row_sampling=per_row_sampling)
        waits = sorted(s.at_ms - r.arrival_ms for s in starts for r in s.batch)
        self.per_k = 1000 / len(reqs)
        self.swaps = sum(s.swapped for s in starts) * self.per_k
        self.batches = len(starts) * self.per_k
        self.mean_batch = statistics.fmean(len(s.batch) for s in starts)
        self.p50 = waits[len(waits) // 2]
        self.p99 = waits[min(len(waits) - 1, int(0.99 * len(waits)))]
        tokens = sum(r.length for r in reqs)
        self.padding = sum(impl.padding_waste(s.batch) for s in starts) / tokens


def row(table: Table, scenario: str, setting: str, run: Run, note: str = "") -> None:
    if run.p99 > 60_000:  # the ready list grows for the whole run: the wait is the run's length
        note = " ".join(["overloaded: swaps outrun the GPU and the backlog grows without bound.",
                         note]).strip()
    table.add(scenario, setting, f"{run.swaps:.0f}", f"{run.p50:,.0f}", f"{run.p99:,.0f}",
              f"{run.batches:.0f}", f"{run.mean_batch:.2f}", f"{100 * run.padding:.1f}%", note)


def main(impl, *, quick: bool = False, out: Path | None = None) -> Table:
    n = 1_000 if quick else 10_000
    table = Table("scenario", "setting", "swaps / 1k req", "p50 wait ms", "p99 wait ms",
                  "batches / 1k req", "mean batch", "padding / real tokens", "note")
    for load, rate in LOADS.items():
        reqs = workload(impl, n, rate)
        scenario = f"multiplexing, {load}: {rate:g} req/s"
        fifo = Run(impl, reqs, starvation_ms=0)
        row(table, scenario, "FIFO order (baseline)", fifo)
        for starvation in STARVATION_MS[1:]:
            policy = Run(impl, reqs, starvation_ms=starvation)
            row(table, scenario, f"Level 3 policy, starvation_ms={starvation}", policy,
                f"{fifo.swaps / max(policy.swaps, 1e-9):.1f}x fewer swaps, p99 wait "
                f"{fifo.p99 / max(policy.p99, 1e-9):.1f}x lower than FIFO")
    reqs, starvation = workload(impl, n, LOADS["heavy"]), STARVATION_MS[-1]
    heavy = f"heavy load, starvation_ms={starvation}"
    flat = Run(impl, reqs, starvation_ms=starvation, length_buckets=())
    row(table, f"buckets, {heavy}", "no boundaries (baseline)", flat)
    for bounds in (THREE_BUCKETS, FIVE_BUCKETS):
        run = Run(impl, reqs, starvation_ms=starvation, length_buckets=bounds)
        row(table, f"buckets, {heavy}", f"{len(bounds)} boundaries {bounds}", run,
            f"{flat.padding / max(run.padding, 1e-9):.1f}x less padding than no boundaries")
    in_key = Run(impl, reqs, starvation_ms=starvation, per_row_sampling=False)
    row(table, f"sampling, {heavy}", "sampling parameters in the key (baseline)", in_key)
    per_row = Run(impl, reqs, starvation_ms=starvation, per_row_sampling=True)
    row(table, f"sampling, {heavy}", "per-row sampling", per_row,
        f"{in_key.batches / per_row.batches:.1f}x fewer batches, mean batch "
        f"{per_row.mean_batch / in_key.mean_batch:.1f}x larger")
    return table
