"""`kata bench queue_autoscaler`: the scaler against Kubernetes' HPA on utilisation, on a
simulated serving system, and the cost of one `observe`.

- The system: a decision every TICK = 2 s. Each ready replica serves one request at a time, for
  SERVICE = 0.5 s, from one FIFO queue; a request starts only while fewer run than `ready(t)`,
  and a replica removed while serving finishes its request. A new replica is ready STARTUP = 5 s
  after the decision that added it. The SLO is 2 s from arrival to completion.
- The trace: one hour of Poisson arrivals at 4 requests/s, seeded, with three 60 s bursts at 8x.
- Policies: this scaler (`target=2`: by Little's law a 0.5 s replica clears 4 requests within
  the SLO, halved for headroom; stable window 60 s, panic window 6 s, threshold 2, scale-down
  window 60 s, 1 to 64 replicas); the baseline, HPA on utilisation (`ceil(r * u / 0.7)` unless
  `|u / 0.7 - 1| <= 0.1`, `u` the busy replica-time of the last tick over `r * TICK`, the
  maximum recommendation of the last 300 s, same tick, startup and bounds); a fixed fleet sized
  for the peak, `ceil(32 * 0.5 / 0.7) = 23` replicas.
- Figures: SLO violations, p99 latency, replica-seconds and peak replicas, with ratios to the
  baseline; microseconds per `observe` with 10^2, 10^4 and 10^5 samples in the window.
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
import statistics
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from harness.bench import Table, pyplot, save_plots

TICK, SERVICE, STARTUP, SLO = 2, 0.5, 5, 2.0
LOW, HIGH = 1, 64
RATE, BURST_RATE, BURST_S = 4.0, 32.0, 60
HOUR, BURSTS = 3600, (600, 1800, 3000)
SETTINGS = dict(target=2, min_replicas=LOW, max_replicas=HIGH, stable_window_s=60,
                panic_window_s=6, panic_threshold=2, scale_down_window_s=60, startup_s=STARTUP)
FIXED = math.ceil(BURST_RATE * SERVICE / 0.7)


def arrivals(seed: int = 0, horizon: int = HOUR, bursts: tuple[int, ...] = BURSTS) -> list[float]:
    """Poisson arrival times, RATE per second, BURST_RATE during each burst."""
    rng = random.Random(seed)
    edges = sorted({0, horizon, *bursts, *(b + BURST_S for b in bursts)})
    times = []
    for start, end in itertools.pairwise(edges):
        rate = BURST_RATE if any(b <= start < b + BURST_S for b in bursts) else RATE
        t = start + rng.expovariate(rate)
        while t < end:
            times.append(t)
            t += rng.expovariate(rate)
    return times


class Scaler:
    """The scaler under test, with the simulator's interface."""

    def __init__(self, impl) -> None:
        self.scaler = impl.QueueAutoscaler(**SETTINGS)

    def decide(self, now: int, queued: int, in_flight: int, busy: float) -> int:
        return self.scaler.observe(now, queued, in_flight)

    def ready(self, t: float) -> int:
        return self.scaler.ready(t)


class Fleet:
    """Replicas that are ready STARTUP after they are added; the latest ready leave first."""

    def __init__(self, size: int) -> None:
        self.ready_at = [-math.inf] * size

    def resize(self, now: int, total: int) -> int:
        have = len(self.ready_at)
        self.ready_at = self.ready_at[:total] + [now + STARTUP] * (total - have)
        return total

    def ready(self, t: float) -> int:
        return sum(at <= t for at in self.ready_at)


