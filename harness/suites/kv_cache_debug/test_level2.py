"""Level 2: batched greedy generation on the cache, and bad input."""

import copy

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from harness.marks import level

from .helpers import (
    SPEC,
    D,
    Spec,
    V,
    decoded,
    examples,
    greedy,
    model,
    prompt_lists,
    sides,
    spy,
    tensors,
    weights,
)
from .oracle import layer_norm

grade = level(2)

PROMPTS = [[5, 17, 3, 42, 8, 30], [11], [40, 2, 29]]


def alone(prompts: list[list[int]], n: int, eos: int | None = None,
          spec: Spec = SPEC) -> list[list[int]]:
    """What each prompt generates alone, by the oracle: for choosing a case, never as the answer."""
    return [greedy(spec, p, n, eos) for p in prompts]


# The answer is what the model's own forward gives, called as the prompt says generate calls it
# (helpers.decoded): a mistake in forward fails the forward tests, and these tests only the
# mistakes of generate. Each avoids the other aspects: the decode tests pad on the left and have
# no EOS, the first-token tests take one token, the EOS tests use prompts of one length.

@grade("a left-padded batch must generate the greedy tokens of its own forward, called with the "
       "grown mask on the cache", hint="decode")
def test_left_padded_batch(impl):
    gpt = model(impl)
    assert gpt.generate(copy.deepcopy(PROMPTS), 6) == decoded(gpt, PROMPTS, 6)


@grade("generate must pass forward the full mask at every call, one column longer per token",
       hint="decode")
@pytest.mark.parametrize("side", ["left", "right"])
def test_every_call_gets_the_full_mask(impl, side):
    gpt = model(impl)
    calls = spy(gpt)
    gpt.generate(copy.deepcopy(PROMPTS), 4, padding_side=side)
    for j, call in enumerate(calls):
        assert call.mask is not None, f"call {j} had no mask"
        assert tuple(call.mask.shape) == (call.ids.shape[0], 6 + j), f"call {j}"


@grade("with right padding, each row's first new token must come from the logits at its last "
       "real token", hint="first-token")
def test_right_padded_first_tokens(impl):
    gpt = model(impl)
    got = gpt.generate(copy.deepcopy(PROMPTS), 1, padding_side="right")
    assert got == decoded(gpt, PROMPTS, 1, side="right")


@grade("on either side, each row's first new token must come from the logits at its last real "
       "token", hint="first-token")
@examples(60)
@given(prompt_lists, sides)
def test_any_first_tokens(impl, prompts, side):
    gpt = model(impl)
    got = gpt.generate(copy.deepcopy(prompts), 1, padding_side=side)
    assert got == decoded(gpt, prompts, 1, side=side)


@grade("with wo, w2 and b2 zero and right padding, greedy must step from each row's last real "
       "token through each token's best next token", hint="first-token")
def test_blockless_greedy_follows_the_table(impl):
    # No block adds anything, so attention plays no part: what shows is where the first token is
    # read and that greedy follows the table.
    spec = Spec(zero=("wo", "w2", "b2"))
    w = weights(spec)
    best = (layer_norm(w["embed"], w["ln_f.w"], w["ln_f.b"]) @ w["head"]).argmax(axis=1)
    want = []
    for p in PROMPTS:
        tokens = [int(best[p[-1]])]
        while len(tokens) < 5:
            tokens.append(int(best[tokens[-1]]))
        want.append(tokens)
    gpt = model(impl, spec)
    assert gpt.generate(copy.deepcopy(PROMPTS), 5, padding_side="right") == want


EVEN = [[5, 17, 3], [11, 0, 47], [40, 2, 29]]  # one length: no pads


@grade("a row must end right after its first EOS", hint="eos")
def test_a_row_ends_at_its_eos(impl):
    free = alone(EVEN, 8)
    eos = free[1][1]  # row 1 emits it second; it ends there, the others run on to 8 tokens
    want = alone(EVEN, 8, eos)
    assert want[1] == free[1][:2] and len(want[0]) == len(want[2]) == 8
    gpt = model(impl)
    assert gpt.generate(copy.deepcopy(EVEN), 8, eos) == decoded(gpt, EVEN, 8, eos)


@grade("with head zero every logit ties, and every new token must be id 0", hint="greedy")
def test_ties_go_to_the_lowest_id(impl):
    w = {**tensors(SPEC), "head": torch.zeros(D, 48)}
    assert impl.TinyGPT(w, 4).generate(copy.deepcopy(PROMPTS), 3) == [[0] * 3] * 3


