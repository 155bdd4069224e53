"""Padded attention: masks, a NaN-safe softmax, attention and decode over mixed lengths,
optimal length buckets, and packing. NumPy only. `True` in a mask marks a real token."""

from __future__ import annotations

import math

import numpy as np

# --- validation -------------------------------------------------------------------------


def _is_int(x) -> bool:
    return isinstance(x, int | np.integer) and not isinstance(x, bool)


def _ints(values, what: str) -> np.ndarray:
    """A list or tuple of ints, or a 1-D integer array, as int64."""
    if isinstance(values, np.ndarray):
        if values.ndim != 1 or not np.issubdtype(values.dtype, np.integer):
            raise ValueError(f"{what} must be a 1-D integer array, got {values.dtype} "
                             f"of shape {values.shape}")
        return values.astype(np.int64)
    if not isinstance(values, list | tuple):
        raise ValueError(f"{what} must be a list, a tuple or a 1-D integer array, "
                         f"got {type(values).__name__}")
    bad = [x for x in values if not _is_int(x)]
    if bad:
        raise ValueError(f"{what} must hold ints (not bool), got {bad[0]!r}")
    return np.array(values, dtype=np.int64)


def _lengths(lengths) -> np.ndarray:
    lengths = _ints(lengths, "lengths")
    if np.any(lengths < 0):
        raise ValueError(f"lengths must be >= 0, got {lengths.min()}")
    return lengths


def _bool_array(mask, what: str = "mask") -> np.ndarray:
    if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
        raise ValueError(f"{what} must be a bool array, got {getattr(mask, 'dtype', mask)!r}")
    return mask


def _mask(mask, shape: tuple[int, ...]) -> np.ndarray:
    if _bool_array(mask).shape != shape:
        raise ValueError(f"mask must have shape {shape}, got {mask.shape}")
    return mask


def _side(side) -> None:
    if not isinstance(side, str) or side not in ("left", "right"):
        raise ValueError(f'side must be "left" or "right", got {side!r}')


def _scale(scale, head_dim: int) -> float:
    if scale is None:
        return 1 / math.sqrt(head_dim)
    if not isinstance(scale, int | float | np.integer | np.floating) or isinstance(scale, bool) \
            or not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be None or a finite number > 0, got {scale!r}")
    return float(scale)


def _floats(*arrays) -> list[np.ndarray]:
    return [np.asarray(a, dtype=np.float64) for a in arrays]


def _heads(q, k, v, ndim: int) -> None:
    """q and k of one shape [..., D] with D > 0, v the same but for its last size."""
    if q.ndim != ndim or k.shape != q.shape or v.ndim != ndim or v.shape[:-1] != q.shape[:-1]:
        raise ValueError(f"need q, k of one {ndim}-D shape and v equal but for its last size, "
                         f"got {q.shape}, {k.shape}, {v.shape}")
    if q.shape[-1] == 0:
        raise ValueError("the head size D must be at least 1")


# --- Level 1 ----------------------------------------------------------------------------


def pad_batch(seqs, *, side: str = "right", pad_id: int = 0,
              multiple_of: int = 1) -> tuple[np.ndarray, np.ndarray]:
    _side(side)
    if not _is_int(pad_id):
        raise ValueError(f"pad_id must be an int, got {pad_id!r}")
    if not _is_int(multiple_of) or multiple_of < 1:
        raise ValueError(f"multiple_of must be an int >= 1, got {multiple_of!r}")
    if not isinstance(seqs, list | tuple):
        raise ValueError(f"seqs must be a list or a tuple, got {type(seqs).__name__}")
    rows = [_ints(s, "a sequence") for s in seqs]
    longest = max((len(r) for r in rows), default=0)
    width = -(-longest // multiple_of) * multiple_of
    ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=bool)
    for b, row in enumerate(rows):
        start = width - len(row) if side == "left" else 0
        ids[b, start:start + len(row)] = row
        mask[b, start:start + len(row)] = True  # from the length: a real token may equal pad_id
    return ids, mask


def position_ids(mask: np.ndarray) -> np.ndarray:
    if _bool_array(mask).ndim != 2:
        raise ValueError(f"mask must be 2-D [B, T], got shape {mask.shape}")
    return np.where(mask, np.cumsum(mask, axis=1) - 1, 0).astype(np.int64)


