"""Exactness without noise: the law of verify's output for fixed rows, found by enumerating every
draft and, for each uniform, one point inside each interval on which the output cannot change,
weighted by the interval's length."""

from __future__ import annotations

import itertools
from collections import defaultdict
from itertools import accumulate

import numpy as np
from hypothesis import strategies as st

from . import oracle
from .fakes import Scripted


def intervals(cuts: list[float]) -> list[tuple[float, float]]:
    """(midpoint, length) of each nonempty piece of [0, 1) between the cuts."""
    points = sorted({0.0, 1.0, *(c for c in cuts if 0 < c < 1)})
    return [((a + b) / 2, b - a) for a, b in zip(points, points[1:], strict=False)]


def last_cuts(dist: list[float]) -> list[float]:
    """Where `sample`'s rule changes its token as u goes from 0 to 1."""
    c = list(accumulate(dist))
    return [ci / c[-1] for ci in c]


def law(impl, target: list[list[float]], draft: list[list[float]] | None,
        fixed: list[int] | None = None) -> dict[tuple[int, ...], float]:
    """{output: probability} of impl.verify over the drafts (weight prod q_i(x_i)) and uniforms.
    With draft None, `fixed` is the one draft sequence of a deterministic drafter."""
    k, vocab = len(target) - 1, len(target[0])
    if draft is None:
        rows = [oracle.one_hot(x, vocab) for x in fixed]
        sequences = [tuple(fixed)]
    else:
        rows = draft
        sequences = itertools.product(*[[x for x in range(vocab) if q[x] > 0] for q in draft])
    found: dict[tuple[int, ...], float] = defaultdict(float)
    for xs in sequences:
        weight = float(np.prod([rows[i][x] for i, x in enumerate(xs)])) if draft else 1.0
        ratios = [min(1.0, target[i][x] / rows[i][x]) for i, x in enumerate(xs)]
        accept = [intervals([r]) for r in ratios]
        cuts = [c for i in range(k) for c in last_cuts(oracle.residual(target[i], rows[i]))]
        last = intervals(cuts + last_cuts(target[k]))
        for cells in itertools.product(*accept, last):
            rng = Scripted(*(mid for mid, _ in cells))
            rows_given = None if draft is None else np.array(draft).reshape(k, vocab)
            out = impl.verify(list(xs), rows_given, np.array(target), rng)
            found[tuple(int(t) for t in out)] += weight * float(np.prod([n for _, n in cells]))
    return dict(found)


def reach(found: dict[tuple[int, ...], float], j: int) -> float:
    """The probability that the output has a token at position j + 1."""
    return sum(w for out, w in found.items() if len(out) > j)


def next_token(found: dict[tuple[int, ...], float], prefix: tuple[int, ...],
               vocab: int) -> list[float]:
    """The law of the token after `prefix`, given the output goes on past it."""
    j = len(prefix)
    weights = [sum(w for out, w in found.items() if len(out) > j and out[:j] == prefix
                   and out[j] == t) for t in range(vocab)]
    total = sum(weights)
    return [w / total for w in weights]


def sixteenths(vocab: int) -> st.SearchStrategy[list[float]]:
    """A distribution over `vocab` tokens in multiples of 1/16: every cut lands far from the
    midpoints, and the rows sum to 1 exactly."""
    return st.lists(st.integers(0, 16), min_size=vocab - 1, max_size=vocab - 1).map(
        lambda bars: sorted(bars)).map(
        lambda bars: [(b - a) / 16 for a, b in zip([0, *bars], [*bars, 16], strict=True)])


@st.composite
def cases(draw) -> tuple[list[list[float]], list[list[float]] | None, list[int] | None]:
    """(target rows, draft rows or None, the fixed drafts when None) with V <= 4 and k <= 2."""
    vocab, k = draw(st.integers(2, 4)), draw(st.integers(0, 2))
    target = [draw(sixteenths(vocab)) for _ in range(k + 1)]
    if draw(st.booleans()):
        return target, None, draw(st.lists(st.integers(0, vocab - 1), min_size=k, max_size=k))
    return target, [draw(sixteenths(vocab)) for _ in range(k)], None