@grade("generate must return Python ints", hint="decode")
def test_tokens_are_python_ints(impl):
    out = model(impl).generate(copy.deepcopy(PROMPTS), 2)
    assert isinstance(out, list) and all(isinstance(row, list) for row in out)
    assert all(isinstance(t, int) and not isinstance(t, bool) for row in out for t in row)


@st.composite
def even_generations(draw):
    """Prompts of one length, max_new_tokens, and an eos_id: any id, or the first token a
    prompt emits, so that its row ends while the others may go on."""
    length = draw(st.integers(1, 6))
    prompts = draw(st.lists(st.lists(st.integers(0, V - 1), min_size=length, max_size=length),
                            min_size=1, max_size=4))
    n = draw(st.integers(1, 7))
    if draw(st.booleans()):
        return prompts, n, draw(st.integers(0, V - 1))
    return prompts, n, greedy(SPEC, draw(st.sampled_from(prompts)), 1)[0]


@grade("in a batch of prompts of one length, each row must end right after its first EOS",
       hint="eos")
@examples(60)
@given(even_generations())
def test_any_batch_ends_rows_at_their_eos(impl, case):
    prompts, n, eos = case
    gpt = model(impl)
    got = gpt.generate(copy.deepcopy(prompts), n, eos)
    assert got == decoded(gpt, prompts, n, eos)


@st.composite
def generations(draw):
    """Prompts, max_new_tokens, padding side and eos_id: None, any id, or one a prompt emits."""
    prompts, n, side = draw(prompt_lists), draw(st.integers(0, 7)), draw(sides)
    kind = draw(st.sampled_from(("none", "any", "emitted")))
    eos = None
    if kind == "any":
        eos = draw(st.integers(0, 47))
    elif kind == "emitted" and n:
        out = greedy(SPEC, draw(st.sampled_from(prompts)), n)
        eos = draw(st.sampled_from(out))
    return prompts, n, side, eos


@grade("any left-padded batch without EOS must generate the greedy tokens of its own forward, "
       "called with the grown mask on the cache", hint="decode")
@examples(60)
@given(prompt_lists, st.integers(0, 7))
def test_any_left_padded_batch(impl, prompts, n):
    gpt = model(impl)
    assert gpt.generate(copy.deepcopy(prompts), n) == decoded(gpt, prompts, n)


@grade("generate must leave the prompts as they were", hint="inputs")
@pytest.mark.parametrize("side", ["left", "right"])
def test_prompts_are_untouched(impl, side):
    prompts = copy.deepcopy(PROMPTS)
    rows = list(prompts)
    model(impl).generate(prompts, 3, padding_side=side)
    assert prompts == PROMPTS and all(a is b for a, b in zip(prompts, rows, strict=True))


@grade("generate must call forward once on the padded prompts, then once per new token with "
       "one column on the previous cache, and stop when every row has ended", hint="calls")
@examples(40)
@given(generations())
def test_the_calls_generate_makes(impl, case):
    prompts, n, side, eos = case
    gpt = model(impl)
    calls = spy(gpt)
    out = gpt.generate(copy.deepcopy(prompts), n, eos, padding_side=side)
    assert len(calls) == max(map(len, out))
    if not calls:
        return
    first, width = calls[0], max(map(len, prompts))
    assert first.cached is None and tuple(first.ids.shape) == (len(prompts), width)
    if first.mask is None:  # a call without its mask is the full-mask test's failure
        return
    for p, ids, mask in zip(prompts, first.ids.tolist(), first.mask.tolist(), strict=True):
        real = [1] * len(p)
        pads = [0] * (width - len(p))
        assert [int(m) for m in mask] == (pads + real if side == "left" else real + pads)
        assert [t for t, m in zip(ids, mask, strict=True) if m] == p
    steps = width
    for call in calls[1:]:
        rows = call.ids.shape[0]
        assert tuple(call.ids.shape) == (rows, 1) and 1 <= rows <= len(prompts)
        assert call.cached == steps
        assert call.mask is None or tuple(call.mask.shape) == (rows, steps + 1)
        steps += 1


@grade("after its 300th new token, generate must make no further call", hint="calls")
def test_no_call_after_the_300th_token(impl):
    # Past 256, two equal ints are not one object in CPython: a step counter compared with `is`
    # shows only here.
    gpt = model(impl)
    calls = spy(gpt)
    out = gpt.generate([[5, 17, 3]], 300)
    assert len(out[0]) == 300
    assert len(calls) == 300, f"{len(calls)} calls for 300 tokens"