class Hpa(Fleet):
    """The baseline: Kubernetes' HPA on utilisation, a lagging indicator that saturates at 1."""

    def __init__(self, target: float = 0.7, tolerance: float = 0.1, window: int = 300) -> None:
        super().__init__(LOW)
        self.target, self.tolerance, self.window = target, tolerance, window
        self.recommendations: deque[tuple[int, int]] = deque()

    def decide(self, now: int, queued: int, in_flight: int, busy: float) -> int:
        r = max(1, self.ready(now))
        ratio = busy / (r * TICK) / self.target
        want = len(self.ready_at) if abs(ratio - 1) <= self.tolerance else math.ceil(r * ratio)
        self.recommendations.append((now, want))
        while self.recommendations[0][0] <= now - self.window:
            self.recommendations.popleft()
        held = max(w for _, w in self.recommendations)
        return self.resize(now, min(max(held, LOW), HIGH))


class Fixed(Fleet):
    def decide(self, now: int, queued: int, in_flight: int, busy: float) -> int:
        return len(self.ready_at)


@dataclass
class Run:
    latencies: list[float] = field(default_factory=list)
    ticks: list[tuple[int, int, int, int]] = field(default_factory=list)  # t, load, total, ready

    @property
    def violations(self) -> int:
        return sum(latency > SLO for latency in self.latencies)

    @property
    def replica_seconds(self) -> int:
        return sum(total for _, _, total, _ in self.ticks) * TICK

    @property
    def peak(self) -> int:
        return max(total for _, _, total, _ in self.ticks)

    @property
    def p99(self) -> float:
        ordered = sorted(self.latencies)
        return ordered[math.ceil(0.99 * len(ordered)) - 1]


def simulate(policy, times: list[float], horizon: int = HOUR) -> Run:
    """Serve `times` under `policy`; decide at every tick until the horizon is past and every
    request has completed. Events between ticks: completions, replicas becoming ready,
    arrivals, in time order; requests start whenever one of them frees capacity."""
    run, queue, running, wakes = Run(), deque(), [], []  # running, wakes: heaps of times
    pending = deque(times)
    clock, busy = 0.0, 0.0  # busy: replica-seconds spent serving since the last tick

    def advance(t: float) -> None:
        nonlocal clock, busy
        busy += len(running) * (t - clock)
        clock = t

    def start(t: float) -> None:
        while queue and len(running) < policy.ready(t):
            heapq.heappush(running, t + SERVICE)
            run.latencies.append(t + SERVICE - queue.popleft())

    now, total = 0, None
    while now < horizon or queue or running or pending:
        while True:
            t = min(running[0] if running else math.inf, wakes[0] if wakes else math.inf,
                    pending[0] if pending else math.inf)
            if t > now:
                break
            advance(t)
            if running and running[0] == t:
                heapq.heappop(running)
            elif wakes and wakes[0] == t:
                heapq.heappop(wakes)
            else:
                queue.append(pending.popleft())
            start(t)
        advance(now)
        before = total
        total = policy.decide(now, len(queue), len(running), busy)
        busy = 0.0
        if before is not None and total > before:
            heapq.heappush(wakes, now + STARTUP)
        run.ticks.append((now, len(queue) + len(running), total, policy.ready(now)))
        start(now)
        now += TICK
    return run


def observe_cost(impl, samples: int, calls: int = 300, rounds: int = 5) -> float:
    """Microseconds per `observe` with `samples` samples in every window, best of `rounds`."""
    scaler = impl.QueueAutoscaler(target=1, max_replicas=100, stable_window_s=samples,
                                  panic_window_s=samples, scale_down_window_s=samples)
    for t in range(samples):
        scaler.observe(t, t % 7, 1)
    best, t = math.inf, samples
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            scaler.observe(t, t % 7, 1)
            t += 1
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def runs(impl, times: list[float], horizon: int) -> dict[str, Run]:
    policies = {"HPA on utilisation (baseline)": Hpa, "queue autoscaler": lambda: Scaler(impl),
                f"fixed fleet of {FIXED}": lambda: Fixed(FIXED)}
    return {name: simulate(make(), times, horizon) for name, make in policies.items()}


