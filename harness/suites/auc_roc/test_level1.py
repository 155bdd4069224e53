"""Level 1: AUC without weights, ties included."""

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from harness.marks import level

from .oracle import close, distinct_scores, pairwise_auc, samples

grade = level(1)


@grade("AUC must equal the share of positive-negative pairs ranked correctly", "pairs")
@given(samples(score=distinct_scores))
def test_matches_pairwise_definition(impl, data):
    y, s, _ = data
    assert close(impl.roc_auc_score(y, s), pairwise_auc(y, s))


@grade("the prompt's example must give 0.75", "pairs")
def test_example(impl):
    # Pairs (positive, negative): 0.35 beats 0.1 but not 0.4; 0.8 beats both: 3 of 4.
    assert close(impl.roc_auc_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]), 0.75)


@grade("tied scores must count one half", "ties")
@given(samples(score=st.integers(0, 3)))
def test_ties_count_half(impl, data):
    y, s, _ = data
    assert close(impl.roc_auc_score(y, s), pairwise_auc(y, s))


@grade("scores that are all equal must give 0.5", "ties")
def test_all_tied(impl):
    assert close(impl.roc_auc_score([0, 1, 1, 0, 1], [0.3] * 5), 0.5)


@grade("a perfect ranking must give 1 and a reversed one 0", "orientation")
def test_perfect_and_reversed(impl):
    y = [0, 0, 1, 1, 0, 1]
    s = [0.1, 0.2, 0.7, 0.8, 0.3, 0.9]
    assert close(impl.roc_auc_score(y, s), 1.0)
    assert close(impl.roc_auc_score(y, [-v for v in s]), 0.0)


@grade("flipping every label must give 1 - AUC", "orientation")
@given(samples())
def test_label_flip(impl, data):
    y, s, _ = data
    flipped = [1 - v for v in y]
    assert close(impl.roc_auc_score(flipped, s), 1 - impl.roc_auc_score(y, s))


@grade("a strictly increasing transform of the scores must not change AUC", "pairs")
@given(samples(score=st.integers(-20, 20)))
def test_monotone_transform(impl, data):
    y, s, _ = data
    transformed = [np.exp(v / 4) * 3 + 1 for v in s]
    assert close(impl.roc_auc_score(y, transformed), impl.roc_auc_score(y, s))


@grade("lists, NumPy arrays and pandas Series must give the same AUC", "inputs")
def test_input_types(impl):
    y, s = [0, 1, 1, 0, 1, 0], [0.2, 0.9, 0.4, 0.4, 0.6, 0.1]
    expected = pairwise_auc(y, s)
    for yy, ss in [(np.array(y), np.array(s)), (pd.Series(y), pd.Series(s)), (y, np.array(s))]:
        assert close(impl.roc_auc_score(yy, ss), expected)


@grade("a pandas Series must be read by position, not by its index", "inputs")
def test_series_by_position(impl):
    y, s = [0, 1, 1, 0, 1], [0.1, 0.8, 0.3, 0.5, 0.9]
    ys = pd.Series(y, index=[4, 2, 0, 3, 1])
    ss = pd.Series(s, index=[0, 1, 2, 3, 4])
    assert close(impl.roc_auc_score(ys, ss), pairwise_auc(y, s))


@grade("boolean and 0.0/1.0 labels must work like 0/1", "inputs")
def test_label_types(impl):
    y, s = [0, 1, 1, 0, 1], [0.1, 0.8, 0.3, 0.5, 0.3]
    expected = pairwise_auc(y, s)
    assert close(impl.roc_auc_score([bool(v) for v in y], s), expected)
    assert close(impl.roc_auc_score(np.array(y, dtype=float), s), expected)


@grade("roc_auc_score must return a float", "inputs")
def test_returns_float(impl):
    assert isinstance(impl.roc_auc_score([0, 1, 0, 1], [0.1, 0.4, 0.35, 0.8]), float)


@grade("the caller's arrays must not be modified", "inputs")
def test_inputs_untouched(impl):
    y, s = np.array([1, 0, 1, 0, 1]), np.array([0.9, 0.1, 0.4, 0.4, 0.2])
    y0, s0 = y.copy(), s.copy()
    impl.roc_auc_score(y, s)
    assert np.array_equal(y, y0) and np.array_equal(s, s0)
