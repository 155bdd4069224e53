"""Kata extra_trees_debug: find and fix. Read the prompt with `kata show extra_trees_debug`,
then grade with `pytest katas/extra_trees_debug`.

This is a complete NumPy implementation of extremely randomized trees (Geurts, Ernst & Wehenkel,
2006). It runs on easy inputs, yet eight independent bugs hide in it. Find them and fix each
with a small edit; do not rewrite the file. The hidden tests name symptoms, not lines.

How it works: a tree keeps the training rows of its open nodes grouped by node, so every
statistic of a level (target sums, feature ranges, the candidates' left-side sums) is one
segmented sum over all the nodes at once: no Python loop over nodes or samples, only over levels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np


def cells(a: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """a[rows[i], cols[i, j]] as an (i, j) array: a[rows[:, None], cols], several times faster
    as one flat take (a must be C-contiguous)."""
    return a.ravel().take(rows[:, None] * a.shape[1] + cols)


@dataclass
class Tree:
    """A fitted tree as flat arrays. Node 0 is the root; a leaf has feature -1."""

    feature: np.ndarray  # (nodes,) the feature a node splits on
    threshold: np.ndarray  # (nodes,) rows with x[feature] <= threshold go left
    left: np.ndarray  # (nodes,) child ids
    right: np.ndarray
    value: np.ndarray  # (nodes, outputs) target sums / count: class frequencies, or [mean, E y^2]

    def apply(self, X: np.ndarray) -> np.ndarray:
        """The leaf every row of X (C-contiguous) falls into."""
        node = np.zeros(len(X), dtype=np.intp)
        active = np.flatnonzero(self.feature[node] >= 0)  # rows not at a leaf yet
        while len(active):
            at = node.take(active)
            x = cells(X, active, self.feature.take(at)[:, None])[:, 0]  # X[active, feature[at]]
            go_left = x <= self.threshold.take(at)
            node[active] = np.where(go_left, self.left.take(at), self.right.take(at))
            active = active[self.feature.take(node.take(active)) >= 0]
        return node


def gini(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Gini impurity from class counts (..., classes); an empty side has impurity 0."""
    p = sums / np.maximum(counts, 1)[..., None]
    return 1.0 - (p * p).sum(axis=-1)