@grade("a padding_side equal to \"left\" but built at run time must pad on the left",
       hint="calls")
def test_a_built_left_pads_on_the_left(impl):
    side = "".join(["le", "ft"])  # equal to the literal "left", but not the same object
    gpt = model(impl)
    calls = spy(gpt)
    gpt.generate(copy.deepcopy(PROMPTS), 1, padding_side=side)
    width = max(map(len, PROMPTS))
    want = [[0] * (width - len(p)) + [1] * len(p) for p in PROMPTS]
    assert calls[0].mask is not None, "the first call had no mask"
    assert [[int(m) for m in row] for row in calls[0].mask.tolist()] == want


@grade("each decode call's new mask column must be 1 for a row still generating and 0 for a row "
       "that has ended", hint="calls")
def test_the_new_mask_column_marks_the_rows_still_generating(impl):
    # Row 0 ends at its third token, the others go on to the fourth: the last call feeds row 0's
    # EOS, so what a row does after its EOS (the EOS tests' concern) never shows here.
    eos = greedy(SPEC, PROMPTS[0], 3)[2]
    want = alone(PROMPTS, 4, eos)
    assert len(want[0]) == 3 and len(want[1]) == len(want[2]) == 4
    gpt = model(impl)
    calls = spy(gpt)
    out = gpt.generate(copy.deepcopy(PROMPTS), 4, eos)
    for j, call in enumerate(calls[1:], start=1):  # call j feeds each row's j-th new token
        if call.mask is None:  # the full-mask test's failure
            continue
        going = [1 if len(row) > j else 0 for row in out]
        column = [int(m) for m in call.mask[:, -1].tolist()]
        if len(column) == len(PROMPTS):  # every row kept: each row's own entry
            assert column == going, f"decode call {j}: new column {column}, want {going}"
        else:  # ended rows dropped: the kept ones must include every live row, each with a 1
            assert sum(column) == sum(going), f"decode call {j}: new column {column}"


# --- bad input ----------------------------------------------------------------------------------

def weights_without(key: str) -> dict:
    w = tensors(SPEC)
    del w[key]
    return w


def weights_with(key: str, shape: tuple[int, ...]) -> dict:
    return {**tensors(SPEC), key: torch.zeros(shape)}


BAD_MODELS = {  # each breaks one rule: () -> (weights, n_heads)
    "n_heads 0": lambda: (tensors(SPEC), 0),
    "n_heads -4": lambda: (tensors(SPEC), -4),
    "n_heads a float": lambda: (tensors(SPEC), 4.0),
    "n_heads a bool": lambda: (tensors(SPEC), True),
    "n_heads not dividing D": lambda: (tensors(SPEC), 3),
    "an odd head dim": lambda: (tensors(SPEC), 32),
    "no embed": lambda: (weights_without("embed"), 4),
    "no head": lambda: (weights_without("head"), 4),
    "no ln_f.b": lambda: (weights_without("ln_f.b"), 4),
    "no layers.0.w1": lambda: (weights_without("layers.0.w1"), 4),
    "no layers.1.wv": lambda: (weights_without("layers.1.wv"), 4),
    "no layers.1.ln2.w": lambda: (weights_without("layers.1.ln2.w"), 4),
    "embed 1-D": lambda: (weights_with("embed", (48 * D,)), 4),
    "head (D, V+1)": lambda: (weights_with("head", (D, 49)), 4),
    "ln_f.w (D+1)": lambda: (weights_with("ln_f.w", (D + 1,)), 4),
    "wq (D, D+1)": lambda: (weights_with("layers.0.wq", (D, D + 1)), 4),
    "wo (D+1, D)": lambda: (weights_with("layers.1.wo", (D + 1, D)), 4),
    "b1 (F+1)": lambda: (weights_with("layers.1.b1", (65,)), 4),
    "w2 (F, D) of another F": lambda: (weights_with("layers.1.w2", (65, D)), 4),
    "ln1.b (D, 1)": lambda: (weights_with("layers.0.ln1.b", (D, 1)), 4),
    "layers.0.w1 1-D": lambda: (weights_with("layers.0.w1", (D * 64,)), 4),
    "head (D, V-1)": lambda: (weights_with("head", (D, 47)), 4),
}


@grade("the constructor must raise ValueError for a bad n_heads or a missing or mis-shaped "
       "weight", hint="errors")
