"""The spec written plainly, to compare against: compatibility, form_batches, the multiplexer's
choice."""

from __future__ import annotations

from bisect import bisect_right

from .helpers import model_of


def bucket(length: int, bounds) -> int:
    return bisect_right(list(bounds), length)  # [b_i, b_i+1): a boundary opens the bucket above


def compatible(a, b, bounds=(), per_row_sampling=False) -> bool:
    same = model_of(a) == model_of(b) and bucket(a.length, bounds) == bucket(b.length, bounds)
    if per_row_sampling:
        return same
    return same and (a.temperature, a.top_p, tuple(a.stop)) == (b.temperature, b.top_p,
                                                                 tuple(b.stop))


def form_batches(requests, max_batch_size, bounds=(), per_row_sampling=False) -> list[list]:
    """Greedy consecutive cuts per key, listed by their first request's position."""
    batches: list[list] = []
    for r in requests:
        mine = [b for b in batches if compatible(b[0], r, bounds, per_row_sampling)]
        if mine and len(mine[-1]) < max_batch_size:
            mine[-1].append(r)
        else:
            batches.append([r])
    return batches


def choose(ready, now_ms, resident, starvation_ms):
    """The batch the spec picks from `ready`, given the resident models."""
    oldest = min(ready, key=lambda b: b[0].arrival_ms)
    if now_ms >= oldest[0].arrival_ms + starvation_ms:
        return oldest
    warm = [b for b in ready if model_of(b[0]) in resident]
    return min(warm, key=lambda b: b[0].arrival_ms) if warm else oldest


class Batcher:
    """DynamicBatcher as the spec says it, over one list in order of add."""

    def __init__(self, size, wait, bounds=(), per_row_sampling=False):
        self.size, self.wait, self.bounds, self.per_row = size, wait, bounds, per_row_sampling
        self.queued: list = []  # (order of add, request)
        self.added = 0

    def add(self, r) -> None:
        self.queued.append((self.added, r))
        self.added += 1

    def groups(self) -> list[list]:
        out: list[list] = []
        for entry in self.queued:
            mine = [g for g in out if compatible(g[0][1], entry[1], self.bounds, self.per_row)]
            (mine[0] if mine else out.append([]) or out[-1]).append(entry)
        return out

    def poll(self, now) -> list[list]:
        ready = []
        for g in self.groups():
            while len(g) >= self.size:
                ready.append(g[: self.size])
                g = g[self.size:]
            if g and now >= g[0][1].arrival_ms + self.wait:
                ready.append(g)
        gone = {order for batch in ready for order, _ in batch}
        self.queued = [e for e in self.queued if e[0] not in gone]
        ready.sort(key=lambda b: (b[0][1].arrival_ms, b[0][0]))
        return [[r for _, r in b] for b in ready]

    def next_deadline(self):
        return min(r.arrival_ms for _, r in self.queued) + self.wait if self.queued else None

    def flush(self) -> list[list]:
        out = form_batches([r for _, r in self.queued], self.size, self.bounds, self.per_row)
        self.queued = []
        return out
