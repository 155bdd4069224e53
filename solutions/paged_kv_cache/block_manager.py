"""A PagedAttention block manager: fixed-size KV blocks, fork with copy-on-write, prefix caching."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field


class OutOfBlocks(Exception):
    """Not enough free blocks for the call; nothing was changed."""


@dataclass
class Seq:
    tokens: list[int]
    table: list[int]
    salt: Hashable
    digests: list[bytes] = field(default_factory=list)  # chain key of each full block


def chain(parent: bytes, tokens: Sequence[int]) -> bytes:
    """Key of a full block: SHA-256 of the previous block's key and this block's tokens.
    O(block_size) per block, and exact: a fixed-size parent plus a separator-joined body."""
    body = ",".join(map(str, tokens)).encode()
    return hashlib.sha256(parent + body).digest()


def check_tokens(token_ids: Sequence[int]) -> list[int]:
    tokens = list(token_ids)
    if not tokens:
        raise ValueError("token_ids is empty: a sequence needs at least one token")
    for t in tokens:
        check_token(t)
    return tokens


def check_token(t: object) -> None:
    if not isinstance(t, int) or isinstance(t, bool):
        raise ValueError(f"token {t!r} is not an int")


class BlockManager:
    def __init__(self, num_blocks: int, block_size: int, *, prefix_caching: bool = False):
        if num_blocks < 1:
            raise ValueError(f"num_blocks must be >= 1, got {num_blocks}")
        if block_size < 1:
            raise ValueError(f"block_size must be >= 1, got {block_size}")
        self.num_blocks, self.block_size = num_blocks, block_size
        self.prefix_caching = prefix_caching
        # An ordered set: popitem(last=False) takes the front, and a reused free block leaves
        # from the middle in O(1).
        self.free_queue: OrderedDict[int, None] = OrderedDict.fromkeys(range(num_blocks))
        self.refs = [0] * num_blocks
        self.seqs: dict[Hashable, Seq] = {}
        self.cache: dict[tuple[Hashable, bytes], int] = {}  # content -> block
        self.entry: dict[int, tuple[Hashable, bytes]] = {}  # block -> the cache key pointing at it

    @property
    def num_free_blocks(self) -> int:
        return len(self.free_queue)

    # --- allocate ------------------------------------------------------------------------

    def _plan(self, tokens: list[int], salt: Hashable) -> tuple[list[bytes], list[int], int]:
        """(keys of the full blocks, cached blocks to reuse, blocks to take from the queue)."""
        bs, digests = self.block_size, []
        if self.prefix_caching:
            parent = b""
            for i in range(len(tokens) // bs):
                parent = chain(parent, tokens[i * bs : (i + 1) * bs])
                digests.append(parent)
        reused = []
        for d in digests[: (len(tokens) - 1) // bs]:  # the last token is always computed
            block = self.cache.get((salt, d))
            if block is None:
                break
            reused.append(block)
        return digests, reused, -(-len(tokens) // bs) - len(reused)

    def can_allocate(self, token_ids: Sequence[int], *, cache_salt: Hashable = None) -> bool:
        _, reused, new = self._plan(check_tokens(token_ids), cache_salt)
        return new + sum(self.refs[b] == 0 for b in reused) <= len(self.free_queue)

    def allocate(self, seq_id: Hashable, token_ids: Sequence[int], *,
                 cache_salt: Hashable = None) -> int:
        tokens = check_tokens(token_ids)
        if seq_id in self.seqs:
            raise ValueError(f"sequence {seq_id!r} is already live")
        digests, reused, new = self._plan(tokens, cache_salt)
        if new + sum(self.refs[b] == 0 for b in reused) > len(self.free_queue):
            raise OutOfBlocks(f"sequence {seq_id!r} needs more blocks than are free")
        for b in reused:
            if self.refs[b] == 0:
                del self.free_queue[b]  # a cached free block comes back, content and entry kept
            self.refs[b] += 1
        table = reused + [self._take() for _ in range(new)]
        for i in range(len(reused), len(digests)):  # register the new full prompt blocks
            self._register((cache_salt, digests[i]), table[i])
        self.seqs[seq_id] = Seq(tokens, table, cache_salt, digests)
        return len(reused) * self.block_size

    def _take(self) -> int:
        """The block at the front of the queue, for new content: its old cache entry goes."""
        block, _ = self.free_queue.popitem(last=False)
        key = self.entry.pop(block, None)
        if key is not None:
            del self.cache[key]
        self.refs[block] = 1
        return block

    def _register(self, key: tuple[Hashable, bytes], block: int) -> None:
        if key not in self.cache:  # an existing entry wins; this block stays a duplicate
            self.cache[key] = block
            self.entry[block] = key

    # --- append, fork, free --------------------------------------------------------------

    def can_append(self, seq_id: Hashable) -> bool:
        return not self._needs_block(self._seq(seq_id)) or bool(self.free_queue)

    def _needs_block(self, seq: Seq) -> bool:
        return len(seq.tokens) % self.block_size == 0 or self.refs[seq.table[-1]] > 1

    def append_token(self, seq_id: Hashable, token_id: int) -> tuple[int, int] | None:
        seq = self._seq(seq_id)
        check_token(token_id)
        if self._needs_block(seq) and not self.free_queue:
            raise OutOfBlocks(f"sequence {seq_id!r} needs a block and none is free")
        copy = None
        if len(seq.tokens) % self.block_size == 0:  # the last block is full: start a new one
            seq.table.append(self._take())
        elif self.refs[seq.table[-1]] > 1:  # shared and not full: copy on write
            src = seq.table[-1]
            self.refs[src] -= 1
            seq.table[-1] = self._take()
            copy = (src, seq.table[-1])
        seq.tokens.append(token_id)
        bs = self.block_size
        if self.prefix_caching and len(seq.tokens) % bs == 0:  # this token filled the block
            parent = seq.digests[-1] if seq.digests else b""
            seq.digests.append(chain(parent, seq.tokens[-bs:]))
            self._register((seq.salt, seq.digests[-1]), seq.table[-1])
        return copy

    def fork(self, parent_id: Hashable, child_id: Hashable) -> None:
        parent = self._seq(parent_id)
        if child_id in self.seqs:
            raise ValueError(f"sequence {child_id!r} is already live")
        for b in parent.table:
            self.refs[b] += 1
        self.seqs[child_id] = Seq(list(parent.tokens), list(parent.table), parent.salt,
                                  list(parent.digests))

    def free(self, seq_id: Hashable) -> None:
        seq = self._seq(seq_id)
        del self.seqs[seq_id]
        for b in reversed(seq.table):  # the tail goes back first, so it is reused first
            self.refs[b] -= 1
            if self.refs[b] == 0:
                self.free_queue[b] = None

    # --- reading -------------------------------------------------------------------------

    def block_table(self, seq_id: Hashable) -> list[int]:
        return list(self._seq(seq_id).table)

    def num_tokens(self, seq_id: Hashable) -> int:
        return len(self._seq(seq_id).tokens)

    def ref_count(self, block_id: int) -> int:
        if not 0 <= block_id < self.num_blocks:
            raise ValueError(f"block id {block_id} is out of range [0, {self.num_blocks})")
        return self.refs[block_id]

    def _seq(self, seq_id: Hashable) -> Seq:
        if seq_id not in self.seqs:
            raise KeyError(f"unknown sequence id {seq_id!r}")
        return self.seqs[seq_id]
