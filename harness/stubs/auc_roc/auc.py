"""Kata auc_roc: AUC-ROC by hand. Read the prompt with `kata show auc_roc`, then grade with
`pytest katas/auc_roc` (or `kata grade auc_roc`). NumPy only."""

from __future__ import annotations

import numpy as np


def roc_curve(y_true, y_score, sample_weight=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (fpr, tpr, thresholds): a point per distinct score, from (0, 0) at +inf to (1, 1)."""
    raise NotImplementedError


def roc_auc_score(y_true, y_score, sample_weight=None) -> float:
    """Return P(s+ > s-) + 1/2 P(s+ = s-), the trapezoidal area under the ROC curve."""
    raise NotImplementedError
