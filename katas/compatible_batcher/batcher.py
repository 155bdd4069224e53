"""Kata compatible_batcher: which requests may share a batch, per-key dynamic batching on a
simulated clock, and model multiplexing. Read the prompt with `kata show compatible_batcher`,
then grade with `pytest katas/compatible_batcher`. Standard library only."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Request:
    """Validates nothing itself: batch_key, form_batches and add do."""

    request_id: Hashable
    model: str
    version: str
    dtype: str
    length: int  # input tokens
    arrival_ms: float  # on the simulated clock
    temperature: float = 0.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()


def batch_key(request: Request, *, length_buckets: Sequence[int] = (),
              per_row_sampling: bool = False) -> Hashable:
    """A hashable value, equal for two requests exactly when they may share a batch: same model,
    version, dtype and length bucket, and (unless per_row_sampling) same temperature, top_p and
    stop. Boundaries b1 < ... < bk make the buckets [0, b1), [b1, b2), ..., [bk, inf).
    Raise ValueError for bad boundaries, a bad length or a NaN sampling value."""
    raise NotImplementedError


def form_batches(requests: Sequence[Request], *, max_batch_size: int,
                 length_buckets: Sequence[int] = (),
                 per_row_sampling: bool = False) -> list[list[Request]]:
    """Cut each key's requests, in the given order, into consecutive batches of max_batch_size
    (each key's last may be smaller); list the batches by their first request's position."""
    raise NotImplementedError


def padding_waste(batch: Sequence[Request]) -> int:
    """len(batch) * max(length) - sum(length). Raise ValueError for an empty batch or a bad
    length; nothing else is checked."""
    raise NotImplementedError


class DynamicBatcher:
    """One FIFO queue per batch key, on a simulated clock (Level 2)."""

    def __init__(self, *, max_batch_size: int, max_wait_ms: float,
                 length_buckets: Sequence[int] = (), per_row_sampling: bool = False):
        """Raise ValueError for bad settings (max_wait_ms must be finite and >= 0)."""
        raise NotImplementedError

    def add(self, request: Request) -> None:
        """Queue a request. Its arrival_ms must not be earlier than the last added request's, nor
        than the last successful poll's now_ms. A call that raises changes nothing."""
        raise NotImplementedError

    def poll(self, now_ms: float) -> list[list[Request]]:
        """Remove and return every ready batch: full ones, then due ones (oldest request waited
        max_wait_ms), of every key, sorted by first request's (arrival_ms, order of add)."""
        raise NotImplementedError

    def next_deadline(self) -> float | None:
        """min(arrival_ms + max_wait_ms) over queued requests, or None when nothing is queued."""
        raise NotImplementedError

    def flush(self) -> list[list[Request]]:
        """Everything queued, cut as form_batches would cut it with this batcher's settings, in
        order of add; empty the queues."""
        raise NotImplementedError

    def __len__(self) -> int:
        """The number of queued requests."""
        raise NotImplementedError


class ModelMultiplexer:
    """At most `capacity` models (model, version, dtype) on the GPU, in an LRU (Level 3)."""

    def __init__(self, *, capacity: int, starvation_ms: float):
        """Raise ValueError for capacity not an int >= 1 or starvation_ms not finite and >= 0."""
        raise NotImplementedError

    def choose(self, ready: Sequence[list[Request]],
               now_ms: float) -> tuple[list[Request], Hashable | None] | None:
        """Return (batch, evicted): the oldest batch once it has waited starvation_ms, else the
        oldest batch of a resident model, else the oldest. Load it if needed (evicting the least
        recently used when full); it becomes the most recently used. None when ready is empty."""
        raise NotImplementedError

    def resident(self) -> list[Hashable]:
        """The resident models, least recently used first."""
        raise NotImplementedError
