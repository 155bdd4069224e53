"""Slot refill over a decode cache, as an engine runs it: 4 slots of capacity 12, 11 requests of
1-12 seeded tokens fed one per step; a finished request frees its slot and the next one restarts
it at cache length 0 over the old entries.

A token's q, k and v are seeded embeddings of its id plus embeddings of its position, so the same
prefix gives the same heads whether it is decoded step by step or recomputed as a padded batch.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

SLOTS, CAPACITY, REQUESTS, HEADS, DIM, DV, VOCAB = 4, 12, 11, 2, 4, 3, 16


@dataclass
class Step:
    out: np.ndarray                  # decode_step's output [SLOTS, H, 1, DV]
    live: list[int]                  # the slots that decoded a token this step
    prefixes: list[list[int]]        # their requests' tokens so far, this step's included
    cache_lens: list[int]            # their cache lengths before this step


@dataclass
class Table:
    """Per-token and per-position embeddings of q, k, v: [vocab or position, H, D]."""

    seed: int
    rng: np.random.Generator = field(init=False)

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)
        self.tok = [self.rng.standard_normal((VOCAB, HEADS, d)) for d in (DIM, DIM, DV)]
        self.pos = [self.rng.standard_normal((CAPACITY, HEADS, d)) for d in (DIM, DIM, DV)]

    def heads(self, ids: np.ndarray, positions: np.ndarray) -> list[np.ndarray]:
        """q, k, v [B, H, T, *] for ids and positions [B, T]."""
        return [(t[ids] + p[positions]).transpose(0, 2, 1, 3)
                for t, p in zip(self.tok, self.pos, strict=True)]


def requests(seed: int) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, VOCAB, rng.integers(1, CAPACITY + 1)).tolist() for _ in range(REQUESTS)]


def run(impl, table: Table, work: list[list[int]]) -> Iterator[Step]:
    """Decode every request with impl.decode_step, refilling freed slots from the queue."""
    k_cache = table.rng.standard_normal((SLOTS, HEADS, CAPACITY, DIM))  # garbage before any use
    v_cache = np.full((SLOTS, HEADS, CAPACITY, DV), np.nan)
    cache_lens = np.zeros(SLOTS, dtype=np.int64)
    queue, held = deque(work), [None] * SLOTS  # held[s]: (request tokens, how many fed)
    while queue or any(held):
        for s in range(SLOTS):
            if held[s] is None and queue:
                held[s], cache_lens[s] = (queue.popleft(), 0), 0  # old entries stay in place
        live = [s for s in range(SLOTS) if held[s] is not None]
        ids = np.array([[held[s][0][held[s][1]] if s in live else 0] for s in range(SLOTS)])
        q, k, v = table.heads(ids, np.minimum(cache_lens, CAPACITY - 1)[:, None])
        active = np.array([s in live for s in range(SLOTS)])
        before = cache_lens[live].tolist()
        out = impl.decode_step(q, k, v, k_cache, v_cache, cache_lens.copy(), active=active)
        prefixes = [held[s][0][: held[s][1] + 1] for s in live]
        yield Step(out, live, prefixes, before)
        for s in live:
            tokens, fed = held[s]
            cache_lens[s] += 1
            held[s] = (tokens, fed + 1) if fed + 1 < len(tokens) else None
