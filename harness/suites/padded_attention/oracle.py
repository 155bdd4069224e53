"""Plain oracles written from the prompt, one row, one sequence or one brute force at a time,
never from the reference solution."""

from __future__ import annotations

import itertools
import math

import numpy as np


def layout(seqs, side: str, pad_id: int, multiple_of: int) -> tuple[list, list]:
    """pad_batch's (ids, mask) as nested lists."""
    longest = max((len(s) for s in seqs), default=0)
    width = longest
    while width % multiple_of:
        width += 1
    ids, mask = [], []
    for s in seqs:
        pads = width - len(s)
        tokens = [int(t) for t in s]
        if side == "right":
            ids.append(tokens + [pad_id] * pads)
            mask.append([True] * len(s) + [False] * pads)
        else:
            ids.append([pad_id] * pads + tokens)
            mask.append([False] * pads + [True] * len(s))
    return ids, mask


def positions(mask) -> list[list[int]]:
    out = []
    for row in np.asarray(mask).tolist():
        seen, got = 0, []
        for real in row:
            got.append(seen if real else 0)
            seen += real
        out.append(got)
    return out


def softmax_row(x: list[float], keep: list[bool]) -> list[float]:
    kept = [xi for xi, k in zip(x, keep, strict=True) if k]
    if not kept:
        return [0.0] * len(x)
    m = max(kept)
    total = math.fsum(math.exp(xi - m) for xi in kept)
    return [math.exp(xi - m) / total if k else 0.0 for xi, k in zip(x, keep, strict=True)]


def masked_softmax(logits: np.ndarray, mask: np.ndarray, axis: int) -> np.ndarray:
    x = np.moveaxis(np.asarray(logits, dtype=np.float64), axis, -1)
    keep = np.moveaxis(np.broadcast_to(mask, np.shape(logits)), axis, -1)
    out = np.zeros(x.shape)
    for idx in np.ndindex(x.shape[:-1]):
        out[idx] = softmax_row(x[idx].tolist(), keep[idx].tolist())
    return np.moveaxis(out, -1, axis)


def attend_alone(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool,
                 scale: float | None) -> np.ndarray:
    """One unpadded sequence: q, k [H, L, D], v [H, L, Dv] -> [H, L, Dv]."""
    heads, length, dim = q.shape
    scale = 1 / math.sqrt(dim) if scale is None else scale
    out = np.zeros((heads, length, v.shape[-1]))
    for h in range(heads):
        scores = scale * (q[h] @ k[h].T)
        for t in range(length):
            keys = t + 1 if causal else length
            weights = softmax_row(scores[t, :keys].tolist(), [True] * keys)
            out[h, t] = np.asarray(weights) @ v[h, :keys]
    return out


def padding(lengths, edges) -> int:
    return sum(min(e for e in edges if e >= n) - n for n in lengths)


def brute_edges(lengths, num_buckets: int) -> list[int]:
    """Every increasing choice of the distinct lengths ending at the largest, in lexicographic
    order, so the first minimum is the lexicographically smallest."""
    values = sorted(set(int(n) for n in lengths))
    if not values:
        return []
    k = min(num_buckets, len(values))
    choices = (c for c in itertools.combinations(values, k) if c[-1] == values[-1])
    return list(min(choices, key=lambda c: padding(lengths, c)))


def least_padding(lengths, num_buckets: int) -> int:
    """The optimum alone, by a forward DP over the distinct lengths (no tie-breaking needed):
    best[j] = least padding of distinct lengths 0..j with the last bucket's edge at j."""
    values, counts = np.unique(np.asarray(lengths, dtype=np.int64), return_counts=True)
    n = len(values)
    below = np.concatenate([[0], np.cumsum(counts)])
    mass = np.concatenate([[0], np.cumsum(counts * values)])

    def bucket(first: np.ndarray, last: int) -> np.ndarray:  # lengths first..last, edge `last`
        return values[last] * (below[last + 1] - below[first]) - (mass[last + 1] - mass[first])

    best = np.array([bucket(np.array(0), j) for j in range(n)])
    for m in range(2, min(num_buckets, n) + 1):
        new = np.full(n, np.iinfo(np.int64).max // 4)
        for j in range(m - 1, n):
            prev = np.arange(m - 2, j)  # the previous bucket's edge
            new[j] = np.min(best[prev] + bucket(prev + 1, j))
        best = new
    return int(best[-1]) if n else 0
