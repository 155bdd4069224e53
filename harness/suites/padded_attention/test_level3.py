"""Level 3: padding of buckets, optimal bucket edges, pack / unpack and varlen attention."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.marks import level

from . import oracle
from .helpers import close, heads, mask_of, masks, scales

grade = level(3, "buckets")

LENGTHS = [1, 1, 2, 5, 6, 6]


def raises(call) -> None:
    with pytest.raises(ValueError):
        call()


# --- padded_tokens and bucket_edges -----------------------------------------------------------


@grade("bucket edges of [1, 1, 2, 5, 6, 6] must be [6], [2, 6], [1, 2, 6], then all four")
def test_edges_golden(impl):
    got = [impl.bucket_edges(LENGTHS, k) for k in (1, 2, 3, 4)]
    assert got == [[6], [2, 6], [1, 2, 6], [1, 2, 5, 6]]


@grade("padded_tokens of [1, 1, 2, 5, 6, 6] must be 15, 3, 1 and 0 for those edges")
def test_padding_golden(impl):
    edges = [[6], [2, 6], [1, 2, 6], [1, 2, 5, 6]]
    assert [impl.padded_tokens(LENGTHS, e) for e in edges] == [15, 3, 1, 0]


@grade("a length equal to an edge must pay no padding")
def test_edges_are_inclusive(impl):
    assert impl.padded_tokens([3, 5], [3, 5]) == 0
    assert impl.padded_tokens([2, 3, 4, 5], (3, 5)) == 2
    assert impl.padded_tokens([0, 7], [0, 7, 9]) == 0


@grade("no lengths must give 0 padding")
def test_no_lengths_no_padding(impl):
    assert impl.padded_tokens([], [3]) == 0
    assert impl.padded_tokens([], []) == 0
    assert impl.padded_tokens(np.array([], dtype=np.int64), np.array([2, 4])) == 0


@grade("padded_tokens must match a plain sum for any lengths and edges")
@settings(max_examples=100)
@given(lengths=st.lists(st.integers(0, 20), max_size=12),
       extra=st.lists(st.integers(0, 25), max_size=5))
def test_padding_property(impl, lengths, extra):
    edges = sorted(set(extra) | {max(lengths, default=0) + 1})
    assert impl.padded_tokens(lengths, edges) == oracle.padding(lengths, edges)


@grade("ties must go to the lexicographically smallest edges")
@pytest.mark.parametrize("lengths, k, edges", [([1, 2, 3], 2, [1, 3]), ([3, 5, 1], 2, [1, 5]),
                                               ([10, 20, 30, 40], 3, [10, 20, 40]),
                                               ([2, 2, 4, 6, 6], 2, [2, 6])])
def test_ties(impl, lengths, k, edges):
    assert impl.bucket_edges(lengths, k) == edges


@grade("more buckets than distinct lengths must give every distinct length")
def test_more_buckets_than_lengths(impl):
    assert impl.bucket_edges([4, 4, 2, 9], 5) == [2, 4, 9]
    assert impl.bucket_edges([7], 16) == [7]
    assert impl.bucket_edges([0, 0], 2) == [0]


@grade("no lengths must give no edges")
def test_no_lengths_no_edges(impl):
    assert impl.bucket_edges([], 3) == []
    assert impl.bucket_edges(np.array([], dtype=np.int32), 1) == []


@grade("lengths and edges may be lists, tuples or 1-D integer arrays of any ints")
def test_length_kinds(impl):
    kinds = [LENGTHS, tuple(LENGTHS), np.array(LENGTHS, dtype=np.int16),
             [np.int64(n) for n in LENGTHS]]
    for lengths in kinds:
        assert impl.bucket_edges(lengths, np.int64(2)) == [2, 6]
        assert impl.padded_tokens(lengths, np.array([2, 6], dtype=np.uint8)) == 3
        assert impl.padded_tokens(lengths, (np.int32(2), 6)) == 3


@grade("bucket_edges must match brute force on small inputs, ties included")
@settings(max_examples=150)
@given(lengths=st.lists(st.integers(0, 12), max_size=10), k=st.integers(1, 5))
def test_edges_against_brute_force(impl, lengths, k):
    assert impl.bucket_edges(lengths, k) == oracle.brute_edges(lengths, k)


@grade("padding must never rise with more buckets")
@settings(max_examples=60)
@given(lengths=st.lists(st.integers(0, 40), min_size=1, max_size=30))
def test_more_buckets_never_pad_more(impl, lengths):
    padding = [oracle.padding(lengths, impl.bucket_edges(lengths, k)) for k in range(1, 8)]
    assert padding == sorted(padding, reverse=True)


@grade("bucket_edges must handle 4,096 lengths with 512 distinct values and 16 buckets")
def test_large_input(impl):
    rng = np.random.default_rng(0)
    values = rng.choice(np.arange(1, 8192), 512, replace=False)
    lengths = np.concatenate([values, rng.choice(values, 4096 - 512)])
    rng.shuffle(lengths)
    edges = impl.bucket_edges(lengths, 16)
    assert len(edges) == 16 and edges == sorted(set(edges)) and set(edges) <= set(values.tolist())
    assert oracle.padding(lengths.tolist(), edges) == oracle.least_padding(lengths, 16)


@grade("bad lengths or edges must raise ValueError in padded_tokens", "errors")
@pytest.mark.parametrize("lengths, edges", [
    pytest.param([1, -1], [3], id="a negative length"),
    pytest.param([1, 2.0], [3], id="a float length"),
    pytest.param([1, True], [3], id="a bool length"),
    pytest.param(np.array([1.0, 2.0]), [3], id="a float array"),
    pytest.param(np.array([[1, 2]]), [3], id="a 2-D array"),
    pytest.param(np.array(3), [3], id="a 0-d array"),
    pytest.param(None, [3], id="lengths None"),
    pytest.param([1, 2], [3, 3], id="a repeated edge"),
    pytest.param([1, 2], [5, 3], id="decreasing edges"),
    pytest.param([1, 2], [2.0, 3], id="a float edge"),
    pytest.param([1, 2], None, id="edges None"),
    pytest.param([1, 4], [3], id="a length above the last edge"),
    pytest.param([1], [], id="no edge for a length"),
])
def test_bad_padding_input(impl, lengths, edges):
    raises(lambda: impl.padded_tokens(lengths, edges))


@grade("bad lengths or num_buckets must raise ValueError in bucket_edges", "errors")
@pytest.mark.parametrize("lengths, k", [
    pytest.param([1, -2], 2, id="a negative length"),
    pytest.param([1, 2.5], 2, id="a float length"),
    pytest.param(np.array([True]), 1, id="a bool array"),
    pytest.param([1, 2], 0, id="no buckets"),
    pytest.param([1, 2], -1, id="negative buckets"),
    pytest.param([1, 2], 2.0, id="a float count"),
    pytest.param([1, 2], True, id="a bool count"),
    pytest.param([1, 2], None, id="None"),
])
def test_bad_bucket_input(impl, lengths, k):
    raises(lambda: impl.bucket_edges(lengths, k))


# --- pack and unpack ----------------------------------------------------------------------------

SCATTERED = np.array([[True, True, False, False], [False, True, False, True],
                      [False, False, False, False]])


@grade("pack must take the real tokens row by row, in order", "packing")
def test_pack_golden(impl):
    packed, _ = impl.pack(np.arange(12).reshape(3, 4), SCATTERED)
    assert packed.tolist() == [0, 1, 5, 7]


@grade("cu_seqlens must start at 0 and grow by each row's real count", "packing")
def test_cu_seqlens_golden(impl):
    _, cu = impl.pack(np.arange(12).reshape(3, 4), SCATTERED)
    assert cu.dtype == np.int64 and cu.tolist() == [0, 2, 4, 4]
    _, cu = impl.pack(np.zeros((0, 3)), np.zeros((0, 3), dtype=bool))
    assert cu.dtype == np.int64 and cu.tolist() == [0]


@grade("pack must keep the trailing dimensions and the dtype of x", "packing")
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.bool_, np.complex128])
def test_pack_keeps_dtype(impl, dtype):
    x = np.arange(3 * 4 * 2 * 5).reshape(3, 4, 2, 5).astype(dtype)
    packed, _ = impl.pack(x, SCATTERED)
    assert packed.dtype == dtype and packed.shape == (4, 2, 5)
    assert (packed == x[SCATTERED]).all()


@grade("unpack must align each sequence as pad_batch does", "packing")
def test_unpack_golden(impl):
    packed, cu = np.array([1, 2, 3, 4]), np.array([0, 1, 4, 4])
    x, mask = impl.unpack(packed, cu)
    assert x.tolist() == [[1, 0, 0], [2, 3, 4], [0, 0, 0]]
    assert mask.tolist() == [[True, False, False], [True, True, True], [False, False, False]]
    x, mask = impl.unpack(packed, cu, side="".join(["le", "ft"]), length=4)  # equal, not "is"
    assert x.tolist() == [[0, 0, 0, 1], [0, 2, 3, 4], [0, 0, 0, 0]]
    assert mask.tolist() == [[False, False, False, True], [False, True, True, True],
                             [False] * 4]


@grade("unpack must pad with 0 in packed's dtype", "packing")
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.bool_, np.uint8])
def test_unpack_keeps_dtype(impl, dtype):
    packed = np.ones((3, 2), dtype=dtype)
    x, mask = impl.unpack(packed, np.array([0, 2, 3]), side="left")
    assert x.dtype == dtype and mask.dtype == np.bool_ and x.shape == (2, 2, 2)
    assert x[~mask].tolist() == [[0, 0]] and x[mask].tolist() == packed.tolist()


@grade("unpack with no sequences, or only empty ones, must give width 0", "shapes")
@pytest.mark.parametrize("cu, rows", [([0], 0), ([0, 0, 0], 2)])
def test_unpack_empty(impl, cu, rows):
    x, mask = impl.unpack(np.zeros((0, 3)), np.array(cu))
    assert x.shape == (rows, 0, 3) and mask.shape == (rows, 0)


@grade("pack(*unpack(packed, cu)) must give back packed and cu", "packing")
@settings(max_examples=80)
@given(lens=st.lists(st.integers(0, 5), max_size=5), side=st.sampled_from(["left", "right"]),
       extra=st.integers(0, 2), seed=st.integers(0, 2**32 - 1))
def test_unpack_then_pack(impl, lens, side, extra, seed):
    cu = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    packed = np.random.default_rng(seed).integers(-9, 9, (int(cu[-1]), 2))
    x, mask = impl.unpack(packed, cu, side=side, length=max(lens, default=0) + extra)
    again, cu_again = impl.pack(x, mask)
    assert again.tolist() == packed.tolist() and cu_again.tolist() == cu.tolist()


@grade("unpack(*pack(x, mask)) must give the side-aligned mask and x, zero at pads", "packing")
@settings(max_examples=80)
@given(mask=masks(batch=(0, 4)), side=st.sampled_from(["left", "right"]),
       seed=st.integers(0, 2**32 - 1))
def test_pack_then_unpack(impl, mask, side, seed):
    x = np.random.default_rng(seed).integers(1, 9, (*mask.shape, 2))
    got_x, got_mask = impl.unpack(*impl.pack(x, mask), side=side, length=mask.shape[1])
    lens = mask.sum(axis=1)
    want_mask = mask_of(lens.tolist(), mask.shape[1], side) if len(lens) else mask
    want_x = np.zeros_like(x)
    want_x[want_mask] = x[mask]
    assert got_mask.tolist() == want_mask.tolist() and got_x.tolist() == want_x.tolist()


# --- varlen_attention ---------------------------------------------------------------------------


def zero_heads(values: list[float]) -> tuple[np.ndarray, ...]:
    # Floating values: Level 2 leaves non-floating q, k, v open, so an int v may be rejected.
    n = len(values)
    v = np.array(values, dtype=np.float64).reshape(n, 1, 1)
    return np.zeros((n, 1, 2)), np.zeros((n, 1, 2)), v


@grade("varlen attention must stay within each sequence", "packing")
def test_varlen_golden(impl):
    cu = np.array([0, 2, 5])
    out = impl.varlen_attention(*zero_heads([1, 3, 2, 4, 6]), cu)
    close(out[:, 0, 0], [2, 2, 4, 4, 4])


@grade("causal varlen attention must see each sequence's own past only", "packing")
def test_varlen_causal_golden(impl):
    cu = np.array([0, 2, 5])
    out = impl.varlen_attention(*zero_heads([1, 3, 2, 4, 6]), cu, causal=True)
    close(out[:, 0, 0], [1, 2, 2, 3, 4])


@grade("empty sequences in cu_seqlens must be allowed", "packing")
def test_varlen_empty_sequences(impl):
    cu = np.array([0, 0, 2, 2, 3])
    for causal, want in ((False, [2, 2, 5]), (True, [1, 2, 5])):
        close(impl.varlen_attention(*zero_heads([1, 3, 5]), cu, causal=causal)[:, 0, 0], want)


@grade("varlen_attention must equal each sequence's attention alone", "packing")
@settings(max_examples=80)
@given(lens=st.lists(st.integers(0, 5), max_size=4), causal=st.booleans(), scale=scales,
       seed=st.integers(0, 2**32 - 1), dv=st.integers(1, 3))
def test_varlen_property(impl, lens, causal, scale, seed, dv):
    cu = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    q, k, v = heads(seed, int(cu[-1]), 2, 3, dv=dv)
    out = impl.varlen_attention(q, k, v, cu, causal=causal, scale=scale)
    for start, end in zip(cu[:-1], cu[1:], strict=True):
        seq = [x[start:end].transpose(1, 0, 2) for x in (q, k, v)]
        close(out[start:end], oracle.attend_alone(*seq, causal, scale).transpose(1, 0, 2))


@grade("varlen_attention of float32 inputs must be computed and returned in float64",
       "packing")
def test_varlen_float64(impl):
    q, k, v = (x.astype(np.float32) for x in heads(8, 5, 2, 3))
    out = impl.varlen_attention(q, k, v, np.array([0, 3, 5]), causal=True)
    for start, end in ((0, 3), (3, 5)):
        seq = [x[start:end].astype(np.float64).transpose(1, 0, 2) for x in (q, k, v)]
        close(out[start:end], oracle.attend_alone(*seq, True, None).transpose(1, 0, 2))


@grade("varlen_attention must accept sizes of 0, all but D", "shapes")
@pytest.mark.parametrize("n, h, dv, cu", [(0, 2, 2, [0]), (0, 2, 2, [0, 0]), (3, 0, 2, [0, 3]),
                                          (3, 2, 0, [0, 1, 3])])
def test_varlen_empty_sizes(impl, n, h, dv, cu):
    q, k, v = heads(9, n, h, 3, dv=dv)
    out = impl.varlen_attention(q, k, v, np.array(cu))
    assert out.shape == (n, h, dv) and out.dtype == np.float64


BAD_CU = [
    pytest.param(np.array([0.0, 2.0, 3.0]), id="float"),
    pytest.param(np.array([[0, 2, 3]]), id="2-D"),
    pytest.param(np.array(0), id="0-d"),
    pytest.param(np.array([], dtype=np.int64), id="empty"),
    pytest.param(np.array([1, 2, 3]), id="not from 0"),
    pytest.param(np.array([-1, 1, 3]), id="from below 0"),
    pytest.param(np.array([0, 3, 2, 3]), id="decreasing"),
    pytest.param(np.array([0, 2, 4]), id="ends past the count"),
    pytest.param(np.array([0, 1, 2]), id="ends before the count"),
]


@grade("a bad cu_seqlens must raise ValueError", "errors")
@pytest.mark.parametrize("cu", BAD_CU)
def test_bad_cu_seqlens(impl, cu):
    raises(lambda: impl.unpack(np.arange(3), cu))
    raises(lambda: impl.varlen_attention(*heads(10, 3, 1, 2), cu))
    raises(lambda: impl.varlen_attention(*heads(10, 3, 1, 2), cu, causal=True))


@grade("pack of x below 2-D or a mask not bool [B, T] must raise ValueError", "errors")
@pytest.mark.parametrize("x, mask", [
    pytest.param(np.arange(3), np.ones(3, bool), id="1-D x"),
    pytest.param(np.array(5), np.array(True), id="0-d x"),
    pytest.param(np.zeros((2, 3)), np.ones((2, 3), int), id="int mask"),
    pytest.param(np.zeros((2, 3)), np.ones((2, 4), bool), id="mask too wide"),
    pytest.param(np.zeros((2, 3)), np.ones(2, bool), id="1-D mask"),
    pytest.param(np.zeros((2, 3)), np.ones((3, 2), bool), id="mask transposed"),
    pytest.param(np.zeros((2, 3, 4)), np.ones((2, 3, 4), bool), id="mask of x's shape"),
])
def test_bad_pack(impl, x, mask):
    raises(lambda: impl.pack(x, mask))


@grade("unpack of a 0-d packed, a bad side or a bad length must raise ValueError", "errors")
@pytest.mark.parametrize("packed, kw", [
    pytest.param(np.array(1), {}, id="0-d packed"),
    pytest.param(np.arange(3), dict(side="LEFT"), id="side LEFT"),
    pytest.param(np.arange(3), dict(side=None), id="side None"),
    pytest.param(np.arange(3), dict(length=1), id="length below the longest"),
    pytest.param(np.arange(3), dict(length=2.0), id="float length"),
    pytest.param(np.arange(3), dict(length=-1), id="negative length"),
    pytest.param(np.arange(3), dict(length=True), id="bool length"),
])
def test_bad_unpack(impl, packed, kw):
    cu = np.array([0, 2, 3]) if packed.ndim else np.array([0, 1])
    raises(lambda: impl.unpack(packed, cu, **kw))


@grade("varlen q, k, v of mismatched shapes, D = 0 or a bad scale must raise ValueError",
       "errors")
@pytest.mark.parametrize("qs, ks, vs, scale", [
    pytest.param((3, 2), (3, 2), (3, 2), None, id="2-D"),
    pytest.param((3, 1, 2), (3, 1, 3), (3, 1, 2), None, id="k's D differs"),
    pytest.param((3, 1, 2), (4, 1, 2), (3, 1, 2), None, id="k's N differs"),
    pytest.param((3, 1, 2), (3, 1, 2), (3, 2, 2), None, id="v's H differs"),
    pytest.param((3, 1, 2), (3, 1, 2), (4, 1, 2), None, id="v's N differs"),
    pytest.param((3, 1, 0), (3, 1, 0), (3, 1, 2), None, id="D = 0"),
    pytest.param((3, 1, 2), (3, 1, 2), (3, 1, 2), 0.0, id="scale 0"),
    pytest.param((3, 1, 2), (3, 1, 2), (3, 1, 2), True, id="scale True"),
])
def test_bad_varlen(impl, qs, ks, vs, scale):
    q, k, v = np.zeros(qs), np.zeros(ks), np.zeros(vs)
    raises(lambda: impl.varlen_attention(q, k, v, np.array([0, 1, 3]), scale=scale))
