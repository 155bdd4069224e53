"""Level 1: the forward pass, padding masks and the cache."""

import numpy as np
import pytest
import torch
from hypothesis import given

from harness.marks import level

from .helpers import (
    MEANS,
    ONE_HEAD,
    SPEC,
    TOL,
    Batch,
    D,
    Spec,
    assert_rows_match,
    assert_same_real_logits,
    batches,
    examples,
    fed_logits,
    feed,
    identical,
    model,
    one_shot,
    plain,
    tensors,
    weights,
)
from .oracle import layer_norm

grade = level(1)

PROMPTS = np.array([[5, 17, 3, 42, 8, 8, 30], [11, 0, 47, 2, 29, 13, 6]])
# Row 0: left-padded, the first steps of a chunk with no real key to see. Row 1: no pads.
# Row 2: right-padded. Row 3: pads in the middle.
PADDED = Batch(np.array([[0, 0, 0, 9, 4, 40, 21], [7, 33, 1, 19, 4, 25, 44],
                         [12, 6, 38, 20, 0, 0, 0], [3, 45, 0, 0, 27, 10, 16]]),
               np.array([[0, 0, 0, 1, 1, 1, 1], [1] * 7, [1, 1, 1, 1, 0, 0, 0],
                         [1, 1, 0, 0, 1, 1, 1]]), [7])


def assert_close(got: torch.Tensor, want: np.ndarray) -> None:
    gap = np.abs(got.detach().cpu().numpy() - want).max()
    assert gap <= TOL, f"off by {gap:.3g}"


def blockless_table(spec: Spec) -> np.ndarray:
    """(V, V): with wo = w2 = b2 = 0 no block adds anything, so a token's logits are
    LN_f(embed[token]) @ head, whatever came before it."""
    w = weights(spec)
    return layer_norm(w["embed"], w["ln_f.w"], w["ln_f.b"]) @ w["head"]


@grade("with wo, w2 and b2 zero, a token's logits must be LN_f(embed[token]) @ head",
       hint="model")
def test_blockless_model_is_a_table(impl):
    spec = Spec(zero=("wo", "w2", "b2"))
    logits, _ = model(impl, spec).forward(torch.tensor(PROMPTS))
    assert logits.shape == (*PROMPTS.shape, 48)
    assert_close(logits, blockless_table(spec)[PROMPTS])


@grade("the last layer must count: L is 1 + the largest layer index", hint="weights")
def test_the_last_of_three_layers_counts(impl):
    # Layers 0 and 1 add nothing; layer 2 adds only its b2, so h = embed[token] + b2.
    spec = Spec(layers=3, zero=("wo", "w2"))
    w = {**tensors(spec), "layers.0.b2": torch.zeros(D), "layers.1.b2": torch.zeros(D)}
    logits, cache = impl.TinyGPT(w, 4).forward(torch.tensor(PROMPTS))
    ref = weights(spec)
    h = ref["embed"][PROMPTS] + ref["layers.2.b2"]
    assert len(cache) == 3
    assert_close(logits, layer_norm(h, ref["ln_f.w"], ref["ln_f.b"]) @ ref["head"])


@grade("keys outside the model's list of weights must be ignored", hint="weights")
def test_other_keys_are_ignored(impl):
    extra = {"pos_embed": torch.ones(7, D), "layers.0.attn.bias": torch.ones(3),
             "layers.4.note": torch.zeros(1), "lm_head.bias": torch.ones(48)}
    ids = torch.tensor(PROMPTS)
    want, _ = model(impl).forward(ids)
    got, cache = impl.TinyGPT({**tensors(SPEC), **extra}, 4).forward(ids)
    assert len(cache) == 2
    assert torch.equal(got, want)


@grade("with wq zero, attention must be the running mean of the real values so far",
       hint="masks")
def test_zero_queries_average_the_real_values(impl):
    # One layer, wq = 0 (every score is 0) and no MLP output: at a real step, the attention
    # output is the plain mean of the values of the row's real steps so far; rotary and scale
    # play no part.
    spec = Spec(n_heads=1, layers=1, zero=("wq", "w2", "b2"))  # one head: the masks alone
    w = weights(spec)
    logits = fed_logits(model(impl, spec), PADDED)
    for b, (ids, mask) in enumerate(zip(PADDED.ids, PADDED.mask, strict=True)):
        x = w["embed"][ids[mask == 1]]
        a = layer_norm(x, w["layers.0.ln1.w"], w["layers.0.ln1.b"])
        means = np.cumsum(a @ w["layers.0.wv"], axis=0) / np.arange(1, len(x) + 1)[:, None]
        h = x + means @ w["layers.0.wo"]
        want = layer_norm(h, w["ln_f.w"], w["ln_f.b"]) @ w["head"]
        assert np.abs(logits[b][mask == 1] - want).max() <= TOL, f"row {b}"


@grade("single-head attention over several tokens must match the plain forward",
       hint="attention")
