"""Level 1: pad_batch, position_ids and masked_softmax, their edge sizes and bad input."""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from harness.marks import level

from . import oracle
from .helpers import GARBAGE, close, hide, identical

grade = level(1, "padding")


# --- pad_batch ------------------------------------------------------------------------------


@grade("left padding must put each sequence at the end of its row, the width a multiple")
def test_left_padding_golden(impl):
    # A side built at run time is equal to "left" without being the same object.
    for side in ("left", "".join(["le", "ft"])):
        ids, mask = impl.pad_batch([[5, 6, 7], [8], []], side=side, multiple_of=4)
        assert ids.tolist() == [[0, 5, 6, 7], [0, 0, 0, 8], [0, 0, 0, 0]]
        assert mask.tolist() == [[False, True, True, True], [False, False, False, True],
                                 [False, False, False, False]]


@grade("right padding must put each sequence at the start of its row")
def test_right_padding_golden(impl):
    ids, mask = impl.pad_batch([[5, 6, 7], [8], []])
    assert ids.tolist() == [[5, 6, 7], [8, 0, 0], [0, 0, 0]]
    assert mask.tolist() == [[True, True, True], [True, False, False], [False, False, False]]


@grade("the width must be the smallest multiple of multiple_of at least the longest length")
@pytest.mark.parametrize("lengths, multiple, width", [
    ([3, 1], 1, 3), ([3, 1], 3, 3), ([3, 1], 4, 4), ([5], 4, 8), ([8, 2], 4, 8), ([1], 7, 7)])
def test_width(impl, lengths, multiple, width):
    for side in ("left", "right"):
        ids, mask = impl.pad_batch([[1] * n for n in lengths], side=side, multiple_of=multiple)
        assert ids.shape == mask.shape == (len(lengths), width)


@grade("no sequences, or only empty ones, must give width 0", "shapes")
@pytest.mark.parametrize("seqs, shape", [([], (0, 0)), ([[], ()], (2, 0)), ((), (0, 0))])
def test_width_zero(impl, seqs, shape):
    for multiple in (1, 4):
        ids, mask = impl.pad_batch(seqs, side="left", multiple_of=multiple)
        assert ids.shape == mask.shape == shape


@grade("every slot outside the sequences must hold pad_id")
def test_pads_hold_pad_id(impl):
    ids, _ = impl.pad_batch([[1, 2], [3]], side="left", pad_id=-1, multiple_of=3)
    assert ids.tolist() == [[-1, 1, 2], [-1, -1, 3]]
    ids, _ = impl.pad_batch([[1, 2], [3]], pad_id=99)
    assert ids.tolist() == [[1, 2], [3, 99]]


@grade("a real token equal to pad_id must stay real in the mask")
def test_token_equal_to_pad_id_is_real(impl):
    ids, mask = impl.pad_batch([[0, 7, 0], [0]], side="left")
    assert ids.tolist() == [[0, 7, 0], [0, 0, 0]]
    assert mask.tolist() == [[True, True, True], [False, False, True]]


@grade("ids must be int64 and the mask bool, whatever types the ints have")
def test_dtypes(impl):
    seqs = [np.array([1, 2], dtype=np.int32), (np.int16(3),)]
    for pad_id in (np.int32(-1), np.uint8(7), 0):
        ids, mask = impl.pad_batch(seqs, pad_id=pad_id, multiple_of=np.int8(2))
        assert ids.dtype == np.int64 and mask.dtype == np.bool_
        assert ids.tolist() == [[1, 2], [3, int(pad_id)]]


@grade("sequences may be lists, tuples or 1-D integer arrays of Python or NumPy ints")
def test_sequence_kinds(impl):
    seqs = ([1, np.int64(2)], (np.int32(3), 4), np.array([5], dtype=np.uint16),
            np.array([], dtype=np.int64), ())
    ids, mask = impl.pad_batch(seqs, side="right", pad_id=np.int64(0), multiple_of=np.int64(1))
    assert ids.tolist() == [[1, 2], [3, 4], [5, 0], [0, 0], [0, 0]]
    assert mask.sum(axis=1).tolist() == [2, 2, 1, 0, 0]


sequences = st.lists(st.lists(st.integers(-3, 3), max_size=6), max_size=4)


