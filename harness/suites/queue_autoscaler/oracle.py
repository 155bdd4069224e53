"""The prompt read plainly: every sample and every recommendation kept, every window scanned,
one ready time per replica. Slow and obviously faithful; it never validates (tests give it
valid settings and calls only)."""

from __future__ import annotations

import math


class Oracle:
    def __init__(self, *, target, max_replicas, min_replicas=1, stable_window_s=60.0,
                 max_scale_up_rate=1000.0, max_scale_down_rate=2.0, panic_window_s=None,
                 panic_threshold=2.0, scale_down_window_s=0.0, startup_s=0.0, idle_grace_s=0.0):
        self.target, self.lo, self.hi = target, min_replicas, max_replicas
        self.stable_w, self.panic_w, self.down_w = stable_window_s, panic_window_s, \
            scale_down_window_s
        self.up_rate, self.down_rate, self.threshold = max_scale_up_rate, max_scale_down_rate, \
            panic_threshold
        self.startup, self.grace = startup_s, idle_grace_s
        self.samples: list[tuple[float, int]] = []
        self.recorded: list[tuple[float, int]] = []
        self.ready_at = [-math.inf] * min_replicas
        self.panicking = False
        self.last_over = None
        self.last_active = None

    @property
    def replicas(self) -> int:
        return len(self.ready_at)

    def ready(self, now) -> int:
        return sum(at <= now for at in self.ready_at)

    def mean(self, now, w) -> float:
        loads = [load for t, load in self.samples if now - w < t <= now]
        return sum(loads) / len(loads)

    def observe(self, now, queued, in_flight) -> int:
        load = queued + in_flight
        self.samples.append((now, load))
        before = self.replicas
        r = max(1, self.ready(now))
        stable = math.ceil(self.mean(now, self.stable_w) / self.target)
        up, down = math.ceil(self.up_rate * r), math.floor(r / self.down_rate)
        d = min(max(stable, down), up)
        if self.panic_w is not None:
            panic = math.ceil(self.mean(now, self.panic_w) / self.target)
            if panic >= self.threshold * r:
                self.panicking, self.last_over = True, now
            elif self.panicking and now - self.last_over > self.stable_w:
                self.panicking = False
            if self.panicking:
                d = max(d, min(max(panic, down), up), before)
        earlier = [x for t, x in self.recorded if t > now - self.down_w]
        self.recorded.append((now, d))
        d = max([d, *earlier])
        d = min(max(d, self.lo), self.hi)
        if load > 0:
            self.last_active = now
        if d == 0 and self.last_active is not None and now - self.last_active <= self.grace:
            d = 1
        if d > before:
            self.ready_at += [now + self.startup] * (d - before)
        for _ in range(before - d):  # the replica that is ready latest leaves first
            self.ready_at.remove(max(self.ready_at))
        return d
