"""Brute-force definitions the hidden suite compares against, and the data they run on."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

try:  # imported here, outside any test's time limit: importing scikit-learn can take seconds
    from sklearn import metrics as sklearn_metrics
except ImportError:
    sklearn_metrics = None


def pairwise_auc(y, s, w=None) -> float:
    """P(s+ > s-) + 1/2 P(s+ = s-) over every weighted positive-negative pair."""
    w = [1.0] * len(y) if w is None else list(w)
    num = den = 0.0
    for yi, si, wi in zip(y, s, w, strict=True):
        for yj, sj, wj in zip(y, s, w, strict=True):
            if yi == 1 and yj == 0:
                den += wi * wj
                num += wi * wj * (1.0 if si > sj else 0.5 if si == sj else 0.0)
    return num / den


def counting_curve(y, s, w=None):
    """fpr, tpr, thresholds: a point per distinct score of positive weight, from +inf down."""
    y, s = np.asarray(y), np.asarray(s, dtype=float)
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    distinct = sorted({si for si, wi in zip(s, w, strict=True) if wi > 0}, reverse=True)
    thresholds = [math.inf, *distinct]
    pos, neg = w * (y == 1), w * (y == 0)
    tpr = [pos[s >= t].sum() / pos.sum() for t in thresholds]
    fpr = [neg[s >= t].sum() / neg.sum() for t in thresholds]
    return np.array(fpr), np.array(tpr), np.array(thresholds)


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


SMALL_INTS = st.integers(0, 6)  # few distinct values, so ties are common


@st.composite
def samples(draw, score=SMALL_INTS, weights=False, max_size=30):
    """(labels, scores, weights or None) with both classes present (and of positive weight)."""
    rows = draw(st.lists(st.tuples(st.integers(0, 1), score), min_size=0, max_size=max_size))
    rows += [(1, draw(score)), (0, draw(score))]
    rows = draw(st.permutations(rows))
    y, s = [r[0] for r in rows], [r[1] for r in rows]
    if not weights:
        return y, s, None
    w = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]), min_size=len(y),
                      max_size=len(y)))
    w[y.index(1)] = w[y.index(0)] = 1.0
    return y, s, w


distinct_scores = st.floats(-1e6, 1e6, allow_nan=False)
