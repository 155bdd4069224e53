"""A paged engine: the ToyLM's attention over one block store indexed by block id, gathered
through a block manager's tables. Copies on (src, dst); prefills only the tokens not reused.

The manager is any module with the kata's API (the reference, a learner's file, a mutant), so
a wrong manager shows up as wrong tokens here.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass, field

import torch

from harness.toylm import ToyLM


class BlockStore:
    """Keys and values of every block, per layer flat over slots: [(blocks + 1) * block_size,
    heads, head_dim]. Slot of (block b, offset o) is b * block_size + o. The extra block is
    scratch for positions no table covers; causal masking hides them."""

    def __init__(self, lm: ToyLM, num_blocks: int, block_size: int):
        heads, head_dim = lm.n_heads, lm.d_model // lm.n_heads
        slots = (num_blocks + 1) * block_size
        self.block_size, self.scratch = block_size, num_blocks

        def empty() -> torch.Tensor:
            return torch.zeros(slots, heads, head_dim, dtype=lm.dtype, device=lm.device)

        self.keys = [empty() for _ in range(lm.n_layers)]
        self.values = [empty() for _ in range(lm.n_layers)]

    def copy(self, src: int, dst: int) -> None:
        bs = self.block_size
        for cache in (self.keys, self.values):
            for layer in cache:
                layer[dst * bs : (dst + 1) * bs] = layer[src * bs : (src + 1) * bs]


class TableView:
    """The pool interface ToyLM.feed uses (lengths, reserve, write, read), over block tables:
    row r of this feed reads and writes through tables[r]."""

    def __init__(self, store: BlockStore, tables: list[list[int]], lengths: list[int],
                 device: torch.device):
        self.store, self.lengths = store, list(lengths)
        width = max(len(t) for t in tables) + 1  # the last column is always scratch
        padded = [t + [store.scratch] * (width - len(t)) for t in tables]
        self.tables = torch.tensor(padded, device=device)

    def reserve(self, rows: int = 0, capacity: int = 0) -> None:
        """Nothing to grow: the blocks are there already."""

    def slots(self, idx: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        bs = self.store.block_size
        column = (pos // bs).clamp(max=self.tables.shape[1] - 1)
        return self.tables[idx[:, None], column] * bs + pos % bs

    def write(self, layer: int, idx: torch.Tensor, pos: torch.Tensor, k: torch.Tensor,
              v: torch.Tensor) -> None:
        where = self.slots(idx, pos)  # [B, W]; k and v are [B, W, H, hd]
        self.store.keys[layer][where] = k
        self.store.values[layer][where] = v

    def read(self, layer: int, rows: list[int], idx: torch.Tensor,
             span: int) -> tuple[torch.Tensor, torch.Tensor]:
        pos = torch.arange(span, device=idx.device).expand(len(rows), span)
        where = self.slots(idx, pos)  # [B, span]
        return (self.store.keys[layer][where].transpose(1, 2),
                self.store.values[layer][where].transpose(1, 2))


class PagedEngine:
    """Greedy decoding of many sequences whose KV lives in blocks the manager hands out.

    Each live sequence has every one of its tokens' KV in the store, plus `pending`: the greedy
    next token, computed but not yet appended (so a fork's child can be forced to another)."""

    def __init__(self, lm: ToyLM, manager, num_blocks: int, block_size: int):
        self.lm, self.bm = lm, manager
        self.store = BlockStore(lm, num_blocks, block_size)
        self.tokens: dict[Hashable, list[int]] = {}
        self.pending: dict[Hashable, int] = {}
        self.prefilled = 0  # prompt tokens the model computed
        self.copies = 0

    def start(self, seq_id: Hashable, prompt: list[int], salt: Hashable = None) -> int:
        """Allocate and prefill only the tokens the cache does not cover; return the hit."""
        self.lm.check_prompt(prompt)
        cached = self.bm.allocate(seq_id, prompt, cache_salt=salt)
        self.tokens[seq_id] = list(prompt)
        self.pending[seq_id] = self._feed([seq_id], [prompt[cached:]], [cached])[0]
        self.prefilled += len(prompt) - cached
        return cached

    def fork(self, parent: Hashable, child: Hashable) -> None:
        self.bm.fork(parent, child)
        self.tokens[child] = list(self.tokens[parent])
        self.pending[child] = self.pending[parent]

    def force(self, seq_id: Hashable, token: int) -> None:
        """Make `token` the next one appended to seq_id instead of the greedy one."""
        self.pending[seq_id] = token

    def append(self, seq_id: Hashable) -> int:
        """Append the pending token to the tables (copying a shared block first); its KV is
        written by the next compute()."""
        token = self.pending.pop(seq_id)
        copy = self.bm.append_token(seq_id, token)
        if copy is not None:
            src, dst = copy
            self.store.copy(src, dst)
            self.copies += 1
        self.tokens[seq_id].append(token)
        return token

    def compute(self, seq_ids: list[Hashable]) -> None:
        """Write the KV of each sequence's last appended token and get its next pending one."""
        if not seq_ids:
            return
        chunks = [self.tokens[s][-1:] for s in seq_ids]
        starts = [len(self.tokens[s]) - 1 for s in seq_ids]
        self.pending.update(zip(seq_ids, self._feed(seq_ids, chunks, starts), strict=True))

    def free(self, seq_id: Hashable) -> list[int]:
        self.bm.free(seq_id)
        self.pending.pop(seq_id, None)
        return self.tokens.pop(seq_id)

    def _feed(self, seq_ids: list[Hashable], chunks: list[list[int]],
              starts: list[int]) -> list[int]:
        for s, chunk, start in zip(seq_ids, chunks, starts, strict=True):
            self.lm.check_length(start + len(chunk) + 1)
            assert self.bm.num_tokens(s) == start + len(chunk)
        tables = [self.bm.block_table(s) for s in seq_ids]
        view = TableView(self.store, tables, starts, self.lm.device)
        logits = self.lm.feed(view, list(range(len(seq_ids))), chunks)
        return logits.argmax(-1).tolist()


@dataclass
class Request:
    seq_id: Hashable
    prompt: list[int]
    max_tokens: int  # >= 1
    salt: Hashable = None
    done: list[int] = field(default_factory=list)  # generated so far, kept across preemption


def serve(engine: PagedEngine, requests: list[Request]) -> dict[Hashable, list[int]]:
    """FIFO admission while the manager has blocks; when a running sequence cannot append,
    preempt the newest (free it, requeue it to be recomputed). Returns generated tokens."""
    waiting, running, out = deque(requests), deque(), {}
    bm = engine.bm
    while waiting or running:
        while waiting and bm.can_allocate(_prefix(waiting[0]), cache_salt=waiting[0].salt):
            r = waiting.popleft()
            engine.start(r.seq_id, _prefix(r), r.salt)
            running.append(r)
        if not running:
            raise RuntimeError("a request does not fit in the whole pool")
        stepped = []
        for r in list(running):
            if r not in running:  # preempted earlier in this step
                continue
            while not bm.can_append(r.seq_id) and running[-1] is not r:
                _preempt(engine, running.pop(), waiting)
            if not bm.can_append(r.seq_id):  # r is the newest: it goes back itself
                _preempt(engine, running.pop(), waiting)
                continue
            r.done.append(engine.append(r.seq_id))
            stepped.append(r)
        engine.compute([r.seq_id for r in stepped])  # finished ones too: their KV may be cached
        for r in stepped:
            if len(r.done) == r.max_tokens:
                running.remove(r)
                engine.free(r.seq_id)
                out[r.seq_id] = r.done
    return out


def _prefix(r: Request) -> list[int]:
    return r.prompt + r.done


def _preempt(engine: PagedEngine, r: Request, waiting: deque) -> None:
    engine.free(r.seq_id)
    waiting.appendleft(r)
