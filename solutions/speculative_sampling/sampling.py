"""Sampling a serving engine can batch: temperature, top-k, top-p and min-p per row, the same bits
whatever the batch, then speculative verification of draft tokens. NumPy only."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SamplingParams:
    temperature: float = 1.0
    top_k: int | None = 0  # 0 or None: off
    top_p: float = 1.0  # 1.0: off
    min_p: float = 0.0  # 0.0: off


# --- validation ---------------------------------------------------------------------------------


def _is_real(x) -> bool:
    return isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool)


def _is_integer(x) -> bool:
    return isinstance(x, int | np.integer) and not isinstance(x, bool)


def _temperature(t) -> float:
    if not _is_real(t):
        raise ValueError(f"temperature must be a real number, got {t!r}")
    if not math.isfinite(t):
        raise ValueError(f"temperature must be finite, got {t!r}")
    if t < 0:
        raise ValueError(f"temperature must be >= 0, got {t!r}")
    return float(t)


def _top_k(k, none_is_off: bool) -> int:
    if k is None and none_is_off:
        return 0
    if not _is_integer(k):
        raise ValueError(f"top_k must be an integer, got {k!r}")
    if k < 0:
        raise ValueError(f"top_k must be >= 0, got {k!r}")
    return int(k)


def _top_p(p) -> float:
    if not _is_real(p) or not 0 < p <= 1:
        raise ValueError(f"top_p must be a real in (0, 1], got {p!r}")
    return float(p)


def _min_p(m) -> float:
    if not _is_real(m) or not 0 <= m <= 1:
        raise ValueError(f"min_p must be a real in [0, 1], got {m!r}")
    return float(m)


def _logits(logits, ndim: int) -> np.ndarray:
    """`ndim`-D logits as float64, only ever read: the caller's array is never touched. Float64
    logits are not copied: a batch's copy is B x V fresh pages, slower than the sampling."""
    if not isinstance(logits, np.ndarray) or logits.dtype.kind not in "iuf":
        raise ValueError(f"logits must be an integer or floating array, got "
                         f"{getattr(logits, 'dtype', type(logits).__name__)}")
    if logits.ndim != ndim:
        raise ValueError(f"logits must be {ndim}-D, got shape {logits.shape}")
    if logits.shape[-1] == 0:
        raise ValueError("logits need at least one token (V >= 1)")
    x = logits.astype(np.float64, copy=False)  # before any arithmetic: int8 would wrap
    top = x.max(axis=-1, initial=-np.inf)  # NaN in a row that holds one; no B x V temporaries
    if np.isnan(top).any():
        raise ValueError("logits must not hold NaN")
    if np.isposinf(top).any():
        raise ValueError("logits must not hold +inf")
    if np.isneginf(top).any():
        raise ValueError("every row of logits needs a finite value")
    return x


def _column(values, batch: int, what: str, kinds: str, check) -> np.ndarray:
    """One parameter per row: a list, tuple or 1-D array of length `batch`, never broadcast."""
    if isinstance(values, np.ndarray):
        if values.ndim != 1 or values.dtype.kind not in kinds:
            raise ValueError(f"{what} must be a 1-D array of dtype kind {kinds!r}, got "
                             f"{values.dtype} of shape {values.shape}")
        values = values.tolist()
    elif not isinstance(values, list | tuple):
        raise ValueError(f"{what} must be a list, a tuple or a 1-D array, got "
                         f"{type(values).__name__}")
    if len(values) != batch:
        raise ValueError(f"{what} must hold one value per row ({batch}), got {len(values)}")
    return np.array([check(v) for v in values], dtype=np.float64 if kinds != "iu" else np.int64)


# --- Level 1 and 2: the filter chain, one vectorised pass over rows ------------------------------


def _keep(p: np.ndarray, rows: np.ndarray, keep: np.ndarray) -> None:
    """Zero what a step drops in `rows` and renormalise those rows only: a row whose step is off
    keeps every bit, whatever the other rows ask for."""
    kept = p[rows]  # a copy, worked on in place: no B x V temporaries beyond it
    kept *= keep  # p * 1 and p * 0 are exact: the bits np.where(keep, p, 0) would give
    kept /= kept.sum(axis=1, keepdims=True)
    p[rows] = kept


BINADES = 1100  # [2^-j, 2^(1-j)) for j = 0 .. 1074, then one bin for 0