@grade("pad_batch must lay out any batch as the prompt says")
@settings(max_examples=150)
@given(seqs=sequences, side=st.sampled_from(["left", "right"]), pad_id=st.integers(-3, 3),
       multiple=st.integers(1, 4), kind=st.sampled_from([list, tuple, np.array]))
def test_layout_property(impl, seqs, side, pad_id, multiple, kind):
    given_seqs = [kind(s) if kind is not np.array else np.array(s, dtype=np.int64) for s in seqs]
    ids, mask = impl.pad_batch(given_seqs, side=side, pad_id=pad_id, multiple_of=multiple)
    want_ids, want_mask = oracle.layout(seqs, side, pad_id, multiple)
    assert ids.shape == mask.shape == (len(seqs), len(want_ids[0]) if seqs else 0)
    assert ids.tolist() == want_ids and mask.tolist() == want_mask


# --- position_ids -----------------------------------------------------------------------------

MASKS = [
    [[False, False, True, True, True], [True, True, True, True, True]],    # left padded
    [[True, True, True, False, False], [True, False, False, False, False]],  # right padded
    [[False, True, False, True, True], [True, False, True, False, False]],  # scattered
]


@grade("positions must count the real slots before each real slot, on any mask", "positions")
def test_positions_of_real_slots(impl):
    want = [[[0, 1, 2], [0, 1, 2, 3, 4]], [[0, 1, 2], [0]], [[0, 1, 2], [0, 1]]]
    for rows, expected in zip(MASKS, want, strict=True):
        mask = np.array(rows)
        pos = impl.position_ids(mask)
        assert pos.dtype == np.int64 and pos.shape == mask.shape
        assert [pos[b][mask[b]].tolist() for b in range(2)] == expected


@grade("pads must get position 0", "positions")
def test_pads_get_zero(impl):
    for rows in MASKS:
        mask = np.array(rows)
        assert impl.position_ids(mask)[~mask].tolist() == [0] * int((~mask).sum())


@grade("position_ids must match a plain count for any 2-D mask", "positions")
@settings(max_examples=100)
@given(mask=hnp.arrays(np.bool_, hnp.array_shapes(min_dims=2, max_dims=2, min_side=0,
                                                   max_side=7)))
def test_positions_property(impl, mask):
    pos = impl.position_ids(mask)
    assert pos.dtype == np.int64 and pos.tolist() == oracle.positions(mask)


# --- masked_softmax ---------------------------------------------------------------------------


@grade("softmax of [1000, 1001, 1002] must not overflow, beside a masked NaN", "softmax")
def test_large_logits(impl):
    logits = np.array([1000.0, 1001.0, 1002.0, np.nan])
    got = impl.masked_softmax(logits, np.array([True, True, True, False]))
    total = 1 + math.exp(-1) + math.exp(-2)
    close(got, [math.exp(-2) / total, math.exp(-1) / total, 1 / total, 0.0])


@grade("a row with nothing kept must be all 0.0, not NaN or uniform", "softmax")
def test_empty_row_is_zero(impl):
    logits = np.array([[1.0, 2.0, 3.0], [np.nan, np.inf, -np.inf], [4.0, 5.0, 6.0]])
    mask = np.array([[False, False, False], [False, False, False], [True, False, True]])
    got = impl.masked_softmax(logits, mask)
    assert got[:2].tolist() == [[0.0] * 3, [0.0] * 3]


@grade("masked entries must be exactly 0.0", "softmax")
def test_masked_entries_are_zero(impl):
    logits = np.array([[-1e4, 0.0, 1e4], [-1e4, -1e4, 5.0], [3.0, -1e4 + 1, 2.0]])
    mask = np.array([[True, False, False], [True, False, False], [False, True, False]])
    got = impl.masked_softmax(logits, mask)
    assert got[~mask].tolist() == [0.0] * 6


@grade("a kept -inf among finite logits must get exactly 0.0", "softmax")
def test_kept_minus_inf(impl):
    got = impl.masked_softmax(np.array([-np.inf, 0.0, 0.0]), np.array([True, True, True]))
    assert got[0] == 0.0
    close(got, [0.0, 0.5, 0.5])


