"""Visible examples. `pytest katas/kv_cache_debug` also runs the hidden suite against your file.

These are a starting point for debugging: each failure here shows its full traceback.
"""

import pytest

torch = pytest.importorskip("torch", reason="this kata needs torch: pip install -e '.[torch]'")

V, D, F, L = 16, 8, 16, 2


def random_weights(seed: int = 0) -> dict:
    gen = torch.Generator().manual_seed(seed)

    def r(*shape, scale=1.0):
        return (torch.rand(*shape, generator=gen, dtype=torch.float64) - 0.5) * scale

    w = {"embed": r(V, D, scale=2), "ln_f.w": 1 + r(D), "ln_f.b": r(D), "head": r(D, V, scale=6)}
    for i in range(L):
        shapes = {"ln1.w": (D,), "ln1.b": (D,), "wq": (D, D), "wk": (D, D), "wv": (D, D),
                  "wo": (D, D), "ln2.w": (D,), "ln2.b": (D,), "w1": (D, F), "b1": (F,),
                  "w2": (F, D), "b2": (D,)}
        w |= {f"layers.{i}.{name}": r(*shape) for name, shape in shapes.items()}
    return w


def test_forward_returns_logits_and_a_cache(impl):
    gpt = impl.TinyGPT(random_weights(), n_heads=2)
    logits, cache = gpt.forward(torch.tensor([[1, 2, 3]]))
    assert logits.shape == (1, 3, V) and logits.dtype == torch.float64
    assert len(cache) == L and cache[0][0].shape == (1, 2, 3, D // 2)


def test_decoding_on_the_cache_matches_one_forward(impl):
    gpt = impl.TinyGPT(random_weights(), n_heads=2)
    ids = torch.tensor([[3, 1, 4, 1, 5]])
    full, _ = gpt.forward(ids)
    _, cache = gpt.forward(ids[:, :4])
    last, _ = gpt.forward(ids[:, 4:], None, cache)
    assert torch.allclose(last[0, -1], full[0, -1], rtol=0, atol=1e-9)


def test_generate_returns_the_new_tokens_only(impl):
    out = impl.TinyGPT(random_weights(), n_heads=2).generate([[1, 2, 3], [4]], max_new_tokens=3)
    assert len(out) == 2 and all(len(row) == 3 for row in out)
    assert all(isinstance(t, int) and 0 <= t < V for row in out for t in row)


def test_a_float_mask_is_rejected(impl):
    gpt = impl.TinyGPT(random_weights(), n_heads=2)
    with pytest.raises(ValueError):
        gpt.forward(torch.tensor([[1, 2]]), torch.ones(1, 2))