def _head(p: np.ndarray, top_p: np.ndarray) -> np.ndarray:
    """Each row's m largest probabilities, most probable first, with m large enough that the
    running sum passes the row's top_p in every row: top-p reads nothing past that point, and
    the head's running sums are a full sort's first m, bit for bit. One partition and a sort of
    m values, where sorting all V costs V log V per row."""
    rows, vocab = p.shape
    # The guess: whole binades of p, largest first, until their mass passes top_p.
    _, exponent = np.frexp(p)  # p in [2^(e-1), 2^e)
    binade = np.where(p > 0, 1 - exponent, BINADES - 1) + BINADES * np.arange(rows)[:, None]
    mass = np.bincount(binade.ravel(), p.ravel(), BINADES * rows).reshape(rows, BINADES)
    count = np.bincount(binade.ravel(), None, BINADES * rows).reshape(rows, BINADES)
    reached = (np.cumsum(mass, axis=1) > top_p[:, None]).argmax(axis=1)
    m = int(np.cumsum(count, axis=1)[np.arange(rows), reached].max(initial=1))
    while m < vocab:  # the running sums decide; a guess short of them grows
        head = np.partition(p, vocab - m, axis=1)[:, vocab - m:]  # the m largest, as a multiset
        head = -np.sort(-head, axis=1)
        if (np.cumsum(head, axis=1)[:, -1] > top_p).all():  # past every position top-p reads
            return head
        m = min(4 * m, vocab)
    return -np.sort(-p, axis=1)


def _distributions(x: np.ndarray, t: np.ndarray, k: np.ndarray, top_p: np.ndarray,
                   min_p: np.ndarray) -> np.ndarray:
    """Float64 logits (B, V) and validated per-row parameters -> probabilities (B, V). Every
    operation works row by row, so no row's bits depend on another row."""
    vocab = x.shape[1]
    greedy = t == 0
    with np.errstate(over="ignore"):  # temperature 1e-308: a finite gap becomes -inf, fine
        s = (x - x.max(axis=1, keepdims=True)) / np.where(greedy, 1.0, t)[:, None]
    p = np.exp(s)
    p /= p.sum(axis=1, keepdims=True)

    for kk in np.unique(k[~greedy & (k >= 1) & (k < vocab)]):  # one partition per distinct k
        rows = np.flatnonzero(~greedy & (k == kk))
        kth = np.partition(s[rows], vocab - kk, axis=1)[:, vocab - kk]  # the kk-th largest
        _keep(p, rows, s[rows] >= kth[:, None])  # its ties stay

    rows = np.flatnonzero(~greedy & (top_p < 1))
    if len(rows):
        sub = p[rows]
        desc = _head(sub, top_p[rows])
        above = np.zeros_like(desc)  # the mass before each position, most probable first
        above[:, 1:] = np.cumsum(desc, axis=1)[:, :-1]
        # Positions with above < top_p form a prefix; keeping every token at least as probable
        # as its last member keeps that member's ties, which share the mass above it.
        last = (above < top_p[rows, None]).sum(axis=1) - 1
        _keep(p, rows, sub >= desc[np.arange(len(rows)), last][:, None])

    rows = np.flatnonzero(~greedy & (min_p > 0))
    if len(rows):
        sub = p[rows]
        _keep(p, rows, sub >= min_p[rows, None] * sub.max(axis=1, keepdims=True))

    rows = np.flatnonzero(greedy)
    p[rows] = 0.0
    p[rows, x[rows].argmax(axis=1)] = 1.0  # argmax: the lowest id among the maxima
    return p


def _draw(p: np.ndarray, u: float) -> int:
    """Inverse CDF in id order: the smallest i with u * c[V - 1] < c[i]. Only tokens of p > 0
    move c, and adding 0.0 changes no bit, so the sums run over those alone (a filtered row
    keeps a few of V) and stay the full cumulative sums at those ids."""
    ids = np.flatnonzero(p)
    c = np.cumsum(p[ids])
    j = int(np.searchsorted(c, u * c[-1], side="right"))  # the first c[j] above u * c[V - 1]
    return int(ids[j]) if j < len(ids) else len(p) - 1  # u * c[V - 1] may round up to c[V - 1]


def probs(logits, temperature=1.0, top_k=0, top_p=1.0, min_p=0.0) -> np.ndarray:
    x = _logits(logits, 1)
    t, k = _temperature(temperature), _top_k(top_k, none_is_off=True)
    top_p, min_p = _top_p(top_p), _min_p(min_p)
    return _distributions(x[None], *(np.array([v]) for v in (t, k, top_p, min_p)))[0]


def sample(logits, params: SamplingParams, rng) -> int:
    p = probs(logits, params.temperature, params.top_k, params.top_p, params.min_p)
    if params.temperature == 0:
        return int(np.argmax(p))  # greedy: no draw
    return _draw(p, rng.random())


def _batch(logits, temperature, top_k, top_p, min_p) -> tuple[np.ndarray, ...]:
    x = _logits(logits, 2)
    batch = x.shape[0]
    return (x, _column(temperature, batch, "temperature", "iuf", _temperature),
            _column(top_k, batch, "top_k", "iu", lambda v: _top_k(v, none_is_off=False)),
            _column(top_p, batch, "top_p", "iuf", _top_p),
            _column(min_p, batch, "min_p", "iuf", _min_p))


def batch_probs(logits, temperature, top_k, top_p, min_p) -> np.ndarray:
    return _distributions(*_batch(logits, temperature, top_k, top_p, min_p))


# Logits per block of rows that batch_sample filters at once: a block's temporaries stay in the
# CPU's cache, where a whole batch's (256 MB at B = 1,024, V = 32,000) would not.
BLOCK = 1 << 15


