"""Shared pieces of the hidden suite: comparisons, masks, random heads and garbage to hide."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

GARBAGE = (np.nan, np.inf, -np.inf, 1e300)


def close(got, want) -> None:
    """float64, the same shape, and within the prompt's tolerance."""
    assert isinstance(got, np.ndarray) and got.dtype == np.float64, f"got {type(got)} {got!r}"
    assert got.shape == np.shape(want), f"shape {got.shape}, expected {np.shape(want)}"
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, equal_nan=False)


def identical(a: np.ndarray, b: np.ndarray,
              what: str = "the result changed with what sits in masked slots") -> None:
    """Bit for bit, NaN included; `what` says what differs, in the test's own terms."""
    assert a.shape == b.shape and a.dtype == b.dtype, what
    assert a.tobytes() == b.tobytes(), what


def hide(x: np.ndarray, where: np.ndarray, value: float) -> np.ndarray:
    """A copy of x holding `value` wherever `where` (broadcast) is True."""
    return np.where(where, value, x)


def mask_of(lengths: list[int], width: int, side: str) -> np.ndarray:
    cols = np.arange(width)
    lens = np.asarray(lengths)[:, None]
    return cols >= width - lens if side == "left" else cols < lens


@st.composite
def masks(draw, batch: tuple[int, int] = (1, 3), width: tuple[int, int] = (0, 6)) -> np.ndarray:
    """A left-padded, right-padded or scattered [B, T] mask, B and T within the bounds given."""
    b, t = draw(st.integers(*batch)), draw(st.integers(*width))
    kind = draw(st.sampled_from(["left", "right", "scattered"]))
    if kind == "scattered":
        bits = draw(st.lists(st.booleans(), min_size=b * t, max_size=b * t))
        return np.array(bits, dtype=bool).reshape(b, t)
    return mask_of(draw(st.lists(st.integers(0, t), min_size=b, max_size=b)), t, kind)


def heads(seed: int, *shape: int, dv: int | None = None) -> tuple[np.ndarray, ...]:
    """q, k of `shape` and v of `shape` with its last size dv, standard normal."""
    rng = np.random.default_rng(seed)
    dv = shape[-1] if dv is None else dv
    return (rng.standard_normal(shape), rng.standard_normal(shape),
            rng.standard_normal((*shape[:-1], dv)))


scales = st.one_of(st.none(), st.floats(0.1, 2.0), st.integers(1, 3))