@pytest.mark.parametrize("case", BAD_MODELS)
def test_bad_models(impl, case):
    w, n_heads = BAD_MODELS[case]()
    with pytest.raises(ValueError):
        impl.TinyGPT(w, n_heads)


def cache_of(gpt, rows: int = 2, steps: int = 3):
    return gpt.forward(torch.zeros(rows, steps, dtype=torch.long))[1]


def ids() -> torch.Tensor:
    return torch.tensor([[1, 2], [3, 4]])


def ones(rows: int, cols: int) -> torch.Tensor:
    return torch.ones(rows, cols, dtype=torch.long)


def layer0(cache, change) -> list:
    """The cache with layer 0's pair replaced by change(k, v)."""
    return [change(*cache[0]), *cache[1:]]


def every_layer(cache, change) -> list:
    """The cache with each layer's pair replaced by change(k, v): the layers still agree."""
    return [change(k, v) for k, v in cache]


BAD_FORWARDS = {  # each breaks one rule: forward's arguments, given a cache of 2 rows, 3 steps
    "ids 1-D": lambda c: (torch.tensor([1, 2]),),
    "ids 3-D": lambda c: (ids()[None],),
    "ids float": lambda c: (ids().double(),),
    "ids bool": lambda c: (ids() > 2,),
    "ids a list": lambda c: ([[1, 2], [3, 4]],),
    "no rows": lambda c: (torch.zeros(0, 2, dtype=torch.long),),
    "no steps": lambda c: (torch.zeros(2, 0, dtype=torch.long),),
    "an id of V": lambda c: (torch.tensor([[1, 48]]),),
    "an id of -1": lambda c: (torch.tensor([[-1, 2]]),),
    "an id of V + 1": lambda c: (torch.tensor([[1, 49]]),),
    "a mask of T - 1 columns": lambda c: (ids(), ones(2, 1)),
    "a mask of T + 1 columns": lambda c: (ids(), ones(2, 3)),
    "a mask of another batch": lambda c: (ids(), ones(3, 2)),
    "a mask without the cached columns": lambda c: (ids(), ones(2, 2), c),
    "a float mask": lambda c: (ids(), torch.ones(2, 2)),
    "a mask holding 2": lambda c: (ids(), torch.tensor([[1, 2], [1, 1]])),
    "a mask holding -1": lambda c: (ids(), torch.tensor([[1, 1], [-1, 1]])),
    "a cache of one layer": lambda c: (ids(), None, c[:1]),
    "a cache of three layers": lambda c: (ids(), None, [*c, c[0]]),
    "a cache of another batch": lambda c: (ids()[:1], None, c),
    "a cache of another head count": lambda c: (ids(), None,
                                                layer0(c, lambda k, v: (k[:, :2], v[:, :2]))),
    "a cache of another head dim": lambda c: (ids(), None,
                                              layer0(c, lambda k, v: (k[..., :4], v[..., :4]))),
    "a cache whose k and v differ in length": lambda c: (ids(), None,
                                                         layer0(c, lambda k, v: (k, v[:, :, :2]))),
    "a cache whose layers differ in length": lambda c: (
        ids(), None, layer0(c, lambda k, v: (k[:, :, :2], v[:, :, :2]))),
    "a cache of triples": lambda c: (ids(), None, layer0(c, lambda k, v: (k, v, v))),
    "an empty cache": lambda c: (ids(), None, []),
    "a cache of L pairs and an empty one": lambda c: (ids(), None, [*c, ()]),
    "a cache of a triple and a single": lambda c: (ids(), None,
                                                   [(*c[0], c[0][1]), c[1][:1]]),
    "a cache of four tensors and none": lambda c: (ids(), None, [(*c[0], *c[1]), ()]),
    "a cache of 3-D tensors": lambda c: (ids(), None,
                                         every_layer(c, lambda k, v: (k[..., 0], v[..., 0]))),
    "a cache of 5-D tensors": lambda c: (ids(), None,
                                         every_layer(c, lambda k, v: (k[..., None], v[..., None]))),
    "a cache of fewer rows": lambda c: (ids(), None, every_layer(c, lambda k, v: (k[:1], v[:1]))),
    "a cache of fewer heads in every layer": lambda c: (
        ids(), None, every_layer(c, lambda k, v: (k[:, :2], v[:, :2]))),
    "a cache of a smaller head dim in every layer": lambda c: (
        ids(), None, every_layer(c, lambda k, v: (k[..., :4], v[..., :4]))),
    "a cache of a larger head dim in every layer": lambda c: (
        ids(), None, every_layer(c, lambda k, v: (torch.cat([k, k], -1), torch.cat([v, v], -1)))),
}


