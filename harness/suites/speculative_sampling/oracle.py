"""Plain oracles written from the prompt, in Python floats one token at a time, never from the
reference solution."""

from __future__ import annotations

import math
from itertools import accumulate


def normalised(p: list[float]) -> list[float]:
    total = math.fsum(p)
    return [x / total for x in p]


def probs(logits, temperature=1.0, top_k=0, top_p=1.0, min_p=0.0) -> tuple[list[float], float]:
    """The prompt's distribution, and how near any top-p or min-p comparison came to its boundary
    (tests skip cases nearer than 1e-6, as the prompt promises)."""
    x = [float(v) for v in logits]
    top = max(x)
    if temperature == 0:
        return [1.0 if i == x.index(top) else 0.0 for i in range(len(x))], math.inf
    s = [(v - top) / temperature for v in x]
    p = normalised([math.exp(v) for v in s])
    margin = math.inf
    if top_k:
        kth = sorted(s, reverse=True)[min(top_k, len(s)) - 1]
        p = normalised([pi if si >= kth else 0.0 for pi, si in zip(p, s, strict=True)])
    if top_p < 1:
        above = [math.fsum(pj for pj in p if pj > pi) for pi in p]
        margin = min([margin] + [abs(a - top_p) for a, pi in zip(above, p, strict=True) if pi])
        p = normalised([pi if a < top_p else 0.0 for pi, a in zip(p, above, strict=True)])
    if min_p > 0:
        bar = min_p * max(p)
        margin = min([margin] + [abs(pi - bar) for pi in p if 0 < pi < max(p)])
        p = normalised([pi if pi >= bar else 0.0 for pi in p])
    return p, margin


def draw(p: list[float], u: float) -> int:
    """The smallest i with u * c[V - 1] < c[i], c the running sums in id order."""
    c = list(accumulate(p))
    return next(i for i, ci in enumerate(c) if u * c[-1] < ci)


def residual(p: list[float], q: list[float]) -> list[float]:
    """What a rejection draws from: max(0, p - q), or p itself when that is all zero."""
    w = [max(0.0, a - b) for a, b in zip(p, q, strict=True)]
    return w if any(w) else list(p)


def alpha(p: list[float], q: list[float]) -> float:
    return math.fsum(min(a, b) for a, b in zip(p, q, strict=True))


def one_hot(token: int, vocab: int) -> list[float]:
    return [1.0 if i == token else 0.0 for i in range(vocab)]