def masked_softmax(logits: np.ndarray, mask: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.asarray(logits, dtype=np.float64)
    _bool_array(mask)
    if mask.ndim > x.ndim or np.broadcast_shapes(mask.shape, x.shape) != x.shape:
        raise ValueError(f"mask of shape {mask.shape} does not broadcast to {x.shape}")
    if not _is_int(axis) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an int in [-{x.ndim}, {x.ndim}), got {axis!r}")
    # Masked slots become -inf before anything reads them, so NaN or 1e300 there cannot leak.
    x = np.where(mask, x, -np.inf)
    top = np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    top = np.where(np.isneginf(top), 0.0, top)  # a row with nothing kept: avoid -inf - -inf
    e = np.exp(x - top)
    total = e.sum(axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


# --- Level 2 ----------------------------------------------------------------------------


def _attend(q, k, v, keep, scale: float) -> np.ndarray:
    """softmax(scale q k^T) v over the (query, key) pairs `keep` allows. Values of keys no
    query keeps are zeroed: a softmax weight of 0 times a NaN there would still be NaN."""
    with np.errstate(over="ignore", invalid="ignore"):  # garbage in slots nobody keeps
        scores = (scale * q) @ np.swapaxes(k, -1, -2)
    v = np.where(keep.any(axis=-2)[..., None], v, 0.0)
    return masked_softmax(scores, keep) @ v


def attention(q, k, v, mask=None, *, causal: bool = False, scale=None) -> np.ndarray:
    q, k, v = _floats(q, k, v)
    _heads(q, k, v, 4)
    batch, _, width, head_dim = q.shape
    mask = np.ones((batch, width), dtype=bool) if mask is None else _mask(mask, (batch, width))
    scale = _scale(scale, head_dim)
    keep = mask[:, None, :, None] & mask[:, None, None, :]  # [B, 1, query, key]
    if causal:
        keep = keep & np.tri(width, dtype=bool)
    return _attend(q, k, v, keep, scale)


def decode_step(q, k_new, v_new, k_cache, v_cache, cache_lens, *, active=None,
                scale=None) -> np.ndarray:
    q, k_new, v_new = _floats(q, k_new, v_new)
    _heads(q, k_new, v_new, 4)
    for cache in (k_cache, v_cache):
        if not isinstance(cache, np.ndarray) or cache.dtype != np.float64 \
                or not cache.flags.writeable:
            raise ValueError("k_cache and v_cache must be writeable float64 arrays")
    batch, heads, one, head_dim = q.shape
    slots = k_cache.shape[2] if k_cache.ndim == 4 else -1
    if one != 1 or k_cache.shape != (batch, heads, slots, head_dim) \
            or v_cache.shape != (batch, heads, slots, v_new.shape[3]):
        raise ValueError(f"need one query token and caches [B, H, S, D], [B, H, S, Dv]; got "
                         f"q {q.shape}, v_new {v_new.shape}, caches {k_cache.shape}, "
                         f"{v_cache.shape}")
    if not isinstance(cache_lens, np.ndarray) or cache_lens.shape != (batch,) \
            or not np.issubdtype(cache_lens.dtype, np.integer):
        raise ValueError(f"cache_lens must be a 1-D integer array of length {batch}")
    if np.any(cache_lens < 0) or np.any(cache_lens > slots):
        raise ValueError(f"cache_lens must lie in [0, {slots}]")
    active = np.ones(batch, dtype=bool) if active is None else _mask(active, (batch,))
    if np.any(cache_lens[active] == slots):
        raise ValueError(f"an active row is full: no slot left of {slots}")
    scale = _scale(scale, head_dim)
    rows = np.flatnonzero(active)
    lens = cache_lens[rows]
    k_cache[rows, :, lens] = k_new[rows, :, 0]
    v_cache[rows, :, lens] = v_new[rows, :, 0]
    keep = (np.arange(slots) <= cache_lens[:, None]) & active[:, None]  # [B, S]
    return _attend(q, k_cache, v_cache, keep[:, None, None, :], scale)


# --- Level 3 ----------------------------------------------------------------------------


def _edges(edges) -> np.ndarray:
    edges = _ints(edges, "edges")
    if np.any(np.diff(edges) <= 0):
        raise ValueError("edges must be strictly increasing")
    return edges


def padded_tokens(lengths, edges) -> int:
    lengths, edges = _lengths(lengths), _edges(edges)
    if len(lengths) and (not len(edges) or lengths.max() > edges[-1]):
        raise ValueError("a length is above the last edge")
    bucket = np.searchsorted(edges, lengths, side="left")  # the smallest edge >= the length
    return int((edges[bucket] - lengths).sum())


def bucket_edges(lengths, num_buckets: int) -> list[int]:
    lengths = _lengths(lengths)
    if not _is_int(num_buckets) or num_buckets < 1:
        raise ValueError(f"num_buckets must be an int >= 1, got {num_buckets!r}")
    values, counts = np.unique(lengths, return_counts=True)
    n = len(values)
    k = min(num_buckets, n)
    if k == 0:  # no lengths, no edges
        return []
    # cost[a, j]: padding of the distinct lengths a..j in one bucket with edge values[j].
    below = np.concatenate([[0], np.cumsum(counts)])
    mass = np.concatenate([[0], np.cumsum(counts * values)])
    a, j = np.arange(n)[:, None], np.arange(n)[None, :]
    cost = values[j] * (below[j + 1] - below[a]) - (mass[j + 1] - mass[a])
    big = np.iinfo(np.int64).max // 4
    cost = np.where(j >= a, cost, big)
    # rest[m][a]: least padding of lengths a..n-1 in exactly m buckets (rest[m][n]: none left);
    # the walk below needs m < k only.
    rest = [np.full(n + 1, big, dtype=np.int64) for _ in range(k)]
    rest[0][n] = 0
    for m in range(1, k):
        rest[m][:n] = np.min(cost + rest[m - 1][1:], axis=1)
    # Walk forward taking the smallest optimal edge each time: the lexicographically first list.
    edges, start = [], 0
    for m in range(k, 0, -1):
        end = int(np.argmin(cost[start] + rest[m - 1][1:]))
        edges.append(int(values[end]))
        start = end + 1
    return edges


def pack(x, mask) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"x must be at least 2-D [B, T, ...], got shape {x.shape}")
    mask = _mask(mask, x.shape[:2])
    cu_seqlens = np.concatenate([[0], np.cumsum(mask.sum(axis=1))]).astype(np.int64)
    return x[mask], cu_seqlens


def _cu_seqlens(cu_seqlens, total: int) -> np.ndarray:
    if not isinstance(cu_seqlens, np.ndarray) or cu_seqlens.ndim != 1 \
            or not np.issubdtype(cu_seqlens.dtype, np.integer) or len(cu_seqlens) == 0 \
            or cu_seqlens[0] != 0 or np.any(np.diff(cu_seqlens) < 0) \
            or cu_seqlens[-1] != total:
        raise ValueError(f"cu_seqlens must be a 1-D integer array from 0, non-decreasing, "
                         f"ending at the packed count {total}")
    return cu_seqlens.astype(np.int64)


def unpack(packed, cu_seqlens, *, side: str = "right",
           length=None) -> tuple[np.ndarray, np.ndarray]:
    packed = np.asarray(packed)
    if packed.ndim == 0:
        raise ValueError("packed must be at least 1-D [N, ...]")
    cu = _cu_seqlens(cu_seqlens, len(packed))
    _side(side)
    lens = np.diff(cu)
    longest = int(lens.max(initial=0))
    if length is None:
        length = longest
    elif not _is_int(length) or length < longest:
        raise ValueError(f"length must be an int >= the longest sequence {longest}, "
                         f"got {length!r}")
    cols = np.arange(length)
    start = length - lens[:, None] if side == "left" else 0
    mask = (cols >= start) & (cols < start + lens[:, None])
    x = np.zeros((len(lens), length, *packed.shape[1:]), dtype=packed.dtype)
    x[mask] = packed
    return x, mask


def varlen_attention(q, k, v, cu_seqlens, *, causal: bool = False, scale=None) -> np.ndarray:
    q, k, v = _floats(q, k, v)
    _heads(q, k, v, 3)
    cu = _cu_seqlens(cu_seqlens, len(q))
    scale = _scale(scale, q.shape[-1])
    out = np.zeros(v.shape)
    for start, end in zip(cu[:-1].tolist(), cu[1:].tolist(), strict=True):
        keep = np.tri(end - start, dtype=bool) if causal else np.ones((end - start,) * 2, bool)
        heads = [a[start:end].transpose(1, 0, 2) for a in (q, k, v)]  # [H, L, D]
        out[start:end] = _attend(*heads, keep, scale).transpose(1, 0, 2)
    return out
