"""Kata paged_kv_cache: the block manager behind PagedAttention. Read the prompt with
`kata show paged_kv_cache`, then grade with `pytest katas/paged_kv_cache`.
Standard library only."""

from __future__ import annotations

from collections.abc import Hashable, Sequence


class OutOfBlocks(Exception):
    """Not enough free blocks for the call; nothing was changed. Not a ValueError."""


class BlockManager:
    def __init__(self, num_blocks: int, block_size: int, *, prefix_caching: bool = False):
        """Blocks 0 .. num_blocks-1 of block_size token slots each, all in the free queue in
        order. Raise ValueError if num_blocks < 1 or block_size < 1."""
        raise NotImplementedError

    @property
    def num_free_blocks(self) -> int:
        """How many blocks are in the free queue (cached or not)."""
        raise NotImplementedError

    def can_allocate(self, token_ids: Sequence[int], *, cache_salt: Hashable = None) -> bool:
        """Validate token_ids like allocate; False exactly when allocate of a new id would
        raise OutOfBlocks. Changes nothing."""
        raise NotImplementedError

    def allocate(self, seq_id: Hashable, token_ids: Sequence[int], *,
                 cache_salt: Hashable = None) -> int:
        """Start sequence seq_id with its prompt; return how many leading tokens are already
        cached (0 without prefix caching). ValueError: empty prompt, a non-int (or bool) token,
        a live seq_id. OutOfBlocks: the free queue is too short."""
        raise NotImplementedError

    def can_append(self, seq_id: Hashable) -> bool:
        """False exactly when append_token(seq_id, ...) would raise OutOfBlocks."""
        raise NotImplementedError

    def append_token(self, seq_id: Hashable, token_id: int) -> tuple[int, int] | None:
        """Add one token. Return (src, dst) when it copied a shared block on write (the caller
        copies src's KV into dst first), else None."""
        raise NotImplementedError

    def fork(self, parent_id: Hashable, child_id: Hashable) -> None:
        """A new live sequence child_id with the parent's tokens and blocks (shared, one more
        reference each). Takes no block. ValueError if child_id is live."""
        raise NotImplementedError

    def free(self, seq_id: Hashable) -> None:
        """End the sequence: one reference less on each of its blocks; blocks reaching 0 go to
        the back of the queue, the sequence's last block first."""
        raise NotImplementedError

    def block_table(self, seq_id: Hashable) -> list[int]:
        """A new list of the sequence's block ids: token i is in block_table[i // block_size]."""
        raise NotImplementedError

    def num_tokens(self, seq_id: Hashable) -> int:
        raise NotImplementedError

    def ref_count(self, block_id: int) -> int:
        """How many live sequences hold the block (0 when free). ValueError if out of range."""
        raise NotImplementedError
