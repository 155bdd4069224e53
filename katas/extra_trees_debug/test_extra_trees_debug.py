"""Visible examples. `pytest katas/extra_trees_debug` also runs the hidden suite against your file.

These are a starting point for debugging: each failure here shows its full traceback.
"""

import numpy as np
import pytest


def test_a_separable_toy_set_is_learned(impl):
    X, y = [[0.0], [1.0], [2.0], [3.0], [4.0]], [0, 0, 1, 1, 1]
    model = impl.ExtraTreesClassifier(n_estimators=10, random_state=0).fit(X, y)
    assert list(model.predict(X)) == y


def test_probabilities_have_one_column_per_class_and_sum_to_one(impl):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), rng.integers(0, 3, 60)
    proba = impl.ExtraTreesClassifier(n_estimators=10, random_state=0).fit(X, y) \
        .predict_proba(X[:7])
    assert proba.shape == (7, 3)
    assert np.allclose(proba.sum(axis=1), 1.0)


def test_string_labels_come_back_as_strings(impl):
    X, y = [[0.0, 1.0], [1.0, 0.0], [0.1, 0.9], [0.9, 0.2]], ["cat", "dog", "cat", "dog"]
    model = impl.ExtraTreesClassifier(n_estimators=5, random_state=0).fit(X, y)
    assert list(model.classes_) == ["cat", "dog"]
    assert list(model.predict(X)) == y


def test_regressor_predicts_one_float_per_row(impl):
    X = np.linspace(0, 3, 40).reshape(-1, 1)
    model = impl.ExtraTreesRegressor(n_estimators=5, random_state=0).fit(X, np.sin(X[:, 0]))
    assert model.predict(X[:4]).shape == (4,)


def test_min_samples_split_below_two_is_rejected_in_fit(impl):
    model = impl.ExtraTreesClassifier(min_samples_split=1)  # accepted here, checked in fit
    with pytest.raises(ValueError):
        model.fit([[0.0], [1.0]], [0, 1])
