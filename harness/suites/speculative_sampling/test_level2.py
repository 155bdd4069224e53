"""Level 2: batches with per-row parameters, bit for bit against one-row calls, edge cases and
bad input."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.marks import level

from .fakes import Recorded, Scripted
from .helpers import (
    HALF_QUARTERS,
    close,
    grid_rows,
    identical,
    integer,
    params,
    raises,
    softmax,
)

grade = level(2, "batching")


@st.composite
def batches(draw, min_rows: int = 1) -> tuple[np.ndarray, list[tuple]]:
    """(logits (B, V), one (temperature, top_k, top_p, min_p) per row), B <= 6, V <= 8."""
    vocab = draw(st.integers(1, 8))
    rows = draw(st.lists(grid_rows(vocab, vocab), min_size=min_rows, max_size=6))
    settings_ = [draw(params()) for _ in rows]
    return np.array(rows, dtype=np.float64).reshape(len(rows), vocab), settings_


def columns(rows: list[tuple], kind: str) -> list:
    """The per-row parameters as four lists, tuples or arrays (top_k None becomes 0 in a batch)."""
    t, k, p, m = (list(c) for c in zip(*rows, strict=True)) if rows else ([], [], [], [])
    k = [0 if v is None else v for v in k]
    if kind == "list":
        return [t, k, p, m]
    if kind == "tuple":
        return [tuple(t), tuple(k), tuple(p), tuple(m)]
    return [np.array(t, dtype=np.float64), np.array(k, dtype=np.int64),
            np.array(p, dtype=np.float64), np.array(m, dtype=np.float64)]


def alone(impl, logits: np.ndarray, cols: list) -> np.ndarray:
    """Each row through probs on its own."""
    return np.array([impl.probs(logits[i], *(c[i] for c in cols)) for i in range(len(logits))])


# --- batch_probs --------------------------------------------------------------------------------


@grade("each batch row must be bitwise equal to its own probs call")
@settings(max_examples=100)
@given(batch=batches(), kind=st.sampled_from(["list", "tuple", "array"]))
def test_rows_bitwise(impl, batch, kind):
    logits, rows = batch
    cols = columns(rows, kind)
    identical(impl.batch_probs(logits, *cols), alone(impl, logits, cols))


@grade("permuting, dropping or adding rows must change no bit of the others")
@settings(max_examples=100)
@given(batch=batches(min_rows=2), data=st.data())
def test_neighbours_change_nothing(impl, batch, data):
    logits, rows = batch
    full = impl.batch_probs(logits, *columns(rows, "array"))
    keep = data.draw(st.lists(st.integers(0, len(rows) - 1), min_size=1, max_size=len(rows),
                              unique=True))  # a subset, in any order
    part = impl.batch_probs(logits[keep], *columns([rows[i] for i in keep], "list"))
    identical(part, full[keep])


@grade("each row must use its own parameters")
def test_own_parameters(impl):
    logits = np.tile(np.array([0.0, 3.0, 1.0, 2.0]), (4, 1))
    got = impl.batch_probs(logits, [1.0, 0.5, 1.0, 0], [0, 2, 0, 0], [1.0, 1.0, 0.5, 1.0],
                           [0.0, 0.0, 0.0, 0.9])
    e = math.e
    close(got, [softmax(0, 3, 1, 2), [0, e**2 / (e**2 + 1), 0, 1 / (e**2 + 1)],
                [0, 1, 0, 0], [0, 1, 0, 0]])


@grade("a row far below its neighbours must keep its own maximum")
def test_rows_keep_their_maximum(impl):
    logits = np.array([[0.0, 1.0], [-1000.0, -1001.0], [5000.0, 4999.0]])
    close(impl.batch_probs(logits, [1, 1, 1], [0, 0, 0], [1, 1, 1], [0, 0, 0]),
          [softmax(0, 1), softmax(1, 0), softmax(1, 0)])


@grade("a row with a filter off must keep its bits when another row uses that filter")
def test_off_rows_keep_their_bits(impl):
    rng = np.random.default_rng(7)
    logits = rng.standard_normal((6, 50))
    t, k, p, m = [1.0] * 6, [0, 5, 0, 0, 0, 0], [1.0, 1.0, 0.9, 1.0, 1.0, 1.0], [0.0] * 6
    m[4] = 0.2
    got = impl.batch_probs(logits, t, k, p, m)
    for row in (0, 3, 5):  # no filter on, next to rows that use each of the three
        identical(got[row], impl.probs(logits[row], t[row], k[row], p[row], m[row]))


@grade("an empty batch must give empty results")
def test_empty_batch(impl):
    got = impl.batch_probs(np.zeros((0, 5)), [], [], [], [])
    assert isinstance(got, np.ndarray) and got.shape == (0, 5) and got.dtype == np.float64
    tokens = impl.batch_sample(np.zeros((0, 3)), (), (), (), (), [])
    assert isinstance(tokens, np.ndarray) and tokens.shape == (0,)
    assert tokens.dtype.kind in "iu"
    arrays = [np.zeros(0), np.zeros(0, dtype=np.int64), np.ones(0), np.zeros(0)]
    assert impl.batch_probs(np.zeros((0, 2)), *arrays).shape == (0, 2)


@grade("int8 and uint8 logits must not wrap around", "softmax")
def test_small_integers_do_not_wrap(impl):
    close(impl.probs(np.array([-100, 100], dtype=np.int8), 100), softmax(-2, 0))
    close(impl.probs(np.array([0, 255], dtype=np.uint8), 255), softmax(-1, 0))
    logits = np.array([[-100, 100], [127, -128]], dtype=np.int8)
    close(impl.batch_probs(logits, [100, 255], [0, 0], [1, 1], [0, 0]),
          [softmax(-2, 0), softmax(1, 0)])


@grade("float16 and float32 logits must be computed in float64", "softmax")
def test_low_precision_logits(impl):
    for dtype in (np.float16, np.float32):
        logits = np.array([0.1, 0.7, -0.4], dtype=dtype)
        close(impl.probs(logits), softmax(*logits.astype(np.float64).tolist()))
        close(impl.batch_probs(logits[None], [1], [0], [1], [0]),
              [softmax(*logits.astype(np.float64).tolist())])


@grade("a row that sums just under top_p must keep every token beside a one-hot row")
def test_top_p_edge_beside_one_hot(impl):
    edge = np.array([0.5, 1.25, 0.75, 0.75, -0.5, 1.5, -1.5, 0.25])  # as in Level 1's test
    logits = np.array([[0.0] + [-np.inf] * 7, edge])
    top = np.nextafter(1.0, 0.0)
    got = impl.batch_probs(logits, [1.0, 1.0], [0, 0], [top, top], [0.0, 0.0])
    close(got, [[1.0] + [0.0] * 7, softmax(*edge)])


# --- batch_sample -------------------------------------------------------------------------------


def twins(n: int, seed: int) -> tuple[list, list]:
    """Two lists of n generators, pairwise in the same state."""
    return ([np.random.default_rng(seed + i) for i in range(n)],
            [np.random.default_rng(seed + i) for i in range(n)])


@grade("each batch_sample row must return what sample returns with its own generator")
@settings(max_examples=60)
@given(batch=batches(), seed=st.integers(0, 2**16))
def test_batch_sample_tokens(impl, batch, seed):
    logits, rows = batch
    cols = columns(rows, "list")
    ours, theirs = twins(len(rows), seed)
    got = impl.batch_sample(logits, *cols, ours)
    want = [impl.sample(logits[i], impl.SamplingParams(*(c[i] for c in cols)), theirs[i])
            for i in range(len(rows))]
    assert [integer(x) for x in got] == [integer(x) for x in want]


@grade("batch_sample must leave each generator where sample leaves it")
@settings(max_examples=60)
@given(batch=batches(), seed=st.integers(0, 2**16))
def test_batch_sample_generators(impl, batch, seed):
    logits, rows = batch
    cols = columns(rows, "array")
    ours, theirs = twins(len(rows), seed)
    impl.batch_sample(logits, *cols, tuple(ours))
    for i in range(len(rows)):
        impl.sample(logits[i], impl.SamplingParams(*(c[i] for c in cols)), theirs[i])
    assert [g.bit_generator.state for g in ours] == [g.bit_generator.state for g in theirs]


@grade("batch_sample must draw once per sampled row from its own generator, never for greedy")
def test_batch_sample_draws(impl):
    logits = np.tile(HALF_QUARTERS, (4, 1))
    rngs = [Scripted(0.5), Scripted(), Scripted(0.75), Scripted()]
    got = impl.batch_sample(logits, [1.0, 0, 2.0, 0.0], [0, 0, 0, 3], [1, 1, 1, 0.5],
                            [0, 0, 0, 0.5], rngs)
    assert [integer(x) for x in got] == [1, 0, 2, 0]
    assert [r.drawn for r in rngs] == [1, 0, 1, 0]


@grade("batch_sample must return a 1-D integer array")
def test_batch_sample_returns_an_array(impl):
    got = impl.batch_sample(np.tile(HALF_QUARTERS, (3, 1)), [1, 1, 0], [0, 0, 0], [1, 1, 1],
                            [0, 0, 0], [Scripted(0.1), Scripted(0.9), Scripted()])
    assert isinstance(got, np.ndarray) and got.shape == (3,) and got.dtype.kind in "iu"
    assert got.tolist() == [0, 2, 0]


@grade("a batch of 300 rows must match 300 one-row calls")
def test_many_rows(impl):
    logits = np.random.default_rng(5).standard_normal((300, 4))
    cols = [[1.0] * 300, [2] * 300, [0.9] * 300, [0.1] * 300]
    identical(impl.batch_probs(logits, *cols), alone(impl, logits, cols))
    ours, theirs = twins(300, 11)
    got = impl.batch_sample(logits, *cols, ours)
    want = [impl.sample(logits[i], impl.SamplingParams(1.0, 2, 0.9, 0.1), theirs[i])
            for i in range(300)]
    assert [integer(x) for x in got] == [integer(x) for x in want]


@grade("batch_sample must handle a vocabulary of 40,000 tokens")
def test_long_vocabulary(impl):
    logits = np.zeros((2, 40_000))
    logits[0, 123] = logits[1, 39_999] = 50.0  # each row all but certain of one token
    got = impl.batch_sample(logits, [1.0, 0.0], [0, 0], [0.5, 1.0], [0.0, 0.0],
                            [Scripted(0.5), Scripted()])
    assert [integer(x) for x in got] == [123, 39_999]


# --- bad input ----------------------------------------------------------------------------------

LOGITS = np.array([0.0, 1.0, 2.0])
OK = (1.0, 0, 1.0, 0.0)


def every_call(impl, logits, row=OK):
    """The four public calls on one row of these logits and parameters, as thunks."""
    rows = logits[None] if isinstance(logits, np.ndarray) and logits.ndim == 1 else logits
    batch = [[v] for v in row]
    if row[1] is None:
        batch[1] = [0]
    return [lambda: impl.probs(logits, *row),
            lambda: impl.sample(logits, impl.SamplingParams(*row), Scripted(0.5)),
            lambda: impl.batch_probs(rows, *batch),
            lambda: impl.batch_sample(rows, *batch, [Scripted(0.5)])]


def all_raise(impl, logits=LOGITS, row=OK) -> None:
    for call in every_call(impl, logits, row):
        raises(call)


@grade("logits of the wrong number of dimensions must raise ValueError", "errors")
def test_bad_ndim(impl):
    for logits in (np.float64(1.0), np.array(2.0), np.zeros((1, 3)), np.zeros((1, 1, 3))):
        raises(impl.probs, logits)
        raises(impl.sample, logits, impl.SamplingParams(), Scripted(0.5))
    for logits in (np.zeros(3), np.zeros((1, 1, 3))):
        raises(impl.batch_probs, logits, [1], [0], [1], [0])
        raises(impl.batch_sample, logits, [1], [0], [1], [0], [Scripted(0.5)])


@grade("V = 0 must raise ValueError, even in an empty batch", "errors")
def test_empty_vocabulary(impl):
    raises(impl.probs, np.zeros(0))
    raises(impl.sample, np.zeros(0), impl.SamplingParams(), Scripted(0.5))
    for batch in (0, 2):
        cols = [[1.0] * batch, [0] * batch, [1.0] * batch, [0.0] * batch]
        raises(impl.batch_probs, np.zeros((batch, 0)), *cols)
        raises(impl.batch_sample, np.zeros((batch, 0)), *cols, [Scripted(0.5)] * batch)


@grade("logits of a dtype that is not integer or floating must raise ValueError", "errors")
@pytest.mark.parametrize("logits", [np.array([True, False]), np.array([1 + 0j, 2 + 0j]),
                                    np.array([1.0, 2.0], dtype=object), np.array(["1", "2"])],
                         ids=["bool", "complex", "object", "str"])
def test_bad_dtype(impl, logits):
    all_raise(impl, logits)


@grade("a NaN logit must raise ValueError", "errors")
def test_nan_logit(impl):
    all_raise(impl, np.array([0.0, np.nan, 1.0]))
    all_raise(impl, np.array([np.nan, -np.inf]), (0, 0, 1.0, 0.0))


@grade("a +inf logit must raise ValueError", "errors")
def test_inf_logit(impl):
    all_raise(impl, np.array([0.0, np.inf, 1.0]))
    all_raise(impl, np.array([np.inf, np.inf]), (0, 0, 1.0, 0.0))


@grade("a row without a finite logit must raise ValueError", "errors")
def test_no_finite_logit(impl):
    all_raise(impl, np.array([-np.inf, -np.inf]))
    all_raise(impl, np.array([-np.inf]), (0, 0, 1.0, 0.0))
    rows = np.array([[0.0, 1.0], [-np.inf, -np.inf]])
    raises(lambda: impl.batch_probs(rows, [1, 1], [0, 0], [1, 1], [0, 0]))


@grade("a temperature that is not a real must raise ValueError", "errors")
@pytest.mark.parametrize("t", [True, False, np.True_, "0.7", None, 1 + 0j, [1.0]],
                         ids=["True", "False", "np.True_", "str", "None", "complex", "list"])
def test_temperature_not_real(impl, t):
    all_raise(impl, row=(t, 0, 1.0, 0.0))


@grade("a negative temperature must raise ValueError", "errors")
@pytest.mark.parametrize("t", [-1.0, -1e-300, -2, np.float32(-0.5)])
def test_negative_temperature(impl, t):
    all_raise(impl, row=(t, 0, 1.0, 0.0))


@grade("a NaN or infinite temperature must raise ValueError", "errors")
@pytest.mark.parametrize("t", [math.nan, math.inf, -math.inf, np.float64("inf")])
def test_temperature_not_finite(impl, t):
    all_raise(impl, row=(t, 0, 1.0, 0.0))


@grade("a top_k that is not an integer must raise ValueError", "errors")
@pytest.mark.parametrize("k", [2.0, 2.5, True, np.bool_(True), "2", np.float64(1)])
def test_top_k_not_integer(impl, k):
    all_raise(impl, row=(1.0, k, 1.0, 0.0))


@grade("None in a batch's top_k must raise ValueError", "errors")
def test_top_k_none_in_batch(impl):
    raises(lambda: impl.batch_probs(np.zeros((2, 3)), [1, 1], [None, 0], [1, 1], [0, 0]))
    raises(lambda: impl.batch_sample(np.zeros((1, 3)), [1], [None], [1], [0], [Scripted(0.5)]))


@grade("a negative top_k must raise ValueError", "errors")
@pytest.mark.parametrize("k", [-1, -50, np.int8(-2)])
def test_negative_top_k(impl, k):
    all_raise(impl, row=(1.0, k, 1.0, 0.0))


@grade("a top_p outside (0, 1] must raise ValueError", "errors")
@pytest.mark.parametrize("p", [0, 0.0, -0.5, 1.5, 1.0000001, math.nan, math.inf, True])
def test_bad_top_p(impl, p):
    all_raise(impl, row=(1.0, 0, p, 0.0))


@grade("a min_p outside [0, 1] must raise ValueError", "errors")
@pytest.mark.parametrize("m", [-0.1, -1e-9, 1.5, 1.0000001, math.nan, -math.inf, False])
def test_bad_min_p(impl, m):
    all_raise(impl, row=(1.0, 0, 1.0, m))


@grade("NumPy scalars and ints must be accepted as parameters", "errors")
def test_numpy_scalars(impl):
    row = (np.float32(0.5), np.int32(2), np.float16(0.9), np.float64(0.1))
    want = impl.probs(HALF_QUARTERS, 0.5, 2, float(np.float16(0.9)), 0.1)
    close(impl.probs(HALF_QUARTERS, *row), want)
    close(impl.probs(HALF_QUARTERS, 2, np.uint8(3), 1, np.int64(0)),
          impl.probs(HALF_QUARTERS, 2.0, 3, 1.0, 0.0))
    assert integer(impl.sample(HALF_QUARTERS, impl.SamplingParams(*row), Scripted(0.7))) == 1


@grade("a parameter that is not a list, a tuple or a 1-D array must raise ValueError", "errors")
@pytest.mark.parametrize("bad", [1.0, np.float64(1.0), np.ones((3, 1)), np.ones((1, 3)),
                                 {1.0, 2.0, 3.0}, "abc", None],
                         ids=["float", "np.float64", "column", "row matrix", "set", "str",
                              "None"])
@pytest.mark.parametrize("which", range(4))
def test_parameter_kind(impl, bad, which):
    cols = [[1.0] * 3, [0] * 3, [1.0] * 3, [0.0] * 3]
    if which == 1 and isinstance(bad, np.ndarray):
        bad = bad.astype(np.int64)
    cols[which] = bad
    raises(lambda: impl.batch_probs(np.zeros((3, 2)), *cols))
    raises(lambda: impl.batch_sample(np.zeros((3, 2)), *cols, [Scripted(0.5)] * 3))


@grade("a parameter whose length is not B must raise ValueError", "errors")
@pytest.mark.parametrize("length", [0, 1, 2, 4])
@pytest.mark.parametrize("which", range(4))
def test_parameter_length(impl, length, which):
    cols = [[1.0] * 3, [0] * 3, [1.0] * 3, [0.0] * 3]
    cols[which] = cols[which][:1] * length
    raises(lambda: impl.batch_probs(np.zeros((3, 2)), *cols))
    cols[which] = np.array(cols[which], dtype=np.int64 if which == 1 else np.float64)
    raises(lambda: impl.batch_sample(np.zeros((3, 2)), *cols, [Scripted(0.5)] * 3))


@grade("a parameter array of the wrong dtype must raise ValueError", "errors")
@pytest.mark.parametrize("which, bad", [
    (1, np.array([2.0, 0.0])), (1, np.array([2.5, 1.0])), (1, np.array([True, False])),
    (0, np.array([True, True])), (2, np.array([True, True])), (3, np.array([False, False])),
    (0, np.array(["1", "1"])), (2, np.array([1 + 0j, 1 + 0j])),
    (3, np.array([0.0, 0.0], dtype=object)), (1, np.array([1, 0], dtype=object))])
def test_parameter_dtype(impl, which, bad):
    cols = [np.ones(2), np.zeros(2, dtype=np.int64), np.ones(2), np.zeros(2)]
    cols[which] = bad
    raises(lambda: impl.batch_probs(np.zeros((2, 3)), *cols))
    raises(lambda: impl.batch_sample(np.zeros((2, 3)), *cols, [Scripted(0.5)] * 2))


@grade("rngs that are not one per row must raise ValueError", "errors")
@pytest.mark.parametrize("count", [0, 1, 3])
def test_rngs_length(impl, count):
    rngs = [Scripted(0.5) for _ in range(count)]
    raises(lambda: impl.batch_sample(np.zeros((2, 3)), [1, 1], [0, 0], [1, 1], [0, 0], rngs))


@grade("batch_sample with too few generators must raise before any row draws", "errors")
def test_too_few_rngs_draw_nothing(impl):
    rngs = [Recorded(0), Recorded(1)]
    raises(lambda: impl.batch_sample(np.zeros((3, 2)), [1, 1, 1], [0, 0, 0], [1, 1, 1],
                                     [0, 0, 0], rngs))
    assert [r.drawn for r in rngs] == [0, 0]


@grade("temperature 0 must still validate the other parameters", "errors")
@pytest.mark.parametrize("row", [(0, -1, 1.0, 0.0), (0, 2.0, 1.0, 0.0), (0, 0, 0.0, 0.0),
                                 (0, 0, 1.5, 0.0), (0, 0, 1.0, 2.0), (0.0, 0, 1.0, math.nan)])
def test_greedy_validates(impl, row):
    all_raise(impl, row=row)


@grade("a call that raises must draw nothing", "errors")
def test_raising_draws_nothing(impl):
    rng = Recorded(0)
    for bad in [(1.0, -1, 1.0, 0.0), (-1.0, 0, 1.0, 0.0), (1.0, 0, 0.0, 0.0), (1.0, 0, 1.0, 3.0)]:
        raises(lambda bad=bad: impl.sample(LOGITS, impl.SamplingParams(*bad), rng))
    raises(lambda: impl.sample(np.array([0.0, np.nan]), impl.SamplingParams(), rng))
    assert rng.drawn == 0
    rngs = [Recorded(i) for i in range(3)]
    good = [[1, 1, 1], [0, 0, 0], [1, 1, 1], [0, 0, 0]]
    for which, bad in ((1, -1), (3, 1.5), (0, math.inf), (2, 0.0)):
        cols = [list(c) for c in good]
        cols[which][2] = bad  # the last row is the bad one
        raises(lambda cols=cols: impl.batch_sample(np.zeros((3, 4)), *cols, rngs))
    nan_row = np.zeros((3, 4))
    nan_row[2] = np.nan
    raises(lambda: impl.batch_sample(nan_row, *good, rngs))
    raises(lambda: impl.batch_sample(np.zeros((3, 4)), *good, rngs + [Recorded(3)]))
    assert [r.drawn for r in rngs] == [0, 0, 0]


@grade("batch calls must not modify their arguments")
def test_batch_arguments_untouched(impl):
    logits = np.array([[3.0, -np.inf, 1.0], [0.0, 0.5, 0.25]])
    cols = [np.array([0.7, 0.0]), np.array([2, 0]), np.array([0.9, 1.0]), np.array([0.1, 0.0])]
    before = [logits.copy()] + [c.copy() for c in cols]
    impl.batch_probs(logits, *cols)
    impl.batch_sample(logits, *cols, [Scripted(0.5), Scripted()])
    for got, want in zip([logits, *cols], before, strict=True):
        identical(got, want)