@grade("forward must raise ValueError for bad ids, masks or caches", hint="errors")
@pytest.mark.parametrize("case", BAD_FORWARDS)
def test_bad_forwards(impl, case):
    gpt = model(impl)
    args = BAD_FORWARDS[case](cache_of(gpt))
    with pytest.raises(ValueError):
        gpt.forward(*args)


BAD_GENERATES = {  # each breaks one rule: (prompts, max_new_tokens, eos_id, padding_side)
    "prompts None": (None, 2, None, "left"),
    "prompts a flat list": ([1, 2], 2, None, "left"),
    "no prompts": ([], 2, None, "left"),
    "an empty prompt": ([[1, 2], []], 2, None, "left"),
    "a prompt id of V": ([[1, 48]], 2, None, "left"),
    "a prompt id of -1": ([[1, 2], [-1]], 2, None, "left"),
    "a prompt id of V + 1": ([[1, 2], [49]], 2, None, "left"),
    "a float prompt id": ([[1, 2.0]], 2, None, "left"),
    "a bool prompt id": ([[1, True]], 2, None, "left"),
    "a str prompt id": ([["a", 1]], 2, None, "left"),
    "max_new_tokens -1": ([[1, 2]], -1, None, "left"),
    "max_new_tokens a float": ([[1, 2]], 2.0, None, "left"),
    "max_new_tokens a bool": ([[1, 2]], True, None, "left"),
    "max_new_tokens None": ([[1, 2]], None, None, "left"),
    "eos_id V": ([[1, 2]], 2, 48, "left"),
    "eos_id -1": ([[1, 2]], 2, -1, "left"),
    "eos_id V + 1": ([[1, 2]], 2, 49, "left"),
    "eos_id a bool": ([[1, 2]], 2, False, "left"),
    "eos_id a float": ([[1, 2]], 2, 1.0, "left"),
    "padding_side Left": ([[1, 2]], 2, None, "Left"),
    "padding_side both": ([[1, 2]], 2, None, "both"),
    "padding_side None": ([[1, 2]], 2, None, None),
}
# The same faults with max_new_tokens=0, where there is nothing to generate.
BAD_GENERATES |= {f"{name}, 0 tokens": (p, 0, e, s) for name, (p, n, e, s) in
                  BAD_GENERATES.items() if not name.startswith("max_new_tokens")}


@grade("generate must raise ValueError for bad arguments before calling forward, even for 0 "
       "new tokens", hint="errors")
@pytest.mark.parametrize("case", BAD_GENERATES)
def test_bad_generates(impl, case):
    prompts, n, eos, side = BAD_GENERATES[case]
    gpt = model(impl)
    calls = spy(gpt)
    with pytest.raises(ValueError):
        gpt.generate(copy.deepcopy(prompts), n, eos, padding_side=side)
    assert calls == []


@grade("a call that raises must leave its arguments as they were", hint="inputs")
def test_raising_calls_change_nothing(impl):
    weights_given = weights_with("layers.0.wq", (D, D + 1))
    kept = {key: (t, t.clone()) for key, t in weights_given.items()}
    with pytest.raises(ValueError):
        impl.TinyGPT(weights_given, 4)
    assert all(weights_given[k] is t and torch.equal(t, c) for k, (t, c) in kept.items())
    gpt = model(impl)
    cache = cache_of(gpt)
    pairs = list(cache)
    copies = [[t.clone() for t in pair] for pair in cache]
    given_ids, mask = ids(), torch.tensor([[1, 1], [1, 2]])
    with pytest.raises(ValueError):
        gpt.forward(given_ids, ones(2, 5), cache[:1])
    with pytest.raises(ValueError):
        gpt.forward(given_ids, mask)
    assert torch.equal(given_ids, ids())
    assert torch.equal(mask, torch.tensor([[1, 1], [1, 2]]))
    assert all(a is b for a, b in zip(cache, pairs, strict=True))
    assert all(torch.equal(t, c) for pair, cs in zip(cache, copies, strict=True)
               for t, c in zip(pair, cs, strict=True))
    prompts = [[1, 2, 3], [4, 48]]
    with pytest.raises(ValueError):
        gpt.generate(prompts, 2)
    assert prompts == [[1, 2, 3], [4, 48]]