def variance(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Variance from (..., 2) sums of [y, y^2]; an empty side has variance 0."""
    mean = sums[..., 0] / np.maximum(counts, 1)
    return sums[..., 1] / np.maximum(counts, 1) - mean * mean


def draw_candidates(X, rows, starts, pos, k: int, need, rng):
    """Per node, k features drawn without replacement among its non-constant ones (all of them
    if fewer): their ids and (lo, hi) ranges (m, k), and every row's values of them (rows, k).
    Features are read in a random order, k at a time, until every node in `need` has k
    non-constant ones: on continuous data one round is enough."""
    m, d = len(starts), X.shape[1]
    order = np.argsort(rng.random((m, d)), axis=1)  # a random order of the features, per node
    vals = np.empty((len(rows), 0))
    for first in range(0, d, k):
        cols = order[:, first:first + k].take(pos, axis=0)  # (rows, k)
        vals = np.hstack([vals, cells(X, rows, cols)])
        lo, hi = np.minimum.reduceat(vals, starts), np.maximum.reduceat(vals, starts)
        if ((hi > lo).sum(axis=1) >= k)[need].all():
            break
    if vals.shape[1] > k:  # keep each node's first k non-constant features
        first_k = np.argsort(hi <= lo, axis=1, kind="stable")[:, :k]
        order, lo, hi = (np.take_along_axis(a, first_k, axis=1) for a in (order, lo, hi))
        vals = cells(vals, np.arange(len(rows)), first_k.take(pos, axis=0))
    return order[:, :k], lo, hi, vals


def grow_tree(X, Y, impurity, n_candidates: int, min_samples_split: int, max_depth, rng) -> Tree:
    """One tree on all rows of X. Y (n, outputs) holds the per-row sums the impurity reads.

    (m, ...) arrays describe the m open nodes of a level, (rows, ...) arrays their rows; a.take(
    pos, axis=0) spreads a node array over its rows (as a[pos] does, several times faster)."""
    n = len(X)
    size = 2 * n - 1  # every leaf holds a row, so there are at most 2n - 1 nodes
    feature, threshold = np.full(size, -1), np.zeros(size)
    left, right = np.zeros(size, dtype=np.intp), np.zeros(size, dtype=np.intp)
    value = np.zeros((size, Y.shape[1]))
    # The open nodes: their ids, their row counts, and their rows of X, grouped by node.
    ids, counts, rows = np.array([0]), np.array([n]), np.arange(n)
    n_nodes, depth = 1, 0
    while len(ids):
        m = len(ids)
        starts = np.cumsum(counts) - counts
        pos = np.repeat(np.arange(m), counts)  # each row's node, 0..m-1
        Ya = Y.take(rows, axis=0)
        sums = np.add.reduceat(Ya, starts)  # (m, outputs)
        value[ids] = sums / counts[:, None]
        if max_depth is not None and depth >= max_depth:
            break
        pure = (np.minimum.reduceat(Ya, starts) == np.maximum.reduceat(Ya, starts)).all(axis=1)
        can_split = (counts > min_samples_split) & ~pure

        # One threshold per candidate, uniform in [lo, hi): both sides get rows.
        feats, lo, hi, values = draw_candidates(X, rows, starts, pos, n_candidates, can_split, rng)
        thr = rng.random(feats.shape)
        thr = np.where(thr < hi, thr, lo)  # rounding reached the max: split at the min
        goes_left = values < thr.take(pos, axis=0)  # (rows, k)

        # Impurity decrease of every candidate, each side weighted by its share of the rows.
        on_left = goes_left.astype(np.float64)
        n_left = np.add.reduceat(on_left, starts)  # (m, k)
        by_side = np.einsum("rk,ro->rko", on_left, Ya)  # each row's targets where it goes left
        sums_left = np.add.reduceat(by_side, starts)  # (m, k, outputs)
        n_right, sums_right = counts[:, None] - n_left, sums[:, None, :] - sums_left
        children = impurity(sums_left, n_left) + impurity(sums_right, n_right)
        gain = impurity(sums, counts)[:, None] - children / 2
        usable = (n_left > 0) & (n_right > 0)  # a constant feature leaves a side empty
        best = np.argmax(np.where(usable, gain, -np.inf), axis=1)

        split = can_split & usable[np.arange(m), best]
        s = np.flatnonzero(split)
        if not len(s):
            break
        at = ids[s]
        feature[at], threshold[at] = feats[s, best[s]], thr[s, best[s]]
        left[at] = n_nodes + 2 * np.arange(len(s))
        right[at] = left[at] + 1
        # Rows of splitting nodes move on, grouped by child: slot 2j is the j-th left child.
        went_right = ~cells(goes_left, np.arange(len(rows)), best.take(pos)[:, None])[:, 0]
        child = 2 * (np.cumsum(split) - 1).take(pos) + went_right
        keep = split.take(pos)
        order = np.flatnonzero(keep)[np.argsort(child[keep], kind="stable")]
        rows = rows.take(order)
        counts = np.bincount(child[keep], minlength=2 * len(s))
        ids = n_nodes + np.arange(2 * len(s))
        n_nodes, depth = n_nodes + 2 * len(s), depth + 1
    return Tree(feature[:n_nodes], threshold[:n_nodes], left[:n_nodes], right[:n_nodes],
                value[:n_nodes])


def check_X(X) -> np.ndarray:
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}")
    if X.size == 0:
        raise ValueError(f"X is empty (shape {X.shape}); expected at least one sample and feature")
    if not np.isfinite(X).all():
        raise ValueError("X contains NaN or infinite values; expected finite numbers")
    return X


def check_y(y, n_samples: int) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim not in (1, 2) or y.ndim == 2 and y.shape[1] != 1:
        raise ValueError(f"y must be 1-D or a single column, got shape {y.shape}")
    if len(y) != n_samples:
        raise ValueError(f"X has {n_samples} samples but y has {len(y)}; expected equal lengths")
    return y


def n_candidates(max_features, n_features: int) -> int:
    """How many candidate features each node draws, from scikit-learn's max_features forms."""
    if max_features is None:
        return n_features
    if max_features in ("sqrt", "log2"):
        root = math.sqrt(n_features) if max_features == "sqrt" else math.log2(n_features)
        return max(1, int(root))
    if isinstance(max_features, Integral) and not isinstance(max_features, bool):
        if 1 <= max_features <= n_features:
            return int(max_features)
    elif isinstance(max_features, Real) and 0.0 < max_features <= 1.0:
        return max(1, int(max_features * n_features))
    raise ValueError(f"max_features must be 'sqrt', 'log2', None, an int in [1, {n_features}] "
                     f"or a float in (0, 1], got {max_features!r}")


class Forest:
    """What both forests share: hyper-parameters, validation, and growing the trees."""

    def __init__(self, n_estimators, max_features, min_samples_split, max_depth, random_state):
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.min_samples_split = min_samples_split
        self.max_depth = max_depth
        self.random_state = random_state

    def grow(self, X: np.ndarray, Y: np.ndarray, impurity) -> None:
        def is_int(v):
            return isinstance(v, Integral) and not isinstance(v, bool)

        if not is_int(self.n_estimators) or self.n_estimators < 1:
            raise ValueError(f"n_estimators must be an int >= 1, got {self.n_estimators!r}")
        if not is_int(self.min_samples_split) or self.min_samples_split < 2:
            raise ValueError(f"min_samples_split must be an int >= 2, got "
                             f"{self.min_samples_split!r}")
        if self.max_depth is not None and (not is_int(self.max_depth) or self.max_depth < 1):
            raise ValueError(f"max_depth must be None or an int >= 1, got {self.max_depth!r}")
        k = n_candidates(self.max_features, X.shape[1])
        self.n_features_in_ = X.shape[1]
        self.trees_ = [grow_tree(X, Y, impurity, k, self.min_samples_split, self.max_depth,
                                 np.random.default_rng(self.random_state))
                       for _ in range(self.n_estimators)]

    def mean_value(self, X) -> np.ndarray:
        """The trees' leaf values for every row of X, averaged over the trees."""
        if not hasattr(self, "trees_"):
            raise ValueError(f"this {type(self).__name__} is not fitted yet; call fit first")
        X = check_X(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but the forest was fitted with "
                             f"{self.n_features_in_}")
        return np.mean([tree.value[tree.apply(X)] for tree in self.trees_], axis=0)


class ExtraTreesClassifier(Forest):
    def __init__(self, n_estimators=100, max_features="sqrt", min_samples_split=2,
                 max_depth=None, random_state=None):
        super().__init__(n_estimators, max_features, min_samples_split, max_depth, random_state)

    def fit(self, X, y) -> ExtraTreesClassifier:
        X = check_X(X)
        y = check_y(y, len(X))
        self.classes_, codes = np.unique(y, return_inverse=True)
        onehot = np.zeros((len(y), len(self.classes_)))
        onehot[np.arange(len(y)), codes] = 1.0
        self.grow(X, onehot, gini)
        return self

    def predict_proba(self, X) -> np.ndarray:
        """(n_samples, n_classes): the trees' leaf class frequencies, averaged."""
        return self.mean_value(X)

    def predict(self, X) -> np.ndarray:
        proba = self.predict_proba(X)
        return np.argmax(proba, axis=1)


class ExtraTreesRegressor(Forest):
    def __init__(self, n_estimators=100, max_features=1.0, min_samples_split=2,
                 max_depth=None, random_state=None):
        super().__init__(n_estimators, max_features, min_samples_split, max_depth, random_state)

    def fit(self, X, y) -> ExtraTreesRegressor:
        X = check_X(X)
        y = np.asarray(check_y(y, len(X)), dtype=np.float64)
        if not np.isfinite(y).all():
            raise ValueError("y contains NaN or infinite values; expected finite numbers")
        # Centred, so that E[y^2] - E[y]^2 does not cancel catastrophically for large y.
        self.offset_ = y.mean()
        y -= self.offset_
        self.grow(X, np.column_stack([y, y * y]), variance)
        return self

    def predict(self, X) -> np.ndarray:
        """(n_samples,): the trees' leaf means, averaged."""
        return self.mean_value(X)[:, 0] + self.offset_
