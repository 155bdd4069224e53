"""Level 3: sample weights, bad input, and scale."""

import numpy as np
import pytest
from hypothesis import given

from harness.marks import level

from .oracle import close, counting_curve, pairwise_auc, samples, sklearn_metrics

grade = level(3)


@grade("weighted AUC must equal the weighted share of correctly ranked pairs", "weights")
@given(samples(weights=True))
def test_weighted_pairwise(impl, data):
    y, s, w = data
    assert close(impl.roc_auc_score(y, s, sample_weight=w), pairwise_auc(y, s, w))


@grade("an integer weight must act like repeating the sample", "weights")
@given(samples(weights=True))
def test_weight_as_repetition(impl, data):
    y, s, w = data
    w = [int(v) for v in w]
    w[y.index(1)] = w[y.index(0)] = 1
    ry = [v for v, k in zip(y, w, strict=True) for _ in range(k)]
    rs = [v for v, k in zip(s, w, strict=True) for _ in range(k)]
    assert close(impl.roc_auc_score(y, s, sample_weight=w), impl.roc_auc_score(ry, rs))
    for ours, repeated in zip(impl.roc_curve(y, s, sample_weight=w), impl.roc_curve(ry, rs),
                              strict=True):
        assert np.allclose(ours, repeated)


@grade("samples of zero weight must be ignored, curve points included", "weights")
@given(samples(weights=True))
def test_zero_weight_ignored(impl, data):
    y, s, w = data
    fpr, tpr, thr = impl.roc_curve(y, s, sample_weight=w)
    efpr, etpr, ethr = counting_curve(y, s, w)
    assert np.array_equal(thr, ethr)
    assert np.allclose(fpr, efpr) and np.allclose(tpr, etpr)


@grade("scaling every weight by the same factor must not change AUC", "weights")
@given(samples(weights=True))
def test_weight_scale(impl, data):
    y, s, w = data
    scaled = [v * 7.5 for v in w]
    assert close(impl.roc_auc_score(y, s, sample_weight=scaled),
                 impl.roc_auc_score(y, s, sample_weight=w))


@grade("weighted results must match scikit-learn's", "weights")
@given(samples(weights=True, max_size=60))
def test_weighted_sklearn(impl, data):
    if sklearn_metrics is None:
        pytest.skip("scikit-learn is not installed")
    y, s, w = data
    assert close(impl.roc_auc_score(y, s, sample_weight=w),
                 sklearn_metrics.roc_auc_score(y, s, sample_weight=w))


@grade("unit weights must give the unweighted result, on a thousand samples too", "weights")
def test_unit_weights_many_samples(impl):
    rng = np.random.default_rng(3)
    y = np.tile([0, 1], 500)
    s = rng.integers(0, 50, size=1000) / 10  # ties included
    w = np.ones(1000)
    assert close(impl.roc_auc_score(y, s, sample_weight=w), impl.roc_auc_score(y, s))
    for weighted, plain in zip(impl.roc_curve(y, s, sample_weight=w), impl.roc_curve(y, s),
                               strict=True):
        assert np.allclose(weighted, plain)


@grade("the caller's sample_weight must not be modified", "weights")
def test_weights_untouched(impl):
    y, s = [1, 0, 1, 0, 1], [0.9, 0.1, 0.4, 0.4, 0.2]
    w = np.array([2.0, 1.0, 0.5, 3.0, 1.0])
    for function in (impl.roc_auc_score, impl.roc_curve):
        function(y, s, sample_weight=w)
        assert np.array_equal(w, [2.0, 1.0, 0.5, 3.0, 1.0])


Y, S = [0, 1, 1, 0], [0.1, 0.7, 0.4, 0.5]
BAD_INPUT = [
    ("2-D labels", [[0], [1], [1], [0]], S, None),
    ("2-D scores", Y, np.array(S).reshape(4, 1), None),  # 2-D only: the lengths agree
    ("a scalar score", Y, 0.5, None),
    ("different lengths", Y, S[:3], None),
    ("more scores than labels", Y, S + [0.3], None),
    ("empty input", [], [], None),
    ("a label other than 0/1", [0, 2, 1, 0], S, None),
    ("labels -1/1", [-1, 1, 1, -1], S, None),
    ("string labels", ["no", "yes", "yes", "no"], S, None),
    ("only one class", [1, 1, 1, 1], S, None),
    ("a NaN score", Y, [0.1, np.nan, 0.4, 0.5], None),
    ("an infinite score", Y, [0.1, np.inf, 0.4, 0.5], None),
    ("a negative weight", Y, S, [1.0, -0.5, 1.0, 1.0]),  # both classes keep a positive total
    ("a NaN weight", Y, S, [1.0, np.nan, 1.0, 1.0]),
    ("an infinite weight", Y, S, [1.0, np.inf, 1.0, 1.0]),
    ("weights of the wrong length", Y, S, [1.0, 1.0, 1.0]),
    ("more weights than samples", Y, S, [1.0] * 5),
    ("one weight for several samples", Y, S, [2.0]),  # not broadcast
    ("a scalar weight", Y, S, 2.0),  # not broadcast either
    ("a NaN score of zero weight", Y, [0.1, np.nan, 0.4, 0.5], [1.0, 0.0, 1.0, 1.0]),
    ("a class whose total weight is zero", Y, S, [1.0, 0.0, 0.0, 1.0]),
    ("negatives whose total weight is zero", Y, S, [0.0, 1.0, 1.0, 0.0]),
]


@pytest.mark.parametrize(
    "function, y, s, w",
    [pytest.param(fn, y, s, w, id=f"{fn}-{what}",
                  marks=grade(f"{fn}: {what} must raise ValueError", "errors"))
     for fn in ("roc_auc_score", "roc_curve") for what, y, s, w in BAD_INPUT])
def test_bad_input(impl, function, y, s, w):
    with pytest.raises(ValueError):
        getattr(impl, function)(y, s, sample_weight=w)


@grade("every ValueError for bad input must carry a message", "errors")
def test_error_messages(impl):
    for function in ("roc_auc_score", "roc_curve"):
        for what, y, s, w in BAD_INPUT:
            try:
                getattr(impl, function)(y, s, sample_weight=w)
            except Exception as exc:  # a missing or wrong error is test_bad_input's to report
                assert not isinstance(exc, ValueError) or str(exc), (
                    f"{function}: the ValueError for {what} says nothing")


@grade("a million samples must be scored in seconds (O(n log n), vectorized)", "scale",
       timeout=15)
def test_scale(impl):
    rng = np.random.default_rng(1)
    n = 1_000_000
    y, s = rng.integers(0, 2, n), rng.integers(0, 1000, n) / 10
    assert 0.45 < impl.roc_auc_score(y, s) < 0.55
    fpr, tpr, thr = impl.roc_curve(y, s)
    assert len(thr) == 1001
