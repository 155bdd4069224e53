"""End to end: the ToyLM's forward pass rewritten in NumPy on the kata's functions gives the
same greedy tokens as the ToyLM itself, for left- and right-padded prefill batches and for decoding
with slot refill over caches full of stale entries; and a wrong implementation visibly changes
tokens.

The NumPy model reads the ToyLM's float64 weights and runs attention through `pad_batch`,
`position_ids`, `attention(causal=True)` and `decode_step` only, so the pads, the positions and
the stale cache slots are all the kata's to get right.
"""

from __future__ import annotations

import random
from collections import deque

import numpy as np
import pytest

from harness import catalog, mutants
from harness.loader import load_module

torch = pytest.importorskip("torch", reason="the ToyLM end-to-end tests need torch")
from devices import DEVICES  # noqa: E402  (needs torch)

from harness.toylm import ToyLM  # noqa: E402
from harness.toylm.weights import make_weights  # noqa: E402

KATA = catalog.get("padded_attention")
SLOTS, CAPACITY = 4, 24

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def rms_norm(x: np.ndarray) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6)


class NumpyLM:
    """The ToyLM's forward pass (pre-norm, SiLU MLP, learned positions) in NumPy, with the
    attention of a kata implementation."""

    def __init__(self, impl, lm: ToyLM):
        w = make_weights(0, lm.vocab_size, lm.d_model, lm.n_layers, lm.max_context)
        self.impl, self.heads = impl, lm.n_heads
        self.tok, self.pos, self.head = (t.numpy() for t in (w.tok_emb, w.pos_emb, w.head))
        self.layers = [[t.numpy() for t in (x.wqkv, x.wo, x.w_up, x.w_down)] for x in w.layers]

    def split(self, h: np.ndarray) -> list[np.ndarray]:
        """[B, T, 3d] -> q, k, v [B, H, T, d / H]."""
        b, t, _ = h.shape
        parts = h.reshape(b, t, 3, self.heads, -1)
        return [parts[:, :, i].transpose(0, 2, 1, 3) for i in range(3)]

    def block(self, x: np.ndarray, layer: list[np.ndarray], attend) -> np.ndarray:
        wqkv, wo, w_up, w_down = layer
        heads = attend(*self.split(rms_norm(x) @ wqkv))  # [B, H, T, d / H]
        x = x + heads.transpose(0, 2, 1, 3).reshape(x.shape) @ wo
        up = rms_norm(x) @ w_up
        return x + (up / (1 + np.exp(-up))) @ w_down

    def prefill(self, prompts: list[list[int]], side: str) -> list[int]:
        """Greedy next token of each prompt from one padded batch."""
        ids, mask = self.impl.pad_batch(prompts, side=side)
        x = self.tok[ids] + self.pos[self.impl.position_ids(mask)]
        for layer in self.layers:
            x = self.block(x, layer, lambda q, k, v: self.impl.attention(q, k, v, mask,
                                                                        causal=True))
        last = mask.shape[1] - 1 if side == "left" else mask.sum(axis=1) - 1
        return (rms_norm(x[np.arange(len(prompts)), last]) @ self.head).argmax(-1).tolist()

    def decode(self, tokens: list[int], caches, cache_lens: np.ndarray,
               active: np.ndarray) -> list[int]:
        """One token per row at position cache_lens[b]; greedy next token of each row."""
        x = (self.tok[tokens] + self.pos[np.minimum(cache_lens, CAPACITY - 1)])[:, None]
        for layer, (k_cache, v_cache) in zip(self.layers, caches, strict=True):
            x = self.block(x, layer, lambda q, k, v, kc=k_cache, vc=v_cache:
                           self.impl.decode_step(q, k, v, kc, vc, cache_lens, active=active))
        return (rms_norm(x[:, 0]) @ self.head).argmax(-1).tolist()


def serve(model: NumpyLM, requests: list[tuple[list[int], int]]) -> list[list[int]]:
    """Greedy decoding of (prompt, max_tokens) requests in SLOTS slots: prompts are fed one
    token per step, a finished request frees its slot and the next restarts it at cache length
    0 over the old entries. Caches start as NaN, so any read of an unwritten slot shows."""
    d = model.tok.shape[1] // model.heads
    caches = [tuple(np.full((SLOTS, model.heads, CAPACITY, d), np.nan) for _ in range(2))
              for _ in model.layers]
    cache_lens = np.zeros(SLOTS, dtype=np.int64)
    queue, held = deque(enumerate(requests)), [None] * SLOTS  # held[s]: [index, fed, out]
    results: dict[int, list[int]] = {}
    while queue or any(held):
        for s in range(SLOTS):
            if held[s] is None and queue:
                index, _ = queue.popleft()
                held[s], cache_lens[s] = [index, 0, []], 0
        active = np.array([h is not None for h in held])
        feed = []
        for h in held:
            if h is None:
                feed.append(0)
                continue
            prompt = requests[h[0]][0]
            feed.append(prompt[h[1]] if h[1] < len(prompt) else h[2][-1])
        nxt = model.decode(feed, caches, cache_lens, active)
        for s, h in enumerate(held):
            if h is None:
                continue
            cache_lens[s] += 1
            h[1] += 1
            prompt, max_tokens = requests[h[0]]
            if h[1] >= len(prompt):
                h[2].append(nxt[s])
            if len(h[2]) == max_tokens:
                results[h[0]] = h[2]
                held[s] = None
    return [results[i] for i in range(len(requests))]


def prompts(lm: ToyLM, n: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(lm.vocab_size) for _ in range(rng.randint(1, 12))] for _ in range(n)]


@pytest.fixture(scope="module", params=DEVICES)
def lm(request):
    return ToyLM(seed=0, device=request.param)


@pytest.mark.parametrize("side", ["left", "right"])
def test_padded_prefill_matches_the_toylm(reference, lm, side):
    batch = prompts(lm, 8, seed=0)
    assert NumpyLM(reference, lm).prefill(batch, side) == lm.model_next(batch)


def test_decoding_with_slot_refill_matches_generate(reference, lm):
    rng = random.Random(1)
    requests = [(p, rng.randint(1, 8)) for p in prompts(lm, 11, seed=1)]
    want = [lm.generate(p, m) for p, m in requests]
    assert serve(NumpyLM(reference, lm), requests) == want


@pytest.mark.parametrize("name", ["positions_from_columns", "key_mask_dropped",
                                  "values_not_zeroed", "stale_slots_leak",
                                  "decode_skips_its_own_token"])
def test_a_wrong_implementation_changes_tokens(lm, name):
    bad = NumpyLM(load_module(mutants.materialise(KATA, name), f"padded_mutant_{name}"), lm)
    batch = prompts(lm, 8, seed=0)
    rng = random.Random(1)
    requests = [(p, rng.randint(1, 8)) for p in prompts(lm, 11, seed=1)]
    with np.errstate(all="ignore"):  # a leaked NaN is the point
        got = bad.prefill(batch, "left"), serve(bad, requests)
    assert got != (lm.model_next(batch), [lm.generate(p, m) for p, m in requests])
