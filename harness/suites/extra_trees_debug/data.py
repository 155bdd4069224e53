"""Seeded datasets and Hypothesis strategies the hidden suite runs on (NumPy only)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


def blobs(seed: int, n: int, d: int = 8, informative: int = 4, classes: int = 3,
          flip: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian classes around random centres in `informative` features, the rest noise."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 1.5, (classes, informative))
    y = rng.integers(0, classes, n)
    X = rng.normal(0.0, 1.0, (n, d))
    X[:, :informative] += centres[y]
    noisy = rng.random(n) < flip
    y[noisy] = rng.integers(0, classes, noisy.sum())
    return X, y


# On 0/1 features every threshold in [0, 1) splits alike, so a test run on them holds whatever
# range a learner's thresholds are drawn from: their own tests check that.

def blobs_bits(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """blobs() with every feature reduced to its sign: 0/1 features that carry the class."""
    X, y = blobs(seed, n)
    return (X > 0).astype(np.float64), y


def and_or_bits(seed: int, n: int, d: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Random 0/1 features; the label is (x0 and x1) or (x2 and x3), 10 % flipped: a concept
    that takes a tree several levels, the rest noise."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.5).astype(np.float64)
    y = ((X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3]) > 0).astype(int)
    flip = rng.random(n) < 0.1
    y[flip] = 1 - y[flip]
    return X, y


def sum_bits(seed: int, n: int, d: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """A regression target of four of d random 0/1 features, around 3 with noise 0.3."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.5).astype(np.float64)
    y = 3 + 2 * X[:, 0] - X[:, 1] + 1.5 * X[:, 2] * X[:, 3] + rng.normal(0, 0.3, n)
    return X, y


def noisy_stumps(seed: int, n: int = 400, noise: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Feature 0 carries the label (20% flipped); the others are heavy-tailed noise whose
    extreme values make it easy to chip one or two pure rows off a node."""
    rng = np.random.default_rng(seed)
    x0 = rng.uniform(-1, 1, n)
    y = (x0 > 0).astype(int)
    flip = rng.random(n) < 0.2
    y[flip] = 1 - y[flip]
    return np.column_stack([x0, rng.standard_cauchy((n, noise))]), y


def smooth(seed: int, n: int, d: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """A smooth regression target of the first two features, the rest noise."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, (n, d))
    return X, np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2


def accuracy(model, X, y) -> float:
    return float(np.mean(model.predict(X) == y))


def r2(y, pred) -> float:
    return 1.0 - float(np.sum((y - pred) ** 2) / np.sum((y - np.mean(y)) ** 2))


# Feature values: small integers (so duplicates and constant features are common) or floats.
values = st.one_of(st.integers(-3, 3).map(float),
                   st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False))
bits = st.sampled_from([0.0, 1.0])


@st.composite
def datasets(draw, max_rows: int = 30, max_features: int = 4, max_classes: int = 4,
             consistent: bool = False, binary: bool = False):
    """(X, y): y in 1..max_classes distinct labels; with `consistent`, equal rows share a label;
    with `binary`, every feature is 0 or 1."""
    n = draw(st.integers(1, max_rows))
    d = draw(st.integers(1, max_features))
    X = draw(hnp.arrays(np.float64, (n, d), elements=bits if binary else values))
    labels = st.integers(0, max_classes - 1)
    if consistent:
        by_row = {}
        y = np.array([by_row.setdefault(tuple(r), draw(labels)) for r in X.tolist()])
    else:
        y = np.array(draw(st.lists(labels, min_size=n, max_size=n)))
    return X, y


forest_settings = st.fixed_dictionaries({
    "n_estimators": st.integers(1, 5),
    "max_features": st.sampled_from(["sqrt", "log2", None, 1, 0.5, 1.0]),
    "random_state": st.integers(0, 2**16),
})


# ----- splits the spec fixes: binary features, where every threshold in [0, 1) splits alike -----

def gini(labels: np.ndarray) -> float:
    _, counts = np.unique(labels, return_counts=True)
    p = counts / len(labels)
    return 1.0 - float(np.sum(p * p))


def variance(values: np.ndarray) -> float:
    return float(np.var(values))


