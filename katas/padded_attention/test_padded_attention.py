"""Visible examples. `pytest katas/padded_attention` also runs the hidden suite on your file."""

import numpy as np


def test_level1_left_padding_and_positions(impl):
    ids, mask = impl.pad_batch([[5, 6, 7], [8], []], side="left", multiple_of=4)
    assert ids.tolist() == [[0, 5, 6, 7], [0, 0, 0, 8], [0, 0, 0, 0]]
    assert impl.position_ids(mask).tolist() == [[0, 0, 1, 2], [0, 0, 0, 0], [0, 0, 0, 0]]


def test_level1_softmax_ignores_what_it_masks(impl):
    logits = np.array([[1000.0, 1001.0, 1002.0, np.nan], [1.0, 2.0, 3.0, 4.0]])
    mask = np.array([[True, True, True, False], [False, False, False, False]])
    got = impl.masked_softmax(logits, mask)
    e = np.exp([-2.0, -1.0, 0.0])
    np.testing.assert_allclose(got[0, :3], e / e.sum(), rtol=1e-12)
    assert got[0, 3] == 0.0 and (got[1] == 0.0).all()


def test_level2_padded_causal_attention(impl):
    zeros = np.zeros((1, 1, 3, 1))
    v = np.array([np.nan, 2.0, 4.0]).reshape(1, 1, 3, 1)
    out = impl.attention(zeros, zeros, v, np.array([[False, True, True]]), causal=True)
    assert out[0, 0, :, 0].tolist() == [0.0, 2.0, 3.0]


def test_level2_decode_writes_slot_n_and_attends_over_it(impl):
    q = np.zeros((2, 1, 1, 1))
    k_cache, v_cache = np.zeros((2, 1, 4, 1)), np.full((2, 1, 4, 1), np.nan)
    v_cache[0, 0, :2, 0] = [2.0, 4.0]  # row 0 holds two tokens; row 1 starts fresh
    v_new = np.array([6.0, 5.0]).reshape(2, 1, 1, 1)
    cache_lens = np.array([2, 0])
    out = impl.decode_step(q, np.zeros_like(q), v_new, k_cache, v_cache, cache_lens)
    assert out[:, 0, 0, 0].tolist() == [4.0, 5.0]
    assert v_cache[0, 0, 2, 0] == 6.0 and cache_lens.tolist() == [2, 0]


def test_level3_buckets_and_packing(impl):
    assert impl.bucket_edges([1, 1, 2, 5, 6, 6], 2) == [2, 6]
    assert impl.padded_tokens([1, 1, 2, 5, 6, 6], [2, 6]) == 3
    mask = np.array([[False, True, True], [True, False, False]])
    packed, cu = impl.pack(np.arange(6).reshape(2, 3), mask)
    assert packed.tolist() == [1, 2, 3] and cu.tolist() == [0, 2, 3]
    x, back = impl.unpack(packed, cu, side="left")
    assert x.tolist() == [[1, 2], [0, 3]] and back.tolist() == [[True, True], [False, True]]
