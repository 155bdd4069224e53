"""Level 2: attention over a padded batch, decode over a cache with mixed lengths, bad input."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.marks import level

from . import oracle, refill
from .helpers import GARBAGE, close, heads, hide, identical, masks, scales

grade = level(2, "attention")


def ones(*shape: int) -> np.ndarray:
    return np.ones(shape, dtype=bool)


# --- attention ------------------------------------------------------------------------------


@grade("left-padded causal attention with q = k = 0 must give [0, 2, 3]")
def test_prompt_example(impl):
    zeros = np.zeros((1, 1, 3, 1))
    v = np.array([np.nan, 2.0, 4.0]).reshape(1, 1, 3, 1)
    out = impl.attention(zeros, zeros, v, np.array([[False, True, True]]), causal=True)
    close(out, [[[[0.0], [2.0], [3.0]]]])


@grade("causal attention with q = k = 0 must average exactly the values up to each query")
def test_causal_sees_itself_and_the_past(impl):
    zeros = np.zeros((1, 1, 4, 2))
    v = np.arange(1.0, 5.0).reshape(1, 1, 4, 1)
    close(impl.attention(zeros, zeros, v, causal=True), [[[[1.0], [1.5], [2.0], [2.5]]]])


@grade("a padded query row must be exactly 0.0")
@settings(max_examples=60)
@given(mask=masks(), causal=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_padded_rows_are_zero(impl, mask, causal, seed):
    q, k, v = heads(seed, mask.shape[0], 2, mask.shape[1], 3)
    out = impl.attention(q, k, v, mask, causal=causal)
    assert (out.transpose(0, 2, 1, 3)[~mask] == 0.0).all()


def one_key_pair(dim: int) -> tuple[np.ndarray, ...]:
    """Query of ones against keys 0 and ones (score dim * scale), values 0 and 1: the output is
    sigmoid(dim * scale)."""
    q = np.ones((1, 1, 2, dim))
    k = np.stack([np.zeros(dim), np.ones(dim)]).reshape(1, 1, 2, dim)
    return q, k, np.array([0.0, 1.0]).reshape(1, 1, 2, 1)


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


@grade("the default scale must be 1 / sqrt(D)")
@pytest.mark.parametrize("dim", [1, 4, 9])
def test_default_scale(impl, dim):
    out = impl.attention(*one_key_pair(dim))
    close(out[0, 0, :, 0], [sigmoid(dim / math.sqrt(dim))] * 2)


@grade("an explicit scale must multiply the scores")
@pytest.mark.parametrize("scale", [0.25, 3, np.float32(1.5), np.int64(2)])
def test_explicit_scale(impl, scale):
    out = impl.attention(*one_key_pair(4), scale=scale)
    close(out[0, 0, :, 0], [sigmoid(4 * float(scale))] * 2)


@grade("mask=None must mean every slot is real")
def test_mask_none(impl):
    q, k, v = heads(1, 2, 2, 5, 3)
    for causal in (False, True):
        want = np.stack([oracle.attend_alone(q[b], k[b], v[b], causal, None) for b in range(2)])
        close(impl.attention(q, k, v, causal=causal), want)
        close(impl.attention(q, k, v, None, causal=causal), want)


@grade("values may be wider or narrower than the keys")
@pytest.mark.parametrize("dv", [1, 5])
def test_value_width(impl, dv):
    q, k, v = heads(2, 1, 2, 4, 3, dv=dv)
    mask = np.array([[False, True, True, True]])
    want = oracle.attend_alone(q[0][:, 1:], k[0][:, 1:], v[0][:, 1:], True, None)
    close(impl.attention(q, k, v, mask, causal=True)[0][:, 1:], want)


@grade("each real row must equal its sequence alone, pads removed")
@settings(max_examples=80)
@given(mask=masks(), causal=st.booleans(), scale=scales, seed=st.integers(0, 2**32 - 1),
       dv=st.integers(1, 3))
def test_rows_equal_their_sequence_alone(impl, mask, causal, scale, seed, dv):
    q, k, v = heads(seed, mask.shape[0], 2, mask.shape[1], 3, dv=dv)
    out = impl.attention(q, k, v, mask, causal=causal, scale=scale)
    for b, row in enumerate(mask):
        real = np.flatnonzero(row)
        want = oracle.attend_alone(q[b][:, real], k[b][:, real], v[b][:, real], causal, scale)
        close(out[b][:, real], want)


@grade("nothing in a padded slot of q, k or v may change attention at all", "leaks")
@settings(max_examples=60)
@given(mask=masks(), causal=st.booleans(), seed=st.integers(0, 2**32 - 1),
       junk=st.sampled_from(GARBAGE))
def test_padded_garbage_changes_nothing(impl, mask, causal, seed, junk):
    q, k, v = heads(seed, mask.shape[0], 2, mask.shape[1], 3)
    pads = ~mask[:, None, :, None]
    clean = impl.attention(q, k, v, mask, causal=causal)
    dirty = impl.attention(*(hide(x, pads, junk) for x in (q, k, v)), mask, causal=causal)
    identical(dirty, clean)


@grade("attention of float32 inputs must be computed and returned in float64")
def test_attention_float64(impl):
    q, k, v = (x.astype(np.float32) for x in heads(3, 2, 1, 4, 2))
    mask = np.array([[True, True, False, False], [False, True, True, True]])
    want = impl.attention(*(x.astype(np.float64) for x in (q, k, v)), mask, causal=True)
    close(impl.attention(q, k, v, mask, causal=True), want)


@grade("attention must accept sizes of 0, all but D", "shapes")
@pytest.mark.parametrize("shape, dv", [((0, 2, 3, 4), 2), ((2, 0, 3, 4), 2), ((2, 2, 0, 4), 2),
                                       ((2, 2, 3, 4), 0)])
def test_attention_empty_sizes(impl, shape, dv):
    q, k, v = heads(4, *shape, dv=dv)
    for causal in (False, True):
        out = impl.attention(q, k, v, ones(shape[0], shape[2]), causal=causal)
        assert out.shape == (*shape[:3], dv) and out.dtype == np.float64


# --- decode_step ------------------------------------------------------------------------------


def mixed_rows():
    """Three rows, H = 1, S = 4, D = Dv = 1, q = k = 0 so each output averages its values: row 0
    holds 2 old tokens (values 2, 4), row 1 is fresh (n = 0) over stale NaN slots, row 2 is
    inactive with a NaN query."""
    q = np.zeros((3, 1, 1, 1))
    q[2] = np.nan
    k_new = np.array([7.0, 8.0, 9.0]).reshape(3, 1, 1, 1)
    v_new = np.array([6.0, 5.0, 1.0]).reshape(3, 1, 1, 1)
    k_cache = np.full((3, 1, 4, 1), np.nan)
    k_cache[0, 0, :2, 0] = 0.0
    v_cache = np.full((3, 1, 4, 1), np.nan)
    v_cache[0, 0, :2, 0] = [2.0, 4.0]
    k_cache[2], v_cache[2] = 3.0, 3.0
    cache_lens = np.array([2, 0, 1])
    active = np.array([True, True, False])
    return q, k_new, v_new, k_cache, v_cache, cache_lens, active


@grade("decode_step must attend old, fresh and inactive rows as the prompt says", "decode")
def test_decode_golden(impl):
    *args, active = mixed_rows()
    close(impl.decode_step(*args, active=active), np.array([4.0, 5.0, 0.0]).reshape(3, 1, 1, 1))


@grade("decode_step must write the new key and value into slot n of the caller's caches",
       "decode")
def test_decode_writes_slot_n(impl):
    q, k_new, v_new, k_cache, v_cache, cache_lens, active = mixed_rows()
    impl.decode_step(q, k_new, v_new, k_cache, v_cache, cache_lens, active=active)
    assert k_cache[0, 0, 2, 0] == 7.0 and v_cache[0, 0, 2, 0] == 6.0
    assert k_cache[1, 0, 0, 0] == 8.0 and v_cache[1, 0, 0, 0] == 5.0


@grade("an inactive row must output exactly 0.0", "decode")
def test_inactive_outputs_zero(impl):
    q, k_new, v_new, k_cache, v_cache, cache_lens, _ = mixed_rows()
    out = impl.decode_step(q, k_new, v_new, k_cache, v_cache, cache_lens,
                           active=np.array([False, True, False]))
    assert out[0].tolist() == out[2].tolist() == [[[0.0]]]


@grade("an inactive row's cache must stay untouched", "decode")
def test_inactive_cache_untouched(impl):
    q, k_new, v_new, k_cache, v_cache, cache_lens, active = mixed_rows()
    before = k_cache.copy(), v_cache.copy()
    impl.decode_step(q, k_new, v_new, k_cache, v_cache, cache_lens, active=active)
    identical(k_cache[2], before[0][2], "decode_step changed an inactive row's k_cache")
    identical(v_cache[2], before[1][2], "decode_step changed an inactive row's v_cache")


@grade("decode_step must not advance cache_lens", "decode")
def test_cache_lens_unchanged(impl):
    *args, active = mixed_rows()
    impl.decode_step(*args, active=active)
    assert args[5].tolist() == [2, 0, 1]


@grade("a full row that is inactive must not raise", "decode")
def test_full_inactive_row(impl):
    q, k_new, v_new, k_cache, v_cache, _, _ = mixed_rows()
    out = impl.decode_step(q, k_new, v_new, k_cache, v_cache, np.array([2, 0, 4]),
                           active=np.array([True, True, False]))
    close(out, np.array([4.0, 5.0, 0.0]).reshape(3, 1, 1, 1))


@st.composite
def decode_cases(draw):
    """Random caches: every row's slots from n on hold NaN (stale), `active` random, full rows
    only among the inactive ones."""
    b, h, s = draw(st.integers(1, 4)), draw(st.integers(1, 2)), draw(st.integers(1, 6))
    d, dv = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    active = np.array(draw(st.lists(st.booleans(), min_size=b, max_size=b)))
    lens = np.array([draw(st.integers(0, s - 1 if a else s)) for a in active])
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    q, k_new, v_new = heads(int(rng.integers(2**32)), b, h, 1, d, dv=dv)
    k_cache = rng.standard_normal((b, h, s, d))
    v_cache = rng.standard_normal((b, h, s, dv))
    stale = np.arange(s) >= lens[:, None]
    k_cache = hide(k_cache, stale[:, None, :, None], np.nan)
    v_cache = hide(v_cache, stale[:, None, :, None], np.nan)
    return q, k_new, v_new, k_cache, v_cache, lens, active


@grade("decode_step must equal causal attention recomputed over the row's n + 1 tokens",
       "decode")
@settings(max_examples=80)
@given(case=decode_cases(), scale=scales)
def test_decode_equals_recompute(impl, case, scale):
    q, k_new, v_new, k_cache, v_cache, lens, active = case
    keys = np.concatenate([k_cache, k_new], axis=2)
    values = np.concatenate([v_cache, v_new], axis=2)
    out = impl.decode_step(q, k_new, v_new, k_cache.copy(), v_cache.copy(), lens.copy(),
                           active=active, scale=scale)
    for b in np.flatnonzero(active):
        n = lens[b]
        seq = [*range(n), keys.shape[2] - 1]  # the old slots, then the new token
        queries = np.zeros((keys.shape[1], n + 1, keys.shape[3]))
        queries[:, n] = q[b, :, 0]
        want = oracle.attend_alone(queries, keys[b][:, seq], values[b][:, seq], True, scale)
        close(out[b, :, 0], want[:, n])


@grade("decode_step must write exactly slot n of each active row and nothing else", "decode")
@settings(max_examples=60)
@given(case=decode_cases())
def test_decode_writes_one_slot_per_active_row(impl, case):
    q, k_new, v_new, k_cache, v_cache, lens, active = case
    want_k, want_v = k_cache.copy(), v_cache.copy()
    for b in np.flatnonzero(active):
        want_k[b, :, lens[b]], want_v[b, :, lens[b]] = k_new[b, :, 0], v_new[b, :, 0]
    impl.decode_step(q, k_new, v_new, k_cache, v_cache, lens, active=active)
    identical(k_cache, want_k, "k_cache differs from slot n of each active row written alone")
    identical(v_cache, want_v, "v_cache differs from slot n of each active row written alone")


@grade("nothing in the slots after n may change decode_step at all", "leaks")
@settings(max_examples=60)
@given(case=decode_cases(), junk=st.sampled_from(GARBAGE))
def test_stale_slots_change_nothing(impl, case, junk):
    q, k_new, v_new, k_cache, v_cache, lens, active = case
    clean = impl.decode_step(q, k_new, v_new, k_cache.copy(), v_cache.copy(), lens,
                             active=active)
    after = (np.arange(k_cache.shape[2]) > lens[:, None])[:, None, :, None]
    dirty = impl.decode_step(q, k_new, v_new, hide(k_cache, after, junk),
                             hide(v_cache, after, junk), lens, active=active)
    identical(dirty, clean)


@grade("slot-refill decoding must equal causal attention over the live left-padded batch",
       "decode")
@pytest.mark.parametrize("seed", [0, 1])
def test_slot_refill_end_to_end(impl, seed):
    table = refill.Table(seed)
    steps = 0
    for step in refill.run(impl, table, refill.requests(seed)):
        ids, mask = (np.array(a) for a in oracle.layout(step.prefixes, "left", 0, 1))
        q, k, v = table.heads(ids, np.array(oracle.positions(mask)))
        want = impl.attention(q, k, v, mask, causal=True)[:, :, -1:]
        close(step.out[step.live], want)
        steps += 1
    assert steps >= 20  # 11 requests through 4 slots: slots were refilled


@grade("left-padded live batches must get position_ids equal to the cache lengths", "positions")
def test_refill_positions(impl):
    table = refill.Table(0)
    for step in refill.run(impl, table, refill.requests(0)):
        _, mask = impl.pad_batch(step.prefixes, side="left")
        assert impl.position_ids(mask)[:, -1].tolist() == step.cache_lens


@grade("decode_step must accept sizes of 0, all but D", "shapes")
@pytest.mark.parametrize("b, h, s, dv, live", [(0, 2, 3, 2, True), (2, 0, 3, 2, True),
                                               (2, 2, 0, 2, False), (2, 2, 3, 0, True)])
def test_decode_empty_sizes(impl, b, h, s, dv, live):
    q, k_new, v_new = heads(5, b, h, 1, 4, dv=dv)
    out = impl.decode_step(q, k_new, v_new, np.zeros((b, h, s, 4)), np.zeros((b, h, s, dv)),
                           np.zeros(b, dtype=np.int64), active=np.full(b, live))
    assert out.shape == (b, h, 1, dv) and out.dtype == np.float64
    assert not out.any()


# --- bad input ----------------------------------------------------------------------------------


def raises(call) -> None:
    with pytest.raises(ValueError):
        call()


def decode_args(**change) -> dict:
    q, k_new, v_new, k_cache, v_cache, cache_lens, active = mixed_rows()
    args = dict(q=q, k_new=k_new, v_new=v_new, k_cache=k_cache, v_cache=v_cache,
                cache_lens=cache_lens, active=active)
    return {**args, **change}


BAD_HEADS = [
    pytest.param((2, 3, 4), (2, 3, 4), (2, 3, 4), id="3-D"),
    pytest.param((1, 2, 3, 4), (1, 2, 3, 5), (1, 2, 3, 4), id="k's D differs"),
    pytest.param((1, 2, 3, 4), (1, 2, 2, 4), (1, 2, 3, 4), id="k's T differs"),
    pytest.param((1, 2, 3, 4), (1, 2, 3, 4), (1, 1, 3, 4), id="v's H differs"),
    pytest.param((1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3), id="v 3-D"),
    pytest.param((1, 2, 3, 0), (1, 2, 3, 0), (1, 2, 3, 2), id="D = 0"),
]


@grade("q, k, v of mismatched shapes or D = 0 must raise ValueError", "errors")
@pytest.mark.parametrize("qs, ks, vs", BAD_HEADS)
def test_bad_heads(impl, qs, ks, vs):
    raises(lambda: impl.attention(np.zeros(qs), np.zeros(ks), np.zeros(vs)))


BAD_NEW = [
    pytest.param((3, 1, 1, 1), (3, 1, 1, 2), (3, 1, 1, 1), id="k_new's D differs"),
    pytest.param((3, 1, 1, 1), (3, 1, 1, 1), (3, 2, 1, 1), id="v_new's H differs"),
    pytest.param((3, 1, 1, 1), (3, 1, 1), (3, 1, 1, 1), id="k_new 3-D"),
    pytest.param((3, 1, 1, 0), (3, 1, 1, 0), (3, 1, 1, 1), id="D = 0"),
]


@grade("q, k_new, v_new of mismatched shapes or D = 0 must raise ValueError", "errors")
@pytest.mark.parametrize("qs, ks, vs", BAD_NEW)
def test_bad_new_heads(impl, qs, ks, vs):
    d = qs[-1]
    args = decode_args(q=np.zeros(qs), k_new=np.zeros(ks), v_new=np.zeros(vs),
                       k_cache=np.zeros((3, 1, 4, d)))
    raises(lambda: impl.decode_step(**args))


@grade("an attention mask that is not a bool [B, T] array must raise ValueError", "errors")
@pytest.mark.parametrize("mask", [np.ones(3, bool), np.ones((2, 2), bool), np.ones((2, 3, 1), bool),
                                  np.ones((1, 3), bool), np.ones((2, 3), int)])
def test_bad_attention_mask(impl, mask):
    q, k, v = heads(6, 2, 1, 3, 2)
    raises(lambda: impl.attention(q, k, v, mask))


BAD_SCALES = [0, 0.0, -1.0, np.inf, np.nan, -np.inf, True, "1", np.float64(0), 1j]


@grade("a scale that is not a finite number above 0 must raise ValueError", "errors")
@pytest.mark.parametrize("scale", BAD_SCALES)
def test_bad_scale(impl, scale):
    q, k, v = heads(7, 1, 1, 2, 2)
    raises(lambda: impl.attention(q, k, v, scale=scale))
    *args, active = mixed_rows()
    raises(lambda: impl.decode_step(*args, active=active, scale=scale))


def read_only(x: np.ndarray) -> np.ndarray:
    x = x.copy()
    x.flags.writeable = False
    return x


BAD_DECODE = {
    "shapes": [
        pytest.param(dict(q=np.zeros((3, 1, 2, 1)), k_new=np.zeros((3, 1, 2, 1)),
                          v_new=np.zeros((3, 1, 2, 1))), id="two query tokens"),
        pytest.param(dict(k_cache=np.zeros((2, 1, 4, 1))), id="k_cache's B differs"),
        pytest.param(dict(k_cache=np.zeros((3, 2, 4, 1))), id="k_cache's H differs"),
        pytest.param(dict(k_cache=np.zeros((3, 1, 4, 2))), id="k_cache's D differs"),
        pytest.param(dict(v_cache=np.zeros((3, 1, 5, 1))), id="v_cache's S differs"),
        pytest.param(dict(v_cache=np.zeros((3, 1, 4, 2))), id="v_cache's Dv differs"),
        pytest.param(dict(k_cache=np.zeros((3, 4, 1))), id="k_cache 3-D"),
    ],
    "caches": [
        pytest.param(dict(k_cache=np.zeros((3, 1, 4, 1), np.float32)), id="float32 k_cache"),
        pytest.param(dict(v_cache=np.zeros((3, 1, 4, 1), np.int64)), id="int64 v_cache"),
        pytest.param(dict(v_cache=read_only(mixed_rows()[4])), id="read-only v_cache"),
        pytest.param(dict(k_cache=read_only(mixed_rows()[3])), id="read-only k_cache"),
    ],
    "lens": [
        pytest.param(dict(cache_lens=np.array([2.0, 0.0, 1.0])), id="float"),
        pytest.param(dict(cache_lens=np.array([True, False, True])), id="bool"),
        pytest.param(dict(cache_lens=np.array([[2, 0, 1]])), id="2-D"),
        pytest.param(dict(cache_lens=np.array([2, 0])), id="too short"),
        pytest.param(dict(cache_lens=np.array([2, -1, 1])), id="negative"),
        pytest.param(dict(cache_lens=np.array([2, 0, 5])), id="above S"),
    ],
    "active": [
        pytest.param(dict(active=np.array([1, 1, 0])), id="int"),
        pytest.param(dict(active=np.array([True, True])), id="too short"),
        pytest.param(dict(active=np.array([[True, True, False]])), id="2-D"),
    ],
    "full": [
        pytest.param(dict(cache_lens=np.array([4, 0, 1])), id="active row full"),
        pytest.param(dict(cache_lens=np.array([2, 0, 4]), active=None), id="full, active None"),
    ],
}


@grade("decode_step shapes that do not match must raise ValueError", "errors")
@pytest.mark.parametrize("change", BAD_DECODE["shapes"])
def test_bad_decode_shapes(impl, change):
    raises(lambda: impl.decode_step(**decode_args(**change)))


@grade("caches that are not writeable float64 arrays must raise ValueError", "errors")
@pytest.mark.parametrize("change", BAD_DECODE["caches"])
def test_bad_caches(impl, change):
    raises(lambda: impl.decode_step(**decode_args(**change)))


@grade("cache_lens that is not a 1-D integer [B] array within [0, S] must raise ValueError",
       "errors")
@pytest.mark.parametrize("change", BAD_DECODE["lens"])
def test_bad_cache_lens(impl, change):
    raises(lambda: impl.decode_step(**decode_args(**change)))


@grade("an active that is not a bool [B] array must raise ValueError", "errors")
@pytest.mark.parametrize("change", BAD_DECODE["active"])
def test_bad_active(impl, change):
    raises(lambda: impl.decode_step(**decode_args(**change)))


@grade("an active row with no free slot must raise ValueError", "errors")
@pytest.mark.parametrize("change", BAD_DECODE["full"])
def test_full_active_row(impl, change):
    raises(lambda: impl.decode_step(**decode_args(**change)))


@grade("a decode_step that raises must leave both caches untouched", "errors")
@pytest.mark.parametrize("change", [
    *BAD_DECODE["caches"][2:], *BAD_DECODE["lens"][4:], *BAD_DECODE["full"],
    pytest.param(dict(scale=0.0), id="scale 0"),
    pytest.param(dict(scale=-2), id="scale -2"),
    pytest.param(dict(active=np.array([1, 1, 0])), id="int active"),
])
def test_raising_writes_nothing(impl, change):
    args = decode_args(**change)
    before = args["k_cache"].copy(), args["v_cache"].copy()
    with pytest.raises(ValueError):
        impl.decode_step(**args)
        pytest.fail(f"decode_step({', '.join(change)}=...) should have raised ValueError")
    identical(args["k_cache"], before[0], "a decode_step that raised ValueError changed k_cache")
    identical(args["v_cache"], before[1], "a decode_step that raised ValueError changed v_cache")