def best_binary_split(X: np.ndarray, y: np.ndarray, impurity) -> int:
    """The feature of 0/1 columns X whose split lowers `impurity` most, the children weighted by
    their share of the rows; the runner-up must be clearly worse, so no tie-break can matter."""
    n = len(y)
    gains = []
    for j in range(X.shape[1]):
        left, right = y[X[:, j] == 0], y[X[:, j] == 1]
        gains.append(impurity(y) - (len(left) * impurity(left) + len(right) * impurity(right)) / n)
    second, first = sorted(gains)[-2:]
    assert first - second > 0.02, f"gains {gains} are too close to pin one split"
    return int(np.argmax(gains))


def stump_sides(X: np.ndarray, y: np.ndarray, impurity) -> list[np.ndarray]:
    """For every row, the targets of the rows on its side of the best split."""
    j = best_binary_split(X, y, impurity)
    return [y[X[:, j] == X[i, j]] for i in range(len(y))]


def one_useful_feature(seed: int, d: int, varying: int, n: int = 40) -> tuple[np.ndarray,
                                                                               np.ndarray]:
    """d features, only the first `varying` of them non-constant, all 0/1: feature 0 is the
    label, the other varying ones noise that never splits the labels cleanly."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = np.zeros((n, d))
    X[:, 0] = y
    for j in range(1, varying):
        X[:, j] = np.where(rng.random(n) < 0.25, 1 - y, y)  # a quarter of the rows disagree
    return X, y


def two_clusters(n: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """n rows at x = 0 labelled 0 and n at x = 1 labelled 1: every tree splits them at a
    threshold uniform in [0, 1) into two pure leaves, so a point x in (0, 1) goes left in the
    trees whose threshold is at least x."""
    return np.repeat([[0.0], [1.0]], n, axis=0), np.repeat([0, 1], n)


BETWEEN_CLUSTERS = np.linspace(0.0, 1.0, 1001)[1:-1, None]


def hundredths_problem(shares: np.ndarray) -> str | None:
    """What, if anything, shows that `shares` (at the points BETWEEN_CLUSTERS, the share of the
    trees of two_clusters() that send each point left) do not come from 100 trees: with 100
    trees they are whole hundredths, and between them the points see every count from 0 to 100,
    so the counts have no common factor (10 trees give multiples of 10, 200 trees halves)."""
    counts = np.asarray(shares) * 100
    if not np.allclose(counts, np.round(counts), atol=1e-6):
        return f"shares {counts[:5] / 100}... are not whole hundredths"
    factor = np.gcd.reduce(np.round(counts).astype(int))
    return None if factor == 1 else f"the counts out of 100 are all multiples of {factor}"


# ----- eight cells: every combination of three binary features, with its own class counts -----

CELLS = np.array([[a, b, c] for a in (0.0, 1.0) for b in (0.0, 1.0) for c in (0.0, 1.0)])
# Found by search: whichever features a depth-2 tree splits on, its four leaves (two cells each)
# get four different class frequencies, so equal probabilities mean one leaf.
CELL_COUNTS = [[6, 4, 4], [2, 2, 1], [1, 1, 2], [5, 4, 6], [4, 4, 6], [5, 4, 4], [4, 6, 2],
               [5, 5, 1]]


def eight_cells() -> tuple[np.ndarray, np.ndarray]:
    """The rows of CELLS, cell i repeated with CELL_COUNTS[i] rows of classes 0, 1 and 2."""
    X = np.repeat(CELLS, [sum(c) for c in CELL_COUNTS], axis=0)
    y = np.concatenate([np.repeat([0, 1, 2], c) for c in CELL_COUNTS])
    return X, y


def soft_beats_hard_vote() -> tuple[np.ndarray, np.ndarray]:
    """One feature at 0 (10 rows of "A"), 0.7 (9 "A", 1 "B") and 1 (10 "B"). A stump splits at a
    threshold uniform in [0, 1): 7 out of 10 trees put x = 0.7 in the leaf {0.7, 1} (45% "A"),
    the rest in {0, 0.7} (95% "A"). The averaged probability of "A" at x = 0.7 is about 0.6,
    while most trees vote "B"."""
    X = np.repeat([0.0, 0.7, 0.7, 1.0], [10, 9, 1, 10])[:, None]
    return X, np.repeat(["A", "A", "B", "B"], [10, 9, 1, 10])