def test_one_head_matches_the_plain_forward(impl):
    logits, _ = model(impl, ONE_HEAD).forward(torch.tensor(PROMPTS))
    for row, ids in zip(logits, PROMPTS, strict=True):
        assert_close(row, plain(ONE_HEAD, tuple(ids)))


def one_live_head() -> tuple[dict, dict]:
    """Weights for four heads of dim 8 where only head 0 has queries, keys and values, and for
    one head of dim 32 that computes the same: head 0's rotary pair (i, i + 4), at the angle
    t·10000^(-i/4), is the pair (4i, 4i + 16) of a 32-dim head, and queries twice as large make
    up for sqrt(32) = 2·sqrt(8). The values need no move: they are not rotated."""
    four, one = tensors(SPEC), tensors(SPEC)
    pairs = [(i, 4 * i) for i in range(4)] + [(i + 4, 4 * i + 16) for i in range(4)]
    for i in range(SPEC.layers):
        for name, factor in (("wq", 2.0), ("wk", 1.0)):
            w = four[f"layers.{i}.{name}"]
            w[:, 8:] = 0
            one[f"layers.{i}.{name}"] = torch.zeros_like(w)
            for col, to in pairs:
                one[f"layers.{i}.{name}"][:, to] = factor * w[:, col]
        four[f"layers.{i}.wv"][:, 8:] = 0
        one[f"layers.{i}.wv"] = four[f"layers.{i}.wv"].clone()
    return four, one


@grade("each head must divide its scores by the square root of its own head dim: one live head "
       "of four must match a single head of dim D with doubled queries", hint="attention")
def test_scores_scale_with_the_head_dim(impl):
    # One token per call, both models alike: whatever a mistake does to positions or to the
    # split of a longer chunk, it does to both, and only the scale tells them apart.
    four_w, one_w = one_live_head()
    four, one = impl.TinyGPT(four_w, 4), impl.TinyGPT(one_w, 1)
    ids = torch.tensor(PROMPTS)
    four_cache = one_cache = None
    for t in range(ids.shape[1]):
        got, four_cache = four.forward(ids[:, t:t + 1], None, four_cache)
        want, one_cache = one.forward(ids[:, t:t + 1], None, one_cache)
        gap = (got - want).abs().max().item()
        assert gap <= TOL, f"step {t}: off by {gap:.3g}"


@grade("with wq zero, several heads must match the plain forward, each on its own columns",
       hint="heads")
def test_four_heads_match_the_plain_forward(impl):
    # Every score is 0, so each head averages its own columns of the values: the split and the
    # merge of the heads show, the scale and the rotary play no part.
    spec = Spec(n_heads=4, zero=("wq",))
    logits, _ = model(impl, spec).forward(torch.tensor(PROMPTS))
    for row, ids in zip(logits, PROMPTS, strict=True):
        assert_close(row, plain(spec, tuple(ids)))


@grade("float32 weights must give float64 logits and caches, as float64 weights do",
       hint="dtype")
def test_float32_weights_are_converted(impl):
    ids = torch.tensor(PROMPTS)
    rounded = tensors(SPEC, torch.float32)
    want, _ = impl.TinyGPT({k: t.double() for k, t in rounded.items()}, 4).forward(ids)
    got, cache = impl.TinyGPT(rounded, 4).forward(ids)
    assert got.dtype == torch.float64
    assert all(t.dtype == torch.float64 for pair in cache for t in pair)
    assert_close(got, want.numpy())


@grade("building the model must leave the caller's weight tensors as they were", hint="inputs")
def test_the_callers_weights_are_untouched(impl):
    given_weights = tensors(SPEC, torch.float32)
    kept = {key: (t, t.clone()) for key, t in given_weights.items()}
    impl.TinyGPT(given_weights, 4).forward(torch.tensor(PROMPTS))
    assert given_weights.keys() == kept.keys()
    for key, (t, copy) in kept.items():
        assert given_weights[key] is t and t.dtype == torch.float32 and torch.equal(t, copy), key


@grade("the cache must grow along time and keep its first steps", hint="cache")
def test_the_cache_grows_by_one_step(impl):
    gpt = model(impl)
    mask = torch.tensor([[0, 1, 1, 1, 1], [1, 1, 1, 1, 1]])
    _, first = gpt.forward(torch.tensor(PROMPTS[:, :5]), mask)
    assert len(first) == 2
    assert all(tuple(t.shape) == (2, 4, 5, 8) and t.dtype == torch.float64
               for pair in first for t in pair)
    grown_mask = torch.cat([mask, torch.ones(2, 1, dtype=mask.dtype)], dim=1)
    _, second = gpt.forward(torch.tensor(PROMPTS[:, 5:6]), grown_mask, first)
    assert len(second) == 2
    for (k0, v0), (k1, v1) in zip(first, second, strict=True):
        assert k1.shape == v1.shape == (2, 4, 6, 8)
        assert identical(k1[:, :, :5], k0) and identical(v1[:, :, :5], v0)


@grade("a padded batch fed as a prefill, then one token per call on the cache, must give the "
       "logits of one forward over it", hint="cache")
