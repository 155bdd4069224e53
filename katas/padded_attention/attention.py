"""Kata padded_attention: padding must not leak. Read the prompt with
`kata show padded_attention`, then grade with `pytest katas/padded_attention`.
NumPy only. `True` in a mask marks a real token; bad input raises ValueError."""

from __future__ import annotations

import numpy as np

# --- Level 1 ----------------------------------------------------------------------------


def pad_batch(seqs, *, side: str = "right", pad_id: int = 0,
              multiple_of: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(ids int64 [B, T], mask bool [B, T]): T the smallest multiple of multiple_of that is at
    least the longest length; each sequence at [0, L) ("right") or [T - L, T) ("left"), pad_id
    elsewhere. The mask comes from the lengths, not from the ids."""
    raise NotImplementedError


def position_ids(mask: np.ndarray) -> np.ndarray:
    """int64 [B, T]: a real slot gets the number of real slots before it in its row, a pad 0."""
    raise NotImplementedError


def masked_softmax(logits: np.ndarray, mask: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax along axis over the kept entries only (mask broadcasts to logits.shape). Masked
    entries and rows with nothing kept are exactly 0.0; nothing in a masked slot leaks."""
    raise NotImplementedError


# --- Level 2 ----------------------------------------------------------------------------


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None = None, *,
              causal: bool = False, scale: float | None = None) -> np.ndarray:
    """q, k [B, H, T, D], v [B, H, T, Dv], mask bool [B, T] -> [B, H, T, Dv]. Padded query rows
    are 0.0; a real query attends to the real keys (s <= t if causal); scale defaults to
    1 / sqrt(D)."""
    raise NotImplementedError


def decode_step(q: np.ndarray, k_new: np.ndarray, v_new: np.ndarray, k_cache: np.ndarray,
                v_cache: np.ndarray, cache_lens: np.ndarray, *, active: np.ndarray | None = None,
                scale: float | None = None) -> np.ndarray:
    """q, k_new [B, H, 1, D], v_new [B, H, 1, Dv], k_cache [B, H, S, D], v_cache [B, H, S, Dv]
    -> [B, H, 1, Dv]. For each active row write the new key and value into slot cache_lens[b]
    in place, then attend over slots 0..cache_lens[b]. Inactive rows: 0.0, caches untouched.
    Never changes cache_lens; a call that raises writes nothing."""
    raise NotImplementedError


# --- Level 3 ----------------------------------------------------------------------------


def padded_tokens(lengths, edges) -> int:
    """Total padding when each length goes to the smallest edge >= it (edges inclusive)."""
    raise NotImplementedError


def bucket_edges(lengths, num_buckets: int) -> list[int]:
    """The min(num_buckets, distinct lengths) lengths, increasing, that minimise padded_tokens;
    ties to the lexicographically smallest list."""
    raise NotImplementedError


def pack(x: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x[mask], cu_seqlens int64 [B + 1]) with cu_seqlens[0] = 0."""
    raise NotImplementedError


def unpack(packed: np.ndarray, cu_seqlens: np.ndarray, *, side: str = "right",
           length: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(x, mask): rows of width length (None: the longest), aligned as pad_batch aligns them,
    pads 0 in packed's dtype."""
    raise NotImplementedError


def varlen_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, cu_seqlens: np.ndarray, *,
                     causal: bool = False, scale: float | None = None) -> np.ndarray:
    """q, k [N, H, D], v [N, H, Dv] packed by cu_seqlens -> [N, H, Dv]: each token attends
    within its own sequence only (j <= i if causal)."""
    raise NotImplementedError
