"""Compatible batching: which requests may share a batch, per-key dynamic batching on a simulated
clock, and choosing the next batch when more models are wanted than fit on the GPU."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import OrderedDict, deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Request:
    request_id: Hashable
    model: str
    version: str
    dtype: str
    length: int  # input tokens
    arrival_ms: float  # on the simulated clock
    temperature: float = 0.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()


def is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def check_batch_size(max_batch_size: int) -> None:
    if not is_int(max_batch_size) or max_batch_size < 1:
        raise ValueError(f"max_batch_size must be an int >= 1, got {max_batch_size!r}")


def check_buckets(length_buckets: Sequence[int]) -> None:
    bounds = list(length_buckets)
    if not all(is_int(b) and b > 0 for b in bounds):
        raise ValueError(f"length_buckets must be positive ints, got {bounds!r}")
    if any(a >= b for a, b in zip(bounds, bounds[1:], strict=False)):
        raise ValueError(f"length_buckets must be strictly increasing, got {bounds!r}")


def check_length(length: int) -> None:
    if not is_int(length) or length < 0:
        raise ValueError(f"length must be an int >= 0, got {length!r}")


def check_ms(name: str, value: float) -> None:
    if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")


def model_of(request: Request) -> tuple[str, str, str]:
    return (request.model, request.version, request.dtype)


def batch_key(request: Request, *, length_buckets: Sequence[int] = (),
              per_row_sampling: bool = False) -> Hashable:
    """Equal for two requests exactly when they may share a batch."""
    check_buckets(length_buckets)
    check_length(request.length)
    if request.temperature != request.temperature or request.top_p != request.top_p:
        raise ValueError(f"temperature and top_p must not be NaN, got {request!r}")
    # bisect_right: a length equal to a boundary opens the bucket above it.
    key = (*model_of(request), bisect_right(length_buckets, request.length))
    if per_row_sampling:  # the engine samples per row: sampling never splits a batch
        return key
    return (*key, request.temperature, request.top_p, tuple(request.stop))


def cut(requests: Sequence[Request], keys: Sequence[Hashable],
        max_batch_size: int) -> list[list[Request]]:
    """Greedy per-key batches, listed in the order of their first request."""
    batches: list[list[Request]] = []
    open_batch: dict[Hashable, list[Request]] = {}
    for request, key in zip(requests, keys, strict=True):
        batch = open_batch.get(key)
        if batch is None or len(batch) == max_batch_size:
            batch = open_batch[key] = []
            batches.append(batch)
        batch.append(request)
    return batches


def form_batches(requests: Sequence[Request], *, max_batch_size: int,
                 length_buckets: Sequence[int] = (),
                 per_row_sampling: bool = False) -> list[list[Request]]:
    check_batch_size(max_batch_size)
    check_buckets(length_buckets)
    keys = [batch_key(r, length_buckets=length_buckets, per_row_sampling=per_row_sampling)
            for r in requests]
    return cut(requests, keys, max_batch_size)


def padding_waste(batch: Sequence[Request]) -> int:
    """Padding tokens when the batch is padded to its longest request."""
    if not batch:
        raise ValueError("padding_waste needs a non-empty batch")
    lengths = [r.length for r in batch]
    for length in lengths:
        check_length(length)
    return len(lengths) * max(lengths) - sum(lengths)


@dataclass
class Entry:
    order: int  # order of add: poll sorts batches by it, flush replays it
    key: Hashable
    request: Request


def take(queue: deque[Entry], n: int) -> list[Entry]:
    return [queue.popleft() for _ in range(n)]


class DynamicBatcher:
    """One FIFO queue per key; a batch leaves when its queue is full or its oldest is due."""

    def __init__(self, *, max_batch_size: int, max_wait_ms: float,
                 length_buckets: Sequence[int] = (), per_row_sampling: bool = False):
        check_batch_size(max_batch_size)
        check_ms("max_wait_ms", max_wait_ms)
        check_buckets(length_buckets)
        self.max_batch_size = max_batch_size
        self.max_wait_ms = max_wait_ms
        self.length_buckets = tuple(length_buckets)
        self.per_row_sampling = per_row_sampling
        self.queues: dict[Hashable, deque[Entry]] = {}
        self.added = 0
        self.last_arrival = -math.inf
        self.last_poll = -math.inf

    def __len__(self) -> int:
        return sum(len(q) for q in self.queues.values())

    def add(self, request: Request) -> None:
        key = batch_key(request, length_buckets=self.length_buckets,
                        per_row_sampling=self.per_row_sampling)  # validates before any change
        clock = max(self.last_arrival, self.last_poll)
        if request.arrival_ms < clock:
            raise ValueError(f"arrival_ms {request.arrival_ms} is earlier than the clock {clock}")
        self.queues.setdefault(key, deque()).append(Entry(self.added, key, request))
        self.added += 1
        self.last_arrival = request.arrival_ms

    def poll(self, now_ms: float) -> list[list[Request]]:
        if now_ms < self.last_poll:
            raise ValueError(f"now_ms {now_ms} is earlier than the last poll {self.last_poll}")
        self.last_poll = now_ms
        ready: list[list[Entry]] = []
        for key, queue in list(self.queues.items()):
            while len(queue) >= self.max_batch_size:  # full: go now, whatever the clock says
                ready.append(take(queue, self.max_batch_size))
            while queue and now_ms >= queue[0].request.arrival_ms + self.max_wait_ms:
                ready.append(take(queue, min(len(queue), self.max_batch_size)))
            if not queue:
                del self.queues[key]
        ready.sort(key=lambda batch: (batch[0].request.arrival_ms, batch[0].order))
        return [[e.request for e in batch] for batch in ready]

    def next_deadline(self) -> float | None:
        # Arrivals never go back, so each queue's head is its oldest request.
        heads = [q[0].request.arrival_ms for q in self.queues.values()]
        return min(heads) + self.max_wait_ms if heads else None

    def flush(self) -> list[list[Request]]:
        entries = sorted((e for q in self.queues.values() for e in q), key=lambda e: e.order)
        self.queues.clear()
        return cut([e.request for e in entries], [e.key for e in entries], self.max_batch_size)


class ModelMultiplexer:
    """Picks the next batch: the oldest once it starves, else the oldest of a resident model.
    Residents are kept in an LRU of at most `capacity` models."""

    def __init__(self, *, capacity: int, starvation_ms: float):
        if not is_int(capacity) or capacity < 1:
            raise ValueError(f"capacity must be an int >= 1, got {capacity!r}")
        check_ms("starvation_ms", starvation_ms)
        self.capacity = capacity
        self.starvation_ms = starvation_ms
        self.lru: OrderedDict[Hashable, None] = OrderedDict()  # least recently used first

    def resident(self) -> list[Hashable]:
        return list(self.lru)

    def choose(self, ready: Sequence[list[Request]],
               now_ms: float) -> tuple[list[Request], Hashable | None] | None:
        for batch in ready:
            if not batch:
                raise ValueError("ready holds an empty batch")
            if any(model_of(r) != model_of(batch[0]) for r in batch):
                raise ValueError(f"a batch mixes models: {sorted({model_of(r) for r in batch})}")
        if not ready:
            return None
        oldest = min(ready, key=lambda b: b[0].arrival_ms)  # min keeps the first of ties
        warm = [b for b in ready if model_of(b[0]) in self.lru]
        if now_ms >= oldest[0].arrival_ms + self.starvation_ms or not warm:
            chosen = oldest
        else:
            chosen = min(warm, key=lambda b: b[0].arrival_ms)
        model, evicted = model_of(chosen[0]), None
        if model not in self.lru and len(self.lru) == self.capacity:
            evicted, _ = self.lru.popitem(last=False)
        self.lru[model] = None
        self.lru.move_to_end(model)  # resident or just loaded: now the most recently used
        return chosen, evicted
