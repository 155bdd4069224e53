"""Level 2: hyper-parameters, awkward inputs and bad input."""

import itertools

import numpy as np
import pytest

from harness.marks import level

from .data import CELLS, accuracy, blobs, eight_cells, one_useful_feature

grade = level(2)


def four_rows_proba(impl, min_samples_split: int) -> np.ndarray:
    X, y = [[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1]
    return impl.ExtraTreesClassifier(n_estimators=5, min_samples_split=min_samples_split,
                                     random_state=0).fit(X, y).predict_proba(X)


@grade("a node holding exactly min_samples_split rows must be split", hint="stopping")
def test_min_samples_split_boundary(impl):
    split = four_rows_proba(impl, 4)
    assert not np.allclose(split[0], split[3])  # 4 rows: the root splits


@grade("a node holding fewer than min_samples_split rows must be a leaf", hint="stopping")
def test_min_samples_split_leaf(impl):
    assert np.allclose(four_rows_proba(impl, 5), 0.5)  # fewer than 5 rows: the root is a leaf


def leaves_of_single_trees(impl, depth: int) -> list[int]:
    """Distinct leaf values of six single trees of max_depth `depth`, over their training rows;
    the labels are random, so nodes stay impure down to the limit."""
    rng = np.random.default_rng(depth)
    X, y = rng.normal(size=(300, 3)), rng.integers(0, 6, 300)
    return [len(np.unique(impl.ExtraTreesClassifier(
        n_estimators=1, max_depth=depth, max_features=None, random_state=seed).fit(X, y)
        .predict_proba(X).round(12), axis=0)) for seed in range(6)]


@grade("max_depth must bound every tree's depth (at most 2^max_depth leaves)", hint="stopping")
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_max_depth(impl, depth):
    leaves = leaves_of_single_trees(impl, depth)
    assert max(leaves) <= 2**depth, leaves


@grade("trees must grow down to max_depth (more than 2^(max_depth - 1) leaves)", hint="stopping")
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_max_depth_reached(impl, depth):
    leaves = leaves_of_single_trees(impl, depth)
    assert max(leaves) > 2 ** (depth - 1), leaves


@grade("a label column of shape (n, 1) must train the same forest as a 1-D label array",
       hint="shapes")
def test_label_column(impl):
    X, y = blobs(3, 200, classes=3)
    flat = impl.ExtraTreesClassifier(n_estimators=5, random_state=0).fit(X, y)
    column = impl.ExtraTreesClassifier(n_estimators=5, random_state=0).fit(X, y.reshape(-1, 1))
    assert list(column.classes_) == list(flat.classes_)
    assert np.array_equal(column.predict_proba(X), flat.predict_proba(X))
    assert np.array_equal(column.predict(X), flat.predict(X))


@grade("lists must train the same forest as NumPy arrays", hint="inputs")
def test_lists(impl):
    X, y = blobs(4, 120, d=3, informative=2, classes=2)
    arrays = impl.ExtraTreesClassifier(n_estimators=5, random_state=1).fit(X, y)
    lists = impl.ExtraTreesClassifier(n_estimators=5, random_state=1).fit(X.tolist(), y.tolist())
    assert np.array_equal(lists.predict_proba(X.tolist()), arrays.predict_proba(X))


@grade("the caller's X and y must not be modified", hint="inputs")
def test_inputs_untouched(impl):
    X, y = blobs(5, 150, d=4, informative=2, classes=3)
    X_f = np.asfortranarray(X)
    copies = X.copy(), y.copy()
    model = impl.ExtraTreesClassifier(n_estimators=5, random_state=0).fit(X_f, y)
    model.predict(X_f)
    model.predict_proba(X)
    assert np.array_equal(X_f, copies[0]) and np.array_equal(X, copies[0])
    assert np.array_equal(y, copies[1])


@grade("constant features must not stop a tree from splitting on the others", hint="features")
def test_constant_features(impl):
    # 0/1 features, split alike by any threshold in [0, 1): only the constant ones can fail it.
    useful = (np.random.default_rng(6).random((150, 2)) < 0.5).astype(np.float64)
    y = np.maximum(useful[:, 0], useful[:, 1]).astype(int)
    X = np.hstack([np.full((150, 6), 7.0), useful, np.zeros((150, 4))])
    model = impl.ExtraTreesClassifier(n_estimators=5, max_features=1, random_state=0).fit(X, y)
    assert np.array_equal(model.predict(X), y)


@grade("a node whose features are all constant must be a leaf with the class frequencies",
       hint="features")
def test_all_features_constant(impl):
    X, y = np.ones((6, 3)), ["b", "a", "a", "b", "a", "a"]
    model = impl.ExtraTreesClassifier(n_estimators=3, random_state=0).fit(X, y)
    assert np.allclose(model.predict_proba([[1, 1, 1], [5, -5, 0]]), [[2 / 3, 1 / 3]] * 2)


@grade("a node whose features are all constant must predict its most frequent label",
       hint="features")
def test_all_features_constant_predict(impl):
    # Labels 0 and 1, which are also their columns: the test reads the leaf, not the labels.
    X, y = np.ones((6, 3)), [1, 0, 0, 1, 0, 0]
    model = impl.ExtraTreesClassifier(n_estimators=3, random_state=0).fit(X, y)
    assert list(model.predict([[1, 1, 1]])) == [0]


LOWS = [1.0, 1e16, -3.5, 0.0]


def adjacent_floats(impl, low: float):
    """A forest on the values low (class 0) and high (class 1), one float step apart, and high.
    Every threshold in [low, high) is low itself, so the rows at low are ties that go left."""
    high = np.nextafter(low, np.inf)
    X, y = np.array([[low], [high], [low], [high], [high]]), np.array([0, 1, 0, 1, 1])
    return impl.ExtraTreesClassifier(n_estimators=5, random_state=0).fit(X, y), high


@grade("values one float step apart must still be split", hint="thresholds")
@pytest.mark.parametrize("low", LOWS)
def test_adjacent_floats(impl, low):
    model, high = adjacent_floats(impl, low)
    below = np.nextafter(low, -np.inf)  # left of every threshold, tie or not
    assert np.allclose(model.predict_proba([[below], [high]]), [[1, 0], [0, 1]])


@grade("a value equal to the threshold must go left", hint="thresholds")
@pytest.mark.parametrize("low", LOWS)
def test_threshold_ties_go_left(impl, low):
    model, _ = adjacent_floats(impl, low)
    assert np.allclose(model.predict_proba([[low]]), [[1, 0]])


def stump_accuracy(impl, max_features) -> float:
    """Mean accuracy of single stumps over 24 seeds, on one useful feature among 16."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, 16))
    X[:, 0] = rng.uniform(-1, 1, 300)
    y = (X[:, 0] > 0).astype(int)
    grid = np.zeros((400, 16))
    grid[:, 0] = np.linspace(-1, 1, 400)
    return float(np.mean([
        accuracy(impl.ExtraTreesClassifier(n_estimators=1, max_depth=1, max_features=max_features,
                                           random_state=seed).fit(X, y), grid, grid[:, 0] > 0)
        for seed in range(24)]))


# A stump that sees feature 0 scores 0.75 on average; one that does not, 0.5.
@grade("max_features=1 must make a node compare one feature", hint="features")
def test_max_features_one(impl):
    one = stump_accuracy(impl, 1)
    assert one <= 0.6, one


@grade("max_features of None, 1.0 or n_features must make a node compare all features",
       hint="features")
@pytest.mark.parametrize("max_features", [None, 1.0, 16])
def test_max_features_all(impl, max_features):
    every = stump_accuracy(impl, max_features)
    assert every >= 0.65, every


STUMPS = 30


def stumps_finding_feature_0(impl, max_features, d: int, varying: int) -> int:
    """How many of STUMPS stumps split on the one useful feature among `varying` non-constant
    ones (of d): every stump whose candidates include it does, and no other is pure."""
    X, y = one_useful_feature(0, d, varying)
    found = 0
    for seed in range(STUMPS):
        proba = impl.ExtraTreesClassifier(n_estimators=1, max_depth=1, max_features=max_features,
                                          random_state=seed).fit(X, y).predict_proba(X)
        found += bool(np.allclose(proba.max(axis=1), 1.0))
    return found


SQRT, LOG2 = "".join(["sq", "rt"]), "".join(["lo", "g2"])  # new str objects, not the literals
CANDIDATES = [  # (max_features, d, varying, candidates a node draws)
    (SQRT, 100, 10, 10), (LOG2, 8, 3, 3), (SQRT, 3, 2, 1), (LOG2, 3, 2, 1), (0.6, 3, 2, 1),
    (0.5, 10, 5, 5), (LOG2, 1, 1, 1),  # log2(1) = 0: at least 1
]


@grade("max_features must set how many features a node draws: sqrt and log2 of n_features and "
       "fractions of it rounded down, at least 1", hint="features")
@pytest.mark.parametrize("max_features, d, varying, k", CANDIDATES,
                         ids=[f"{m}-of-{d}" for m, d, _, _ in CANDIDATES])
def test_max_features_candidates(impl, max_features, d, varying, k):
    found = stumps_finding_feature_0(impl, max_features, d, varying)
    if k >= varying:  # every non-constant feature is a candidate: every stump finds it
        assert found == STUMPS, f"max_features={max_features!r} with {d} features: {found} of " \
            f"{STUMPS} stumps split on the useful one; expected all ({k} candidates of {varying})"
    else:  # one candidate of two: about half the stumps miss it (none missing: 1 in 1e9)
        assert found < STUMPS, f"max_features={max_features!r} with {d} features: all {STUMPS} " \
            f"stumps split on the useful one; expected some to miss it ({k} candidate of {varying})"


@grade("a node must be split even when no split lowers its impurity (XOR), a constant feature "
       "beside it", hint="stopping")
def test_zero_gain_nodes_split(impl):
    a, b = np.array([0, 0, 1, 1] * 2, float), np.array([0, 1, 0, 1] * 2, float)
    X, y = np.column_stack([a, np.full(8, 5.0), b]), (a != b).astype(int)
    for seed in range(30):  # one tree each: a forest's vote would hide a tree left unsplit
        model = impl.ExtraTreesClassifier(n_estimators=1, max_features=None,
                                          random_state=seed).fit(X, y)
        assert np.array_equal(model.predict(X), y), f"random_state={seed}"


@grade("a forest fitted on 300 features must predict on 300 features", hint="errors")
def test_many_features(impl):
    rng = np.random.default_rng(8)
    X, y = rng.normal(size=(30, 300)), np.arange(30) % 2
    model = impl.ExtraTreesClassifier(n_estimators=2, random_state=0).fit(X, y)
    assert model.predict_proba(X).shape == (30, 2)


@grade("every accepted form of max_features must train a working forest", hint="features")
@pytest.mark.parametrize("max_features", ["sqrt", "log2", None, 1, 3, 0.01, 0.5, 1.0])
def test_max_features_forms(impl, max_features):
    X, y = blobs(8, 200, d=5, informative=3, classes=2)
    model = impl.ExtraTreesClassifier(n_estimators=5, max_features=max_features,
                                      random_state=0).fit(X, y)
    proba = model.predict_proba(X)
    assert proba.shape == (200, 2) and np.allclose(proba.sum(axis=1), 1.0)
    assert set(model.predict(X).tolist()) <= {0, 1}


X4, Y4 = np.arange(8.0).reshape(4, 2), np.array([0, 1, 0, 1])
FIT_ERRORS = [
    ("X 1-D", np.arange(4.0), Y4, {}),
    ("X 3-D", np.zeros((4, 2, 1)), Y4, {}),
    ("y with two columns", X4, np.zeros((4, 2)), {}),
    ("y with no column", X4, np.zeros((4, 0)), {}),
    ("y a single number", X4, np.float64(1.0), {}),  # 0-d: it has no length to mismatch
    ("X and y of different lengths", X4, Y4[:3], {}),
    ("y longer than X", X4, np.append(Y4, 0), {}),
    ("no samples", np.empty((0, 2)), np.array([]), {}),
    ("no features", np.empty((4, 0)), Y4, {}),
    ("NaN in X", np.where(X4 == 3, np.nan, X4), Y4, {}),
    ("infinity in X", np.where(X4 == 3, -np.inf, X4), Y4, {}),
    ("n_estimators=0", X4, Y4, {"n_estimators": 0}),
    ("min_samples_split=1", X4, Y4, {"min_samples_split": 1}),
    ("max_depth=0", X4, Y4, {"max_depth": 0}),
    ("max_features='auto'", X4, Y4, {"max_features": "auto"}),
    ("max_features=0", X4, Y4, {"max_features": 0}),
    ("max_features=0.0", X4, Y4, {"max_features": 0.0}),
    ("max_features=-0.5", X4, Y4, {"max_features": -0.5}),
    ("max_features=1.5", X4, Y4, {"max_features": 1.5}),
    ("max_features=3 with 2 features", X4, Y4, {"max_features": 3}),
]


@pytest.mark.parametrize(
    "X, y, params",
    [pytest.param(*case, id=what, marks=grade(f"fit must raise ValueError for {what}", "errors"))
     for what, *case in FIT_ERRORS])
def test_fit_errors(impl, X, y, params):
    model = impl.ExtraTreesClassifier(**{"n_estimators": 2, **params})  # checked in fit
    with pytest.raises(ValueError):
        model.fit(X, y)


@grade("a ValueError must say what was wrong", hint="errors")
@pytest.mark.parametrize("X, y, params", [c[1:] for c in FIT_ERRORS],
                         ids=[c[0] for c in FIT_ERRORS])
def test_error_messages(impl, X, y, params):
    try:
        impl.ExtraTreesClassifier(**{"n_estimators": 2, **params}).fit(X, y)
    except ValueError as exc:
        assert str(exc).strip(), "the ValueError has no message"


PREDICT_ERRORS = [
    ("NaN in X", [[0.0, np.nan]]),
    ("infinity in X", [[np.inf, 0.0]]),
    ("three features instead of two", [[0.0, 1.0, 2.0]]),
    ("one feature instead of two", [[0.0]]),
    ("X 1-D", [0.0, 1.0]),
    ("no samples", np.empty((0, 2))),
]


@pytest.mark.parametrize("method", ["predict", "predict_proba"])
@pytest.mark.parametrize(
    "X", [pytest.param(X, id=what, marks=grade(
        f"predict and predict_proba must raise ValueError for {what}", "errors"))
        for what, X in PREDICT_ERRORS])
def test_predict_errors(impl, X, method):
    model = impl.ExtraTreesClassifier(n_estimators=2, random_state=0).fit(X4, Y4)
    with pytest.raises(ValueError):
        getattr(model, method)(X)


@grade("predicting before fit must raise ValueError", hint="errors")
@pytest.mark.parametrize("method", ["predict", "predict_proba"])
def test_predict_before_fit(impl, method):
    with pytest.raises(ValueError):
        getattr(impl.ExtraTreesClassifier(), method)(X4)


def unsplit_features(impl, seed: int) -> set[int]:
    """The features one depth-2 tree, drawing one candidate per node, leaves unsplit: each of its
    leaves holds two cells of CELLS, which differ in one feature."""
    X, y = eight_cells()
    proba = impl.ExtraTreesClassifier(n_estimators=1, max_depth=2, max_features=1,
                                      random_state=seed).fit(X, y).predict_proba(CELLS).round(12)
    return {int(f) for i, j in itertools.combinations(range(len(CELLS)), 2)
            if np.array_equal(proba[i], proba[j]) for f in np.flatnonzero(CELLS[i] != CELLS[j])}


@grade("nodes of one level must draw their candidate features independently", hint="features")
def test_candidates_drawn_per_node(impl):
    # The two children of the root each draw one of the two features the root did not use: about
    # half the trees split them on different features, which leaves two features unsplit.
    unsplit = [unsplit_features(impl, seed) for seed in range(30)]
    assert any(len(features) == 2 for features in unsplit), unsplit
