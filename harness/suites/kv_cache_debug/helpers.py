"""Shared scaffolding: seeded weights, the oracle memoized, padded batches fed in chunks, a spy on
`forward`, and the Hypothesis strategies of the suite."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
import torch
from hypothesis import settings
from hypothesis import strategies as st

from . import oracle

V, D, FFN = 48, 32, 64
TOL = 1e-9  # the prompt's "rounding within 1e-9"
MASK_DTYPES = (torch.bool, torch.int64, torch.int32)
ID_DTYPES = (torch.int64, torch.int32)


@dataclass(frozen=True)
class Spec:
    """A seeded model: uniform weights, logits around 10. `zero` names layer weights set to 0
    (in every layer), for the golden cases worked out by hand."""

    n_heads: int = 4
    layers: int = 2
    seed: int = 0
    zero: tuple[str, ...] = ()


SPEC = Spec()  # the model most tests use: 4 heads, 2 layers
# One head: a padded, batched or cached run meets the same columns as the row alone, whatever
# the head split. With wq zero every score is 0 too: attention is the mean of the values a query
# may see, so only which keys it sees counts, not their positions or the scale of the scores.
ONE_HEAD = Spec(n_heads=1)
MEANS = Spec(n_heads=1, zero=("wq",))


@functools.cache
def weights(spec: Spec) -> dict[str, np.ndarray]:
    """NumPy float64 weights; shared by every test, so never modified."""
    rng = np.random.default_rng(spec.seed)

    def u(bound: float, *shape: int, centre: float = 0.0) -> np.ndarray:
        return rng.uniform(centre - bound, centre + bound, shape)

    w = {"embed": u(2, V, D)}
    for i in range(spec.layers):
        layer = {"ln1.w": u(0.5, D, centre=1), "ln1.b": u(0.3, D), "wq": u(0.5, D, D),
                 "wk": u(0.5, D, D), "wv": u(0.5, D, D), "wo": u(0.2, D, D),
                 "ln2.w": u(0.5, D, centre=1), "ln2.b": u(0.3, D), "w1": u(0.3, D, FFN),
                 "b1": u(0.3, FFN), "w2": u(0.2, FFN, D), "b2": u(0.3, D)}
        for name in spec.zero:
            layer[name] = np.zeros_like(layer[name])
        w |= {f"layers.{i}.{name}": t for name, t in layer.items()}
    return w | {"ln_f.w": u(0.5, D, centre=1), "ln_f.b": u(0.3, D), "head": u(3, D, V)}


def tensors(spec: Spec, dtype: torch.dtype = torch.float64) -> dict[str, torch.Tensor]:
    """Fresh torch copies of the weights, the caller's to keep or to check afterwards."""
    return {key: torch.tensor(w, dtype=dtype) for key, w in weights(spec).items()}


def model(impl, spec: Spec = SPEC):
    return impl.TinyGPT(tensors(spec), spec.n_heads)


@functools.cache
def plain(spec: Spec, tokens: tuple[int, ...]) -> np.ndarray:
    """(n, V): the oracle's logits of `tokens` as a sequence on its own."""
    return oracle.logits(weights(spec), spec.n_heads, list(tokens))


def greedy(spec: Spec, prompt: list[int], n: int, eos: int | None = None) -> list[int]:
    """What `prompt` alone generates, by full recompute: the first maximum on ties."""
    out: list[int] = []
    while len(out) < n and (not out or out[-1] != eos):
        out.append(int(np.argmax(plain(spec, (*prompt, *out))[-1])))
    return out


# The cache, padding, chunk and decoding tests compare the learner's model with itself: a batched,
# padded or cached run against the same model's forward of each sequence alone or of the whole
# batch at once, and generate against its own forward called as the prompt says. A mistake in the
# model's arithmetic then fails only the golden tests (against the oracle), and a cache, mask or
# decoding mistake only the tests of its own kind. Where another part of the model would still
# show, the test's model hides it: one head (ONE_HEAD) or queries of zero (MEANS).

