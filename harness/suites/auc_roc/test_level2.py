"""Level 2: the ROC curve itself."""

import numpy as np
import pytest
from hypothesis import given

from harness.marks import level

from .oracle import close, counting_curve, samples, sklearn_metrics

grade = level(2, "curve")


EXAMPLE = ([0, 1, 1, 0, 1, 0, 1], [0.1, 0.9, 0.4, 0.4, 0.7, 0.7, 0.2])


@grade("roc_curve must return three 1-D NumPy arrays of equal length")
def test_shapes(impl):
    out = impl.roc_curve(*EXAMPLE)
    assert len(out) == 3
    assert all(isinstance(a, np.ndarray) and a.ndim == 1 for a in out)
    assert len({len(a) for a in out}) == 1


@grade("the curve must start at (0, 0) with threshold +inf")
def test_starts_at_origin(impl):
    fpr, tpr, thr = impl.roc_curve(*EXAMPLE)
    assert (fpr[0], tpr[0], thr[0]) == (0.0, 0.0, np.inf)


@grade("the curve must end at (1, 1)")
def test_ends_at_one_one(impl):
    fpr, tpr, _ = impl.roc_curve(*EXAMPLE)
    assert close(fpr[-1], 1.0) and close(tpr[-1], 1.0)


@grade("the curve must have one point per distinct score", "ties")
@given(samples())
def test_one_point_per_distinct_score(impl, data):
    y, s, _ = data
    _, _, thr = impl.roc_curve(y, s)
    assert sorted(thr[1:], reverse=True) == sorted(set(s), reverse=True)


@grade("thresholds must be strictly decreasing")
@given(samples())
def test_thresholds_decreasing(impl, data):
    y, s, _ = data
    _, _, thr = impl.roc_curve(y, s)
    assert np.all(np.diff(thr) < 0)


@grade("each point must count the samples with score >= threshold as positive")
@given(samples())
def test_matches_counting_definition(impl, data):
    y, s, _ = data
    fpr, tpr, thr = impl.roc_curve(y, s)
    efpr, etpr, ethr = counting_curve(y, s)
    assert np.array_equal(thr, ethr)
    assert np.allclose(fpr, efpr) and np.allclose(tpr, etpr)


@grade("the trapezoidal area under roc_curve must equal roc_auc_score")
@given(samples())
def test_area_matches_score(impl, data):
    y, s, _ = data
    fpr, tpr, _ = impl.roc_curve(y, s)
    area = float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2))
    assert close(area, impl.roc_auc_score(y, s))


@grade("roc_curve must match scikit-learn's roc_curve(drop_intermediate=False)")
@given(samples(max_size=60))
def test_matches_sklearn(impl, data):
    if sklearn_metrics is None:
        pytest.skip("scikit-learn is not installed")
    y, s, _ = data
    for ours, theirs in zip(impl.roc_curve(y, s),
                            sklearn_metrics.roc_curve(y, s, drop_intermediate=False), strict=True):
        assert np.allclose(ours, theirs)
