"""`kata bench sync_batch_scheduler`: the max_wait_ms dial, saturation, and scheduler overhead.

- Sweep: a simulated GPU (a fixed cost per call plus a cost per request, slept) under Poisson
  arrivals from many threads, at a light and a heavy load, for max_wait_ms in 0..50: throughput,
  mean batch size, p50 and p99 latency. The baseline is the same GPU with no batching
  (max_batch_size=1). With `out`, the trade-off is drawn to a PNG.
- Saturation: 20 ms per call for up to 32 requests and 128 callers in a closed loop; the ideal is
  32 / 20 ms = 1,600 requests/s (goal: at least 95 % of it).
- Overhead: an identity run_batch and closed-loop callers at 1, 8 and 64 threads, in
  microseconds of wall time per request (goal: at most 50 us at 8 threads).
"""

from __future__ import annotations

import random
import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.bench import Table, pyplot, save_plots

FIXED_MS, PER_ITEM_MS, MAX_BATCH = 5.0, 0.1, 32
LOADS = {"light": 300.0, "heavy": 2000.0}  # arrivals per second
WAITS = [0, 1, 2, 5, 10, 20, 50]


@dataclass
class GPU:
    """A run_batch that sleeps fixed_ms + per_item_ms * n and records the batch sizes."""

    fixed_ms: float
    per_item_ms: float = 0.0
    sizes: list[int] = field(default_factory=list)

    def __call__(self, requests: list) -> list:
        self.sizes.append(len(requests))
        time.sleep((self.fixed_ms + self.per_item_ms * len(requests)) / 1000)
        return requests