def own(gpt, tokens: tuple[int, ...] | list[int]) -> np.ndarray:
    """(n, V): the learner's own forward of `tokens` as one row, no mask, no cache."""
    logits, _ = gpt.forward(torch.tensor([list(tokens)]))
    return logits[0].detach().cpu().numpy()


def decoded(gpt, prompts: list[list[int]], n: int, eos: int | None = None,
            side: str = "left") -> list[list[int]]:
    """What `generate` must return on the model's own `forward`, called as the prompt says: the
    padded prompts without a cache, each row's first token from its last real position, then one
    token per call with the grown mask and the cache, greedy (torch's argmax takes the first
    maximum). A mistake in `forward` then shows in the forward tests, not in these: generate is
    checked against the model it is given. (Pad id 0 and finished rows kept, fed their last token:
    both are the learner's choice, and a model that honours the mask cannot tell.)"""
    out: list[list[int]] = [[] for _ in prompts]
    if n == 0:
        return out
    width = max(map(len, prompts))

    def pad(row: list[int]) -> list[int]:
        gap = [0] * (width - len(row))
        return gap + row if side == "left" else row + gap

    mask = torch.tensor([pad([1] * len(p)) for p in prompts], dtype=torch.bool)
    logits, cache = gpt.forward(torch.tensor([pad(p) for p in prompts]), mask)
    last = torch.tensor([width - 1 if side == "left" else len(p) - 1 for p in prompts])
    tokens = logits.detach().cpu()[torch.arange(len(prompts)), last].argmax(-1)
    live = torch.ones(len(prompts), dtype=torch.bool)
    for step in range(n):
        for row in live.nonzero()[:, 0].tolist():
            out[row].append(int(tokens[row]))
        if eos is not None:
            live &= tokens != eos
        if step == n - 1 or not live.any():
            break
        mask = torch.cat([mask, live[:, None]], dim=1)
        logits, cache = gpt.forward(tokens[:, None], mask, cache)
        tokens = logits.detach().cpu()[:, -1].argmax(-1)
    return out


def assert_rows_match(gpt, ids: np.ndarray, mask: np.ndarray, logits: np.ndarray) -> None:
    """At every real position, each row's logits are those the same model gives its real tokens
    alone, unpadded and without a cache."""
    for b in range(len(ids)):
        real = mask[b].astype(bool)
        if real.any():
            want = own(gpt, tuple(ids[b][real].tolist()))
            gap = np.abs(logits[b][real] - want).max()
            assert gap <= TOL, f"row {b}: real positions off the row's own forward by {gap:.3g}"


def assert_same_real_logits(got: np.ndarray, want: np.ndarray, mask: np.ndarray) -> None:
    """Two runs of one model agree at every real position, NaN matching NaN: a NaN is the
    finiteness tests' failure, not this one's."""
    real = mask == 1
    a, b = got[real], want[real]
    same = (np.abs(a - b) <= TOL) | (np.isnan(a) & np.isnan(b))
    if not same.all():
        gap = np.nanmax(np.abs(a - b)) if np.isfinite(a - b).any() else float("nan")
        assert same.all(), f"{(~same).sum()} real logits differ, by up to {gap:.3g}"


