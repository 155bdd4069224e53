"""The router in front of the GPU pools. Read the prompt: `kata show inference_router`.

Level 1: a sticky weighted split and the least-loaded replica. Level 2: priorities, a bounded
queue, shedding, Retry-After, a retry budget, bad input. Level 3: outlier ejection, probes,
draining, canary rollouts with automatic rollback.
"""

from __future__ import annotations

from typing import NamedTuple


class Event(NamedTuple):
    kind: str  # dispatch | retry | queue | reject | shed | timeout | done | fail | removed
    request_id: str | None  # None only for "removed"
    replica_id: str | None = None  # set for dispatch, retry, done, fail, removed
    retry_after: int | None = None  # reject, shed and timeout only, when retry_after_s is set


class InferenceRouter:
    """Routes requests to the replicas of a model's versions on a simulated clock.

    Mutating calls take `now` first and return that call's events, in order; queries take no
    `now` and change nothing.
    """

    def __init__(self, *, queue_limit: int = 0, queue_timeout_s: float | None = None,
                 retry_after_s: float | None = None, max_attempts: int = 1,
                 retry_budget_percent: int = 20, min_retry_concurrency: int = 3,
                 consecutive_failures: int | None = None, base_ejection_s: float = 30.0,
                 max_ejection_s: float = 300.0, max_ejection_percent: int = 10,
                 always_eject_one: bool = False):
        """Level 1 uses the defaults; Level 2 adds the queue and retry settings, Level 3 the
        outlier detection settings."""
        raise NotImplementedError

    def add_replica(self, now, replica_id: str, model: str, version: str,
                    capacity: int) -> list[Event]:
        """Add a replica with `capacity` slots to the pool (model, version)."""
        raise NotImplementedError

    def set_split(self, now, model: str, weights: dict[str, int]) -> list[Event]:
        """Replace the model's split: percentages summing to 100, in the dict's order."""
        raise NotImplementedError

    def submit(self, now, request_id: str, model: str, key: str,
               priority: int = 1) -> list[Event]:
        """Route a request to the pool of version_for(model, key): dispatch, queue or refuse."""
        raise NotImplementedError

    def complete(self, now, request_id: str, ok: bool = True) -> list[Event]:
        """The attempt in flight ended; free its slot and report done, retry or fail."""
        raise NotImplementedError

    def tick(self, now) -> list[Event]:
        """Level 2: a clock step and a pump, nothing else."""
        raise NotImplementedError

    def drain(self, now, replica_id: str) -> list[Event]:
        """Level 3: take a replica out of service once its running attempts finish."""
        raise NotImplementedError

    def start_rollout(self, now, model: str, version: str, steps: list[tuple[int, float]], *,
                      max_error_percent: int, window_s: float,
                      min_requests: int) -> list[Event]:
        """Level 3: move the model's traffic to `version` in timed (weight, hold) steps."""
        raise NotImplementedError

    def version_for(self, model: str, key: str) -> str:
        """The version whose interval of the split holds the key's bucket."""
        raise NotImplementedError

    def split(self, model: str) -> list[tuple[str, int]]:
        """The model's (version, weight) pairs, in interval order; [] before any split."""
        raise NotImplementedError

    def in_flight(self, replica_id: str) -> int:
        """The attempts running on a replica."""
        raise NotImplementedError

    def queued(self, model: str, version: str) -> list[str]:
        """Level 2: the request ids queued in the pool (model, version), in dispatch order."""
        raise NotImplementedError

    def replica_state(self, replica_id: str) -> str:
        """Level 3: healthy | ejected | probing | draining | removed."""
        raise NotImplementedError

    def rollout_status(self, model: str) -> str:
        """Level 3: none | running | promoted | rolled_back."""
        raise NotImplementedError
