"""Shared pieces of the hidden suite: comparisons, rows whose softmax is exact in binary, and the
strategies the properties draw from."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import strategies as st

LN2 = math.log(2)
HALF_QUARTERS = np.array([0.0, -LN2, -LN2])  # softmax: exactly [1/2, 1/4, 1/4]
EIGHTHS = np.array([0.0, -LN2, -2 * LN2, -2 * LN2])  # softmax: [1/2, 1/4, 1/8, 1/8]


def close(got, want) -> None:
    """A float64 array of the right shape within the prompt's tolerance: 1e-9 absolute, 1e-9
    relative above 1e-300, and exactly 0.0 where the answer is 0."""
    assert isinstance(got, np.ndarray) and got.dtype == np.float64, f"got {type(got)} {got!r}"
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    big = want > 1e-300
    np.testing.assert_allclose(got[big], want[big], rtol=1e-9, atol=0)
    assert (got[want == 0] == 0).all(), f"{got} must be exactly 0.0 where {want} is"


def identical(a: np.ndarray, b: np.ndarray) -> None:
    """Bit for bit."""
    assert isinstance(a, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, (a, b)
    assert a.tobytes() == b.tobytes(), f"{a!r} and {b!r} differ in their bits"


def raises(call, *args) -> None:
    with pytest.raises(ValueError):
        call(*args)


def softmax(*x: float) -> list[float]:
    """The plain softmax of these logits, in Python floats."""
    e = [math.exp(v - max(x)) for v in x]
    return [v / math.fsum(e) for v in e]


def integer(x) -> int:
    """A token id the prompt allows: a Python or NumPy integer, never a bool."""
    assert isinstance(x, int | np.integer) and not isinstance(x, bool | np.bool_), repr(x)
    return int(x)


# Logits on a grid a quarter apart (and now and then -inf), temperatures that keep s above -64:
# unequal logits stay far apart, nothing underflows, and the oracle's zeros are the filters' zeros.
GRID = st.integers(-17, 16).map(lambda n: -math.inf if n == -17 else n / 4)


def grid_rows(min_size: int = 1, max_size: int = 8) -> st.SearchStrategy[list[float]]:
    return st.lists(GRID, min_size=min_size, max_size=max_size).filter(
        lambda x: max(x) > -math.inf)


grid_logits = grid_rows()
temperatures = st.sampled_from([0.25, 0.5, 1.0, 2.0, 3])
top_ks = st.sampled_from([0, None, 1, 2, 3, 5, 9])
top_ps = st.sampled_from([1.0, 0.95, 0.8, 0.6, 0.35, 0.1])
min_ps = st.sampled_from([0.0, 0.02, 0.1, 0.3, 0.7, 1.0])


@st.composite
def params(draw, greedy: bool = True) -> tuple:
    """(temperature, top_k, top_p, min_p) for one row, greedy one time in six when allowed."""
    temperature = 0 if greedy and draw(st.integers(0, 5)) == 0 else draw(temperatures)
    return temperature, draw(top_ks), draw(top_ps), draw(min_ps)