@grade("rows must run along the axis argument", "softmax")
def test_axis(impl):
    logits = np.log(np.arange(1.0, 25.0)).reshape(2, 3, 4)
    mask = np.ones((2, 3, 4), dtype=bool)
    for axis in (0, 1, 2, -1, -2, -3):
        want = np.arange(1.0, 25.0).reshape(2, 3, 4)
        close(impl.masked_softmax(logits, mask, axis), want / want.sum(axis=axis, keepdims=True))
    close(impl.masked_softmax(logits, mask, axis=np.int64(1)),
          impl.masked_softmax(logits, mask, 1))


@grade("a mask that broadcasts must act as the full mask", "softmax")
@pytest.mark.parametrize("shape", [(4,), (1, 4), (3, 1), (1, 1), ()])
def test_broadcast_mask(impl, shape):
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((3, 4))
    mask = rng.random(shape) < 0.6 if shape else np.array(True)
    full = np.broadcast_to(mask, (3, 4)).copy()
    close(impl.masked_softmax(logits, mask), oracle.masked_softmax(logits, full, -1))


finite = st.floats(-1e4, 1e4, allow_nan=False)


@st.composite
def softmax_cases(draw):
    """Logits of 1-3 dims, a mask of a shape that broadcasts to them, and an axis."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    logits = draw(hnp.arrays(np.float64, shape, elements=finite))
    kept_dims = draw(st.integers(0, len(shape)))  # the mask's trailing dims, each full or 1
    mask_shape = [draw(st.sampled_from([1, n])) for n in shape[len(shape) - kept_dims:]]
    mask = draw(hnp.arrays(np.bool_, tuple(mask_shape), fill=st.nothing()))  # every cell drawn
    return logits, mask, draw(st.integers(-len(shape), len(shape) - 1))


@grade("masked_softmax must match exp(x - m) / sum over the kept entries", "softmax")
@settings(max_examples=150)
@given(case=softmax_cases())
def test_softmax_property(impl, case):
    logits, mask, axis = case
    close(impl.masked_softmax(logits, mask, axis), oracle.masked_softmax(logits, mask, axis))


@grade("every row with a kept entry must sum to 1", "softmax")
@settings(max_examples=100)
@given(case=softmax_cases())
def test_rows_sum_to_one(impl, case):
    logits, mask, axis = case
    sums = impl.masked_softmax(logits, mask, axis).sum(axis=axis)
    kept = np.broadcast_to(mask, logits.shape).any(axis=axis)
    np.testing.assert_allclose(sums[kept], 1.0, rtol=0, atol=1e-12)


@grade("nothing in a masked slot may change masked_softmax at all", "leaks")
@settings(max_examples=100)
@given(case=softmax_cases(), junk=st.sampled_from(GARBAGE))
@example(case=(np.array([[0.5, 2.0, -1.0]]), np.array([[True, False, True]]), -1), junk=np.nan)
@example(case=(np.array([[0.5, 2.0, -1.0]]), np.array([[True, False, True]]), -1), junk=np.inf)
def test_masked_garbage_changes_nothing(impl, case, junk):
    logits, mask, axis = case
    clean = impl.masked_softmax(logits, mask, axis)
    identical(impl.masked_softmax(hide(logits, ~mask, junk), mask, axis), clean)


@grade("masked_softmax of float32 or float16 logits must be computed and returned in float64",
       "softmax")
def test_float64_results(impl):
    values = np.array([[0.5, 1.25, -2.0], [3.0, 0.0, 1.0]])
    mask = np.array([[True, True, False], [True, True, True]])
    want = oracle.masked_softmax(values, mask, -1)
    for dtype in (np.float32, np.float16):
        close(impl.masked_softmax(values.astype(dtype), mask), want)


@grade("masked_softmax must not modify logits or mask", "softmax")
def test_inputs_untouched(impl):
    logits = np.array([[1.0, np.nan, 3.0], [np.inf, 2.0, 0.0]])
    mask = np.array([[True, False, True], [False, True, True]])
    before = logits.copy(), mask.copy()
    impl.masked_softmax(logits, mask)
    identical(logits, before[0], "masked_softmax modified the logits passed in")
    assert (mask == before[1]).all()


@grade("masked_softmax and position_ids must accept sizes of 0", "shapes")
@pytest.mark.parametrize("shape, axis", [((2, 0), -1), ((0, 3), -1), ((0, 3), 0), ((0,), 0),
                                         ((2, 0, 3), 1)])
def test_empty_sizes(impl, shape, axis):
    got = impl.masked_softmax(np.zeros(shape), np.ones(shape, dtype=bool), axis)
    assert got.shape == shape and got.dtype == np.float64
    if len(shape) == 2:
        assert impl.position_ids(np.ones(shape, dtype=bool)).shape == shape


# --- bad input ----------------------------------------------------------------------------------


def raises(call) -> None:
    with pytest.raises(ValueError):
        call()


@grade("a side other than 'left' or 'right' must raise ValueError", "errors")
@pytest.mark.parametrize("side", ["LEFT", "Right", "middle", "", None, 0, ("left",)])
def test_bad_side(impl, side):
    raises(lambda: impl.pad_batch([[1, 2], [3]], side=side))


@grade("a pad_id that is not an int must raise ValueError", "errors")
@pytest.mark.parametrize("pad_id", [0.0, 1.5, True, np.bool_(False), "0", None, np.float64(2)])
def test_bad_pad_id(impl, pad_id):
    raises(lambda: impl.pad_batch([[1, 2], [3]], pad_id=pad_id))


@grade("multiple_of that is not an int >= 1 must raise ValueError", "errors")
@pytest.mark.parametrize("multiple", [0, -2, 2.0, True, "4", None, np.int64(0)])
def test_bad_multiple(impl, multiple):
    raises(lambda: impl.pad_batch([[1, 2], [3]], multiple_of=multiple))


@grade("a bad batch, sequence or token must raise ValueError", "errors")
@pytest.mark.parametrize("seqs", [
    pytest.param(None, id="seqs None"),
    pytest.param(5, id="seqs an int"),
    pytest.param([[1], 2], id="a sequence that is an int"),
    pytest.param([[1], None], id="a sequence that is None"),
    pytest.param([np.array([[1, 2]])], id="a 2-D array"),
    pytest.param([np.array([1.0, 2.0])], id="a float array"),
    pytest.param([np.array([True, False])], id="a bool array"),
    pytest.param([[1, 2.0]], id="a float token"),
    pytest.param([(1, True)], id="a bool token"),
    pytest.param([[np.bool_(True)]], id="a NumPy bool token"),
    pytest.param([[1], [np.float32(2)]], id="a NumPy float token"),
    pytest.param([["3"]], id="a string token"),
    pytest.param([[None]], id="a None token"),
])
def test_bad_sequences(impl, seqs):
    raises(lambda: impl.pad_batch(seqs))


@grade("a mask that is not a bool array must raise ValueError", "errors")
@pytest.mark.parametrize("mask", [np.array([[1, 0, 1]]), np.array([[1.0, 0.0, 1.0]]),
                                  np.array([["a", "b", "c"]])])
def test_mask_not_bool(impl, mask):
    raises(lambda: impl.position_ids(mask))
    raises(lambda: impl.masked_softmax(np.zeros((1, 3)), mask))


@grade("a position_ids mask that is not 2-D must raise ValueError", "errors")
@pytest.mark.parametrize("shape", [(3,), (2, 3, 4), (1, 1, 1), ()])
def test_positions_mask_not_2d(impl, shape):
    raises(lambda: impl.position_ids(np.ones(shape, dtype=bool)))


@grade("a softmax mask that would change the logits' shape must raise ValueError", "errors")
@pytest.mark.parametrize("logits, mask", [
    pytest.param((2, 3), (3, 2), id="not broadcastable"),
    pytest.param((2, 3), (2,), id="trailing size differs"),
    pytest.param((1, 3), (3, 1), id="would grow the logits"),
    pytest.param((2, 3), (1, 2, 3), id="more dimensions"),
    pytest.param((3,), (1, 3), id="more dimensions of size 1"),
])
def test_softmax_mask_shape(impl, logits, mask):
    raises(lambda: impl.masked_softmax(np.zeros(logits), np.ones(mask, dtype=bool)))


@grade("an axis that is not an int in range must raise ValueError", "errors")
@pytest.mark.parametrize("axis", [2, -3, 1.0, True, None, "1", np.float64(0)])
def test_bad_axis(impl, axis):
    raises(lambda: impl.masked_softmax(np.zeros((2, 3)), np.ones((2, 3), dtype=bool), axis))