def main(impl, *, quick: bool = False, out: Path | None = None) -> Table:
    horizon, bursts = (900, (300,)) if quick else (HOUR, BURSTS)
    results = runs(impl, arrivals(0, horizon, bursts), horizon)
    base = results["HPA on utilisation (baseline)"]
    table = Table("policy", "SLO violations (> 2 s)", "p99 latency (s)", "replica-seconds",
                  "peak replicas", "violations / baseline", "replica-seconds / baseline")
    for name, r in results.items():
        table.add(name, f"{r.violations:,} of {len(r.latencies):,}", f"{r.p99:.2f}",
                  f"{r.replica_seconds:,}", r.peak, f"{r.violations / base.violations:.3f}",
                  f"{r.replica_seconds / base.replica_seconds:.2f}")
    sizes = (100, 1000, 10_000) if quick else (100, 10_000, 100_000)
    costs = [observe_cost(impl, n) for n in sizes]
    table.notes.append("µs per observe with " + ", ".join(
        f"{n:,} samples in the window: {c:.2f}" for n, c in zip(sizes, costs, strict=True)) + ".")
    if out is not None:
        plot_burst(results["queue autoscaler"], base, bursts[0], Path(out))
    return table


def window_means(ticks, width: int) -> list[float]:
    """The mean load over (t - width, t] at every tick, as the scaler's windows hold it."""
    means = []
    for t, _, _, _ in ticks:
        window = [load for u, load, _, _ in ticks if t - width < u <= t]
        means.append(statistics.mean(window))
    return means


def plot_burst(run: Run, base: Run, burst: int, out: Path) -> None:
    """One burst: the load and both means; the scaler's ready and starting replicas; HPA's."""
    shown = [k for k, tick in enumerate(run.ticks) if burst - 60 <= tick[0] <= burst + 240]
    ticks = run.ticks[shown[0] - 30:shown[-1] + 1]  # 60 s of history for the means
    means = {w: window_means(ticks, w)[30:] for w in (SETTINGS["stable_window_s"],
                                                       SETTINGS["panic_window_s"])}
    ticks = ticks[30:]
    t = [tick[0] - burst for tick in ticks]
    ready = [tick[3] for tick in ticks]
    starting = [tick[2] - tick[3] for tick in ticks]
    hpa = {tick[0]: tick[2] for tick in base.ticks}

    def draw(say):
        fig, (top, bottom) = pyplot().subplots(2, 1, figsize=(9, 6.5), sharex=True)
        top.plot(t, [tick[1] for tick in ticks], color="0.6", linewidth=0.8,
                 label=say("load: queued + in flight", "負載：排隊中 + 處理中"))
        top.plot(t, means[6], label=say("panic-window mean (6 s)", "panic 視窗平均（6 秒）"))
        top.plot(t, means[60], label=say("stable-window mean (60 s)", "stable 視窗平均（60 秒）"))
        top.axvspan(0, BURST_S, color="orange", alpha=0.15, zorder=0,
                    label=say("burst: 8x arrivals", "突發：8 倍到達率"))
        top.set(ylabel=say("requests", "請求數"), ylim=(0, None))
        top.legend(loc="upper right")
        bottom.stackplot(t, ready, starting, step="post", colors=["tab:blue", "tab:cyan"],
                         labels=[say("ready", "就緒"), say("starting", "啟動中")],
                         alpha=0.8, zorder=1)
        bottom.step(t, [hpa[tick[0]] for tick in ticks], where="post", color="k",
                    linestyle="--", linewidth=1,
                    label=say("HPA on utilisation: total", "依使用率的 HPA：總數"))
        bottom.axvspan(0, BURST_S, color="orange", alpha=0.15, zorder=0)
        bottom.set(xlabel=say("time from the start of the burst (s)", "從突發開始起算的時間（秒）"),
                   ylabel=say("replicas", "replica 數"), ylim=(0, None))
        bottom.legend(loc="upper right")
        fig.tight_layout()
        return fig

    save_plots(out / "queue_autoscaler-burst.png", draw, dpi=110)
