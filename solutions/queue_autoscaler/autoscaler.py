"""Scale inference replicas on queue depth: a stable window with rate limits, panic mode,
scale-down stabilisation, cold starts and scale-to-zero (after Knative's pod autoscaler)."""

from __future__ import annotations

import bisect
import math
from collections import deque


def _number(value: object) -> bool:
    # bool is an int subclass, but True as a time or a rate is a bug, not a number.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check(name: str, value: object, ok: bool, expected: str) -> None:
    if not ok:
        raise ValueError(f"{name} must be {expected}, got {value!r}")


def _finite_above(name: str, value: object, low: float, *, strict: bool) -> None:
    ok = _number(value) and math.isfinite(value) and (value > low if strict else value >= low)
    _check(name, value, ok, f"a finite number {'>' if strict else '>='} {low}")


def _count(name: str, value: object, low: int) -> None:
    _check(name, value, isinstance(value, int) and not isinstance(value, bool) and value >= low,
           f"an int >= {low}")


class Window:
    """The samples with now - width < t <= now, and the running sum of their loads."""

    def __init__(self, width: float) -> None:
        self.width = width
        self.samples: deque[tuple[float, int]] = deque()
        self.total = 0

    def add(self, now: float, load: int) -> float:
        """Record (now, load); return the mean load over the window."""
        self.samples.append((now, load))
        self.total += load
        while self.samples[0][0] <= now - self.width:
            self.total -= self.samples.popleft()[1]
        return self.total / len(self.samples)


class MaxWindow:
    """The maximum of the values recorded at now - width < t <= now: a monotone deque, whose
    values decrease from front to back, so the front is the maximum."""

    def __init__(self, width: float) -> None:
        self.width = width
        self.items: deque[tuple[float, int]] = deque()

    def add(self, now: float, value: int) -> int:
        """Record (now, value); return the maximum over the window."""
        while self.items and self.items[0][0] <= now - self.width:
            self.items.popleft()
        while self.items and self.items[-1][1] <= value:
            self.items.pop()  # never the maximum again: `value` is as large and newer
        self.items.append((now, value))
        return self.items[0][1]


class QueueAutoscaler:
    """Decides the replica total from samples of queued + in-flight requests."""

    def __init__(self, *, target: float, max_replicas: int, min_replicas: int = 1,
                 stable_window_s: float = 60.0, max_scale_up_rate: float = 1000.0,
                 max_scale_down_rate: float = 2.0,
                 panic_window_s: float | None = None, panic_threshold: float = 2.0,
                 scale_down_window_s: float = 0.0,
                 startup_s: float = 0.0, idle_grace_s: float = 0.0) -> None:
        _finite_above("target", target, 0, strict=True)
        _finite_above("stable_window_s", stable_window_s, 0, strict=True)
        _count("min_replicas", min_replicas, 0)
        _count("max_replicas", max_replicas, max(1, min_replicas))
        for name, rate in (("max_scale_up_rate", max_scale_up_rate),
                           ("max_scale_down_rate", max_scale_down_rate),
                           ("panic_threshold", panic_threshold)):
            _finite_above(name, rate, 1, strict=True)
        _check("panic_window_s", panic_window_s, panic_window_s is None or (
            _number(panic_window_s) and 0 < panic_window_s <= stable_window_s),
            f"None or a number in (0, stable_window_s={stable_window_s}]")
        for name, span in (("scale_down_window_s", scale_down_window_s),
                           ("startup_s", startup_s), ("idle_grace_s", idle_grace_s)):
            _finite_above(name, span, 0, strict=False)
        self.target, self.min_replicas, self.max_replicas = target, min_replicas, max_replicas
        self.stable_window_s = stable_window_s
        self.up_rate, self.down_rate = max_scale_up_rate, max_scale_down_rate
        self.panic_threshold = panic_threshold
        self.startup_s, self.idle_grace_s = startup_s, idle_grace_s
        self._stable = Window(stable_window_s)
        self._panic = None if panic_window_s is None else Window(panic_window_s)
        self._peaks = MaxWindow(scale_down_window_s)
        # When each replica is (or will be) ready, ascending: new ones are always the latest.
        self._ready_at: list[float] = [-math.inf] * min_replicas
        self._now: float | None = None  # the time of the last successful observe
        self._panicking = False
        self._last_over = -math.inf
        self._last_active: float | None = None

    @property
    def replicas(self) -> int:
        return len(self._ready_at)

    @property
    def panicking(self) -> bool:
        return self._panicking

    def ready(self, now: float) -> int:
        self._check_now(now)
        return self._ready(now)

    def observe(self, now: float, queued: int, in_flight: int) -> int:
        self._check_now(now)
        _count("queued", queued, 0)
        _count("in_flight", in_flight, 0)
        self._now = now
        load = queued + in_flight
        before = self.replicas
        r = max(1, self._ready(now))  # a fleet at zero can still grow
        up, down = math.ceil(self.up_rate * r), math.floor(r / self.down_rate)
        stable = math.ceil(self._stable.add(now, load) / self.target)
        d = min(max(stable, down), up)
        if self._panic is not None:
            panic = math.ceil(self._panic.add(now, load) / self.target)
            if panic >= self.panic_threshold * r:
                self._panicking, self._last_over = True, now
            elif self._panicking and now - self._last_over > self.stable_window_s:
                self._panicking = False
            if self._panicking:  # never below the stable count, never a scale-down
                d = max(d, min(max(panic, down), up), before)
        d = self._peaks.add(now, d)
        total = min(max(d, self.min_replicas), self.max_replicas)
        if load > 0:
            self._last_active = now
        if total == 0 and self._last_active is not None and \
                now - self._last_active <= self.idle_grace_s:
            total = 1  # the idle hold: a fleet goes to zero only after a quiet grace period
        self._resize(now, total)
        return total

    def _check_now(self, now: object) -> None:
        _check("now", now, _number(now) and math.isfinite(now), "a finite number")
        if self._now is not None and now < self._now:
            raise ValueError(f"now={now!r} is earlier than the last observe at {self._now!r}")

    def _ready(self, now: float) -> int:
        return bisect.bisect_right(self._ready_at, now)

    def _resize(self, now: float, total: int) -> None:
        have = len(self._ready_at)
        if total > have:
            self._ready_at += [now + self.startup_s] * (total - have)
        else:  # the end of the list: starting replicas, the latest ready first, then ready ones
            del self._ready_at[total:]