def identical(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal value for value, NaN matching NaN: a NaN in the cache is another test's failure."""
    return a.shape == b.shape and bool(((a == b) | (a.isnan() & b.isnan())).all())


@dataclass
class Batch:
    """Ids and mask (B, S) as NumPy, the dtypes to pass them in, and the chunk sizes to feed."""

    ids: np.ndarray
    mask: np.ndarray
    sizes: list[int]
    mask_dtype: torch.dtype = torch.bool
    id_dtype: torch.dtype = torch.int64

    def mask_tensor(self, end: int) -> torch.Tensor:
        return torch.tensor(self.mask[:, :end], dtype=self.mask_dtype)


@dataclass
class Step:
    """One call of `forward` while a batch is fed: what went in and what came out."""

    start: int  # cached steps before the call
    cache_in: object
    logits: torch.Tensor
    cache_out: object
    snapshot: list = field(default_factory=list)  # the cache passed in, as it was


def snapshot(cache) -> list:
    return [] if cache is None else [(pair, [t.clone() for t in pair]) for pair in cache]


def feed(gpt, batch: Batch):
    """Feed the batch's columns chunk by chunk, each call on the cache the last one returned."""
    cache, start = None, 0
    for size in batch.sizes:
        ids = torch.tensor(batch.ids[:, start:start + size], dtype=batch.id_dtype)
        before = snapshot(cache)
        logits, out = gpt.forward(ids, batch.mask_tensor(start + size), cache)
        yield Step(start, cache, logits, out, before)
        cache, start = out, start + size


def one_shot(batch: Batch) -> Batch:
    """The same batch in a single call, without a cache."""
    return Batch(batch.ids, batch.mask, [batch.ids.shape[1]], batch.mask_dtype, batch.id_dtype)


def fed_logits(gpt, batch: Batch) -> np.ndarray:
    """(B, S, V): every chunk's logits, side by side."""
    return np.concatenate([s.logits.detach().cpu().numpy() for s in feed(gpt, batch)], axis=1)


# --- strategies ---------------------------------------------------------------------------------

def examples(n: int) -> settings:
    """n examples; one failure reported (a learner's file often fails in several ways at once,
    and one plain verdict reads better than a group of them)."""
    return settings(max_examples=n, report_multiple_bugs=False)


def row_mask(draw, steps: int) -> list[int]:
    """Left or right padding (all pads included), or pads anywhere."""
    kind = draw(st.sampled_from(("left", "right", "anywhere")))
    if kind == "anywhere":
        return draw(st.lists(st.integers(0, 1), min_size=steps, max_size=steps))
    pads = draw(st.integers(0, steps))
    real = [1] * (steps - pads)
    return [0] * pads + real if kind == "left" else real + [0] * pads


@st.composite
def batches(draw, chunks: str) -> Batch:
    """Up to 3 rows of up to 7 steps. chunks="one": a single call; "decode": a prefill, then one
    token per call; "any": any split into chunks."""
    rows, steps = draw(st.integers(1, 3)), draw(st.integers(1, 7))
    mask = np.array([row_mask(draw, steps) for _ in range(rows)])
    ids = np.array(draw(st.lists(st.lists(st.integers(0, V - 1), min_size=steps,
                                          max_size=steps), min_size=rows, max_size=rows)))
    if chunks == "one":
        sizes = [steps]
    elif chunks == "decode":
        first = draw(st.integers(1, steps))
        sizes = [first] + [1] * (steps - first)
    else:
        cuts = draw(st.sets(st.integers(1, steps - 1))) if steps > 1 else set()
        bounds = [0, *sorted(cuts), steps]
        sizes = [b - a for a, b in zip(bounds, bounds[1:], strict=False)]
    return Batch(ids, mask, sizes, draw(st.sampled_from(MASK_DTYPES)),
                 draw(st.sampled_from(ID_DTYPES)))


prompt_lists = st.lists(st.lists(st.integers(0, V - 1), min_size=1, max_size=6),
                        min_size=1, max_size=4)
sides = st.sampled_from(("left", "right"))


# --- a spy on forward ---------------------------------------------------------------------------

@dataclass
class Call:
    ids: torch.Tensor
    mask: torch.Tensor | None
    cached: int | None  # steps in the cache passed in; None without one


def spy(gpt) -> list[Call]:
    """Record every call `generate` makes to `gpt.forward`; the list fills as it runs."""
    calls: list[Call] = []
    inner = gpt.forward

    def forward(ids, attention_mask=None, cache=None):
        mask = None if attention_mask is None else attention_mask.clone()
        calls.append(Call(ids.clone(), mask, None if cache is None else cache[0][0].shape[2]))
        return inner(ids, attention_mask, cache)

    gpt.forward = forward
    return calls
