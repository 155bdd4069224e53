"""Scale inference replicas on queue depth. Read the prompt: `kata show queue_autoscaler`.

Level 1: stable mode. Level 2: panic mode, scale-down stabilisation, bad input. Level 3: cold
starts, scale-to-zero, O(1) per observation. Standard library only.
"""

from __future__ import annotations


class QueueAutoscaler:
    """Decides the replica total from samples of queued + in-flight requests."""

    def __init__(self, *, target: float, max_replicas: int, min_replicas: int = 1,
                 stable_window_s: float = 60.0, max_scale_up_rate: float = 1000.0,
                 max_scale_down_rate: float = 2.0,
                 panic_window_s: float | None = None, panic_threshold: float = 2.0,
                 scale_down_window_s: float = 0.0,
                 startup_s: float = 0.0, idle_grace_s: float = 0.0) -> None:
        """`target`: the load one replica should carry. The fleet starts as `min_replicas`
        ready replicas. Level 2 adds the panic and scale-down settings, Level 3 the others."""
        raise NotImplementedError

    def observe(self, now: float, queued: int, in_flight: int) -> int:
        """Record the sample (now, queued + in_flight), take one decision and return the new
        total, which becomes `replicas`."""
        raise NotImplementedError

    @property
    def replicas(self) -> int:
        """Ready + starting replicas after the last decision (`min_replicas` before the first)."""
        raise NotImplementedError

    @property
    def panicking(self) -> bool:
        """Level 2: whether the scaler is in panic mode after the last decision."""
        raise NotImplementedError

    def ready(self, now: float) -> int:
        """Level 3: how many current replicas are ready at `now`; changes nothing."""
        raise NotImplementedError
