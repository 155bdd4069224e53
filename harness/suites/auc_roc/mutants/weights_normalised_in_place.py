"""Mistake: sample_weight is normalised in place, changing the caller's array.

Otherwise the reference solution of auc_roc."""

from __future__ import annotations

import numpy as np


def _as_1d(name: str, values) -> np.ndarray:
    arr = np.asarray(values)  # a pandas Series is taken by position: its index is ignored
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got an array of shape {arr.shape}")
    return arr


def _validate(y_true, y_score, sample_weight):
    y = _as_1d("y_true", y_true)
    s = _as_1d("y_score", y_score)
    if len(y) != len(s):
        raise ValueError(f"y_true and y_score have different lengths: {len(y)} and {len(s)}")
    if len(y) == 0:
        raise ValueError("y_true and y_score are empty")
    if y.dtype.kind not in "biuf" or not np.all((y == 0) | (y == 1)):
        raise ValueError(f"y_true must hold only 0/1 labels, got values {np.unique(y)[:5]}")
    if s.dtype.kind not in "biuf":
        raise ValueError(f"y_score must hold real numbers, got dtype {s.dtype}")
    s = s.astype(np.float64, copy=False)
    if not np.all(np.isfinite(s)):
        raise ValueError("y_score contains NaN or infinite values")
    positive = y == 1
    if positive.all() or not positive.any():
        raise ValueError("only one class is present in y_true; AUC is undefined")
    if sample_weight is None:
        return positive, s, None
    w = _as_1d("sample_weight", sample_weight)
    w /= w.max()  # normalise for numerical safety: in place, on the caller's array
    if len(w) != len(y):
        raise ValueError(f"sample_weight has length {len(w)}, expected {len(y)}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("sample_weight must be finite and non-negative")
    if w[positive].sum() == 0 or w[~positive].sum() == 0:
        raise ValueError("one class has a total sample_weight of 0; AUC is undefined")
    return positive, s, w


def _cumulative_counts(y_true, y_score, sample_weight):
    """Weighted true and false positives at each distinct score, from the highest score down."""
    positive, score, weight = _validate(y_true, y_score, sample_weight)
    if weight is not None:
        keep = weight > 0  # a zero-weight sample must not create a curve point
        positive, score, weight = positive[keep], score[keep], weight[keep]
    order = np.argsort(score)[::-1]
    score, positive = score[order], positive[order]
    # The last index of each group of equal scores: one curve point per distinct score.
    last = np.flatnonzero(np.diff(score, append=-np.inf))
    if weight is None:
        tps = np.cumsum(positive)[last]
        return last + 1 - tps, tps, score[last]
    weight = weight[order]
    tps = np.cumsum(weight * positive)[last]
    return np.cumsum(weight)[last] - tps, tps, score[last]


def roc_curve(y_true, y_score, sample_weight=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(fpr, tpr, thresholds): one point per distinct score, from (0, 0) at +inf to (1, 1)."""
    fps, tps, thresholds = _cumulative_counts(y_true, y_score, sample_weight)
    fpr = np.concatenate([[0.0], fps / fps[-1]])
    tpr = np.concatenate([[0.0], tps / tps[-1]])
    return fpr, tpr, np.concatenate([[np.inf], thresholds])


def roc_auc_score(y_true, y_score, sample_weight=None) -> float:
    """P(s+ > s-) + 1/2 P(s+ = s-), the trapezoidal area under the ROC curve."""
    fps, tps, _ = _cumulative_counts(y_true, y_score, sample_weight)
    # Each group of tied scores adds a trapezoid: its negatives times the positives ranked
    # above them, plus half of the positives tied with them.
    dfp = np.diff(fps, prepend=0.0)
    dtp = np.diff(tps, prepend=0.0)
    area = np.sum(dfp * (tps - dtp / 2))
    return float(area / (fps[-1] * tps[-1]))