def batch_sample(logits, temperature, top_k, top_p, min_p, rngs) -> np.ndarray:
    x, t, k, top_p, min_p = _batch(logits, temperature, top_k, top_p, min_p)
    if not isinstance(rngs, list | tuple) or len(rngs) != len(x):
        raise ValueError(f"need a list or tuple of one generator per row ({len(x)})")
    # Greedy rows draw nothing; u = 0 then picks their one-hot token.
    u = [rng.random() if temp > 0 else 0.0 for temp, rng in zip(t, rngs, strict=True)]
    tokens = np.zeros(len(x), dtype=np.int64)
    greedy = t == 0
    # Rows sorted once by what they ask for, so that a block's rows share their filters (one
    # partition per block for a shared top_k); greedy rows last.
    order = np.lexsort((min_p > 0, top_p < 1, k, greedy))
    step = max(1, BLOCK // x.shape[1])
    for i in range(0, len(x), step):  # rows are independent: any block gives the same bits
        block = order[i:i + step]
        rows = block[greedy[block]]  # the one-hot at the lowest maximum, as probs puts it
        tokens[rows] = x[rows].argmax(axis=1)
        rows = block[~greedy[block]]
        p = _distributions(x[rows], t[rows], k[rows], top_p[rows], min_p[rows])
        tokens[rows] = [_draw(row, u[r]) for row, r in zip(p, rows, strict=True)]
    return tokens


# --- Level 3: speculative verification ----------------------------------------------------------


def _rows(rows, what: str) -> np.ndarray:
    """Distributions as given (never renormalised), as a float64 copy."""
    if not isinstance(rows, np.ndarray) or rows.dtype.kind not in "iuf":
        raise ValueError(f"{what} must be an integer or floating array, got "
                         f"{getattr(rows, 'dtype', type(rows).__name__)}")
    rows = rows.astype(np.float64)
    if not np.isfinite(rows).all() or (rows < 0).any():
        raise ValueError(f"{what} must hold finite numbers >= 0")
    if (np.abs(rows.sum(axis=-1) - 1) > 1e-6).any():
        raise ValueError(f"every distribution in {what} must sum to 1 within 1e-6")
    return rows


def acceptance_rate(target, draft) -> float:
    p, q = _rows(target, "target"), _rows(draft, "draft")
    if p.ndim != 1 or len(p) == 0 or q.shape != p.shape:
        raise ValueError(f"need two 1-D distributions of one length, got {p.shape}, {q.shape}")
    return float(np.minimum(p, q).sum())


def expected_tokens(alpha, k) -> float:
    if not _is_real(alpha) or not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be a real in [0, 1], got {alpha!r}")
    if not _is_integer(k) or k < 0:
        raise ValueError(f"k must be an integer >= 0, got {k!r}")
    if alpha == 1:
        return float(k + 1)  # the closed form is 0 / 0 there
    return (1 - alpha ** (k + 1)) / (1 - alpha)


def _tokens(draft_tokens) -> list[int]:
    if isinstance(draft_tokens, np.ndarray):
        if draft_tokens.ndim != 1 or draft_tokens.dtype.kind not in "iu":
            raise ValueError(f"draft_tokens must be a 1-D integer array, got "
                             f"{draft_tokens.dtype} of shape {draft_tokens.shape}")
        return draft_tokens.tolist()
    if not isinstance(draft_tokens, list | tuple) or not all(map(_is_integer, draft_tokens)):
        raise ValueError(f"draft_tokens must be a list or tuple of integers, got {draft_tokens!r}")
    return [int(x) for x in draft_tokens]


def verify(draft_tokens, draft_probs, target_probs, rng) -> list[int]:
    drafts = _tokens(draft_tokens)
    k = len(drafts)
    p = _rows(target_probs, "target_probs")
    if p.ndim != 2 or p.shape[0] != k + 1 or p.shape[1] == 0:
        raise ValueError(f"target_probs must have shape ({k + 1}, V >= 1), got {p.shape}")
    vocab = p.shape[1]
    if any(not 0 <= x < vocab for x in drafts):
        raise ValueError(f"draft tokens must lie in [0, {vocab}), got {drafts}")
    if draft_probs is None:  # a deterministic drafter: q_i is one-hot on x_i
        q = np.zeros((k, vocab))
        q[np.arange(k), drafts] = 1.0
    else:
        q = _rows(draft_probs, "draft_probs")
        if q.shape != (k, vocab):
            raise ValueError(f"draft_probs must have shape ({k}, {vocab}), got {q.shape}")
    if (q[np.arange(k), drafts] == 0).any():
        raise ValueError("a draft token has probability 0 under its own draft distribution")

    u = rng.random(k + 1)  # all k + 1 first, whatever is accepted later
    for i, x in enumerate(drafts):
        if not u[i] < p[i, x] / q[i, x]:  # strict: a token the target gives 0 never passes
            w = np.maximum(p[i] - q[i], 0.0)
            if w.sum() == 0:
                w = p[i]
            return [*drafts[:i], _draw(w, u[k])]
    return [*drafts, _draw(p[k], u[k])]
