"""Visible examples. `pytest katas/auc_roc` also runs the hidden suite against your file."""

import math


def test_example_from_the_prompt(impl):
    assert math.isclose(impl.roc_auc_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]), 0.75)


def test_perfect_ranking(impl):
    assert impl.roc_auc_score([0, 1, 0, 1], [0.1, 0.9, 0.2, 0.8]) == 1.0


def test_a_tie_counts_one_half(impl):
    assert math.isclose(impl.roc_auc_score([0, 1], [0.5, 0.5]), 0.5)


def test_curve_endpoints(impl):
    fpr, tpr, thresholds = impl.roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    assert (fpr[0], tpr[0], thresholds[0]) == (0.0, 0.0, math.inf)
    assert (fpr[-1], tpr[-1]) == (1.0, 1.0)
    assert list(thresholds[1:]) == [0.8, 0.4, 0.35, 0.1]