def test_padded_decoding_on_the_cache(impl):
    # With wq zero, attention is the mean of the values each query may see: a step kept in the
    # wrong column of the cache shows, and positions and the scale of the scores play no part.
    gpt = model(impl, MEANS)
    batch = Batch(PADDED.ids, PADDED.mask, [3, 1, 1, 1, 1])
    assert_same_real_logits(fed_logits(gpt, batch), fed_logits(gpt, one_shot(batch)), batch.mask)


@grade("under any mask, a prefill then one token per call on the cache must give the logits of "
       "one forward over the whole batch", hint="cache")
@examples(60)
@given(batches("decode"))
def test_any_mask_decoding_on_the_cache(impl, batch):
    gpt = model(impl, MEANS)
    assert_same_real_logits(fed_logits(gpt, batch), fed_logits(gpt, one_shot(batch)), batch.mask)


@grade("decoding token by token with the cache must give the full forward's logits",
       hint="positions")
def test_decoding_on_the_cache(impl):
    # No mask: None means all ones, over the cached steps too. One head, so that the head split
    # is the same for a chunk of one token as for seven.
    gpt = model(impl, ONE_HEAD)
    ids = torch.tensor(PROMPTS)
    full, _ = gpt.forward(ids)
    _, cache = gpt.forward(ids[:, :3])
    for t in range(3, ids.shape[1]):
        logits, cache = gpt.forward(ids[:, t:t + 1], None, cache)
        assert logits.shape == (2, 1, 48)
        assert_close(logits[:, 0], full[:, t].detach().cpu().numpy())


@grade("a model of one layer, or of three, must take the cache it returned and give the full "
       "forward's logits token by token", hint="cache")
@pytest.mark.parametrize("layers", [1, 3])
def test_decoding_on_the_cache_of_other_depths(impl, layers):
    # The other cache tests use two layers. With wq zero, positions and the scale of the scores
    # play no part: what shows is that a cache of L pairs is taken back, whatever L.
    gpt = model(impl, Spec(n_heads=1, layers=layers, zero=("wq",)))
    ids = torch.tensor(PROMPTS)
    full, _ = gpt.forward(ids)
    _, cache = gpt.forward(ids[:, :4])
    for t in range(4, ids.shape[1]):
        logits, cache = gpt.forward(ids[:, t:t + 1], None, cache)
        assert len(cache) == layers
        assert_close(logits[:, 0], full[:, t].detach().cpu().numpy())


@grade("padded rows must give finite logits, each row its own", hint="masks")
def test_padded_rows(impl):
    gpt = model(impl, ONE_HEAD)
    logits = fed_logits(gpt, PADDED)
    assert np.isfinite(logits).all()
    assert_rows_match(gpt, PADDED.ids, PADDED.mask, logits)


@grade("under any mask, one forward must give finite logits and each row's plain forward at "
       "its real positions", hint="masks")
@examples(60)
@given(batches("one"))
def test_any_mask_in_one_forward(impl, batch):
    gpt = model(impl, ONE_HEAD)
    logits = fed_logits(gpt, batch)
    assert np.isfinite(logits).all()
    assert_rows_match(gpt, batch.ids, batch.mask, logits)


@grade("every returned cache must be L float64 pairs (B, H, S, hd) that start with the cache "
       "passed in", hint="cache")
@examples(40)
@given(batches("decode"))
def test_every_cache_grows_from_the_last(impl, batch):
    rows = len(batch.ids)
    for step in feed(model(impl), batch):
        end = step.start + step.logits.shape[1]
        assert len(step.cache_out) == 2
        for i, pair in enumerate(step.cache_out):
            assert len(pair) == 2
            for j, t in enumerate(pair):
                assert t.dtype == torch.float64 and tuple(t.shape) == (rows, 4, end, 8)
                if step.cache_in is not None:
                    assert identical(t[:, :, :step.start], step.cache_in[i][j])


@grade("forward must leave the cache passed in as it was", hint="cache")
@examples(40)
@given(batches("decode"))
def test_the_cache_passed_in_is_untouched(impl, batch):
    for step in feed(model(impl), batch):
        if step.cache_in is None:
            continue
        assert len(step.cache_in) == len(step.snapshot)
        for pair, (kept, copies) in zip(step.cache_in, step.snapshot, strict=True):
            assert pair is kept and all(identical(t, c) for t, c in zip(pair, copies, strict=True))


@grade("ids at pad positions must not change any real logit", hint="masks")
@examples(40)
@given(batches("one"))
def test_pad_ids_change_nothing(impl, batch):
    gpt = model(impl, ONE_HEAD)
    other = Batch(np.where(batch.mask == 1, batch.ids, (batch.ids + 7) % 48), batch.mask,
                  batch.sizes, batch.mask_dtype, batch.id_dtype)
    real = batch.mask == 1
    gap = np.abs(fed_logits(gpt, batch)[real] - fed_logits(gpt, other)[real])
    assert gap.size == 0 or gap.max() <= TOL