@dataclass
class Run:
    seconds: float
    latencies: list[float]
    sizes: list[int]

    @property
    def throughput(self) -> float:
        return len(self.latencies) / self.seconds

    @property
    def mean_batch(self) -> float:
        return statistics.fmean(self.sizes) if self.sizes else 0.0

    def percentile_ms(self, q: float) -> float:
        ordered = sorted(self.latencies)
        return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def drive(scheduler, callers: int, seconds: float, rate: float | None, seed: int = 0) -> tuple:
    """`callers` threads submit until `seconds` pass: Poisson arrivals at `rate` per second in
    total, or back to back (a closed loop) when rate is None. Returns (wall seconds, latencies)."""
    start = time.monotonic() + 0.02
    stop = start + seconds
    results: list[list[float]] = []

    def caller(i: int) -> None:
        rng, mine, due = random.Random(seed * 1000 + i), [], start
        while True:
            if rate is not None:
                due += rng.expovariate(rate / callers)
                if due >= stop:
                    break
                if (pause := due - time.monotonic()) > 0:
                    time.sleep(pause)
            elif time.monotonic() >= stop:
                break
            began = time.monotonic()
            scheduler.submit(i)
            mine.append(time.monotonic() - began)
        results.append(mine)

    threads = [threading.Thread(target=caller, args=(i,), daemon=True) for i in range(callers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.monotonic() - start, [x for mine in results for x in mine]


def sweep_once(impl, rate: float, max_wait_ms: float, seconds: float, max_batch: int,
               callers: int = 64) -> Run:
    gpu = GPU(FIXED_MS, PER_ITEM_MS)
    with impl.BatchScheduler(gpu, max_batch_size=max_batch, max_wait_ms=max_wait_ms) as s:
        wall, latencies = drive(s, callers=callers, seconds=seconds, rate=rate)
    return Run(wall, latencies, gpu.sizes)


def saturation(impl, seconds: float) -> Run:
    gpu = GPU(20.0)
    with impl.BatchScheduler(gpu, max_batch_size=32, max_wait_ms=5) as s:
        wall, latencies = drive(s, callers=128, seconds=seconds, rate=None)
    return Run(wall, latencies, gpu.sizes)


def overhead(impl, threads: int, seconds: float) -> Run:
    sizes: list[int] = []

    def identity(requests: list) -> list:
        sizes.append(len(requests))
        return requests

    with impl.BatchScheduler(identity, max_batch_size=64, max_wait_ms=0) as s:
        wall, latencies = drive(s, callers=threads, seconds=seconds, rate=None)
    return Run(wall, latencies, sizes)


def row(table: Table, scenario: str, wait: object, run: Run, note: str = "") -> None:
    table.add(scenario, wait, f"{run.throughput:,.0f}", f"{run.mean_batch:.1f}",
              f"{run.percentile_ms(0.50):.2f}", f"{run.percentile_ms(0.99):.2f}", note)


def plot(sweeps: dict[str, list[tuple[float, Run]]], path: Path) -> None:
    rates = {k: f"{v:,.0f}" for k, v in LOADS.items()}

    def draw(say):
        # 9 in wide at 120 dpi: 1,080 px, shown a little smaller in the docs' column.
        fig, (left, right) = pyplot().subplots(1, 2, figsize=(9, 4.4))
        for load, runs in sweeps.items():
            waits = [w for w, _ in runs]
            name = say(f"{load} load", f"{load} 負載")
            left.plot(waits, [r.mean_batch for _, r in runs], "o-", label=name)
            right.plot(waits, [r.percentile_ms(0.5) for _, r in runs], "o-", label=f"{name} p50")
            right.plot(waits, [r.percentile_ms(0.99) for _, r in runs], "s--",
                       label=f"{name} p99")
        for ax in (left, right):
            ax.set_xscale("symlog", linthresh=1)
            ax.set_xlabel(say("max_wait_ms (ms, log scale past 1)",
                              "max_wait_ms（毫秒，1 以上為對數刻度）"))
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
            ax.legend()
        left.set_ylabel(say("mean batch size (requests)", "平均批次大小（請求數）"))
        right.set_ylabel(say("latency (ms)", "延遲（毫秒）"))
        loads = ", ".join(f"{k} {v} req/s" for k, v in rates.items())
        fig.suptitle(say(f"Waiting longer buys bigger batches and costs latency\n({loads}; "
                         f"GPU {FIXED_MS:g} ms + {PER_ITEM_MS:g} ms/request)",
                         f"等得越久，批次越大，延遲也越高\n（{loads}；"
                         f"GPU {FIXED_MS:g} ms + 每個請求 {PER_ITEM_MS:g} ms）"))
        fig.tight_layout()
        return fig

    save_plots(path, draw)


def main(impl, *, quick: bool = False, out: Path | None = None) -> Table:
    seconds, callers = (0.15, 16) if quick else (2.0, 64)
    waits = [0, 10] if quick else WAITS
    table = Table("scenario", "max_wait_ms", "req/s", "mean batch", "p50 ms", "p99 ms", "note")
    sweeps: dict[str, list[tuple[float, Run]]] = {}
    for load, rate in LOADS.items():
        sweeps[load] = [(w, sweep_once(impl, rate, w, seconds, MAX_BATCH, callers))
                        for w in waits]
        for w, run in sweeps[load]:
            row(table, f"{load}: {rate:,.0f} req/s offered", w, run)
    heavy = LOADS["heavy"]
    baseline = sweep_once(impl, heavy, 0, seconds, 1, callers)
    best = max(run.throughput for _, run in sweeps["heavy"])
    row(table, f"baseline, no batching: {heavy:,.0f} req/s offered", 0, baseline,
        f"batching serves {best / baseline.throughput:.1f}x the baseline's throughput")

    sat = saturation(impl, 0.2 if quick else 3.0)
    row(table, "saturation: 20 ms per batch of <= 32, 128 callers", 5, sat,
        f"{100 * sat.throughput / 1600:.1f}% of the ideal 1,600 req/s (goal >= 95%)")
    for threads in (1, 8, 64):
        run = overhead(impl, threads, 0.1 if quick else 1.5)
        us = 1e6 * run.seconds / max(1, len(run.latencies))
        goal = " (goal <= 50 at 8 threads)" if threads == 8 else ""
        row(table, f"overhead: identity run_batch, {threads} threads", 0, run,
            f"{us:.1f} us/request{goal}")
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        plot(sweeps, out / "sync_batch_scheduler-tradeoff.png")
    return table
