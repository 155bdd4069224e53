"""End to end: the reference on the benchmark's model (V 256, D 128, 4 layers, 4 heads), 32 prompts
of 1 to 16 tokens, 64 new tokens each. Generating them as one left- or right-padded batch on the
cache, one prompt at a time, and by recomputing every sequence from scratch at every step must give
the same tokens; on CUDA too, where a GPU is present, with the logits and the cache on the device
of `embed`."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="the kv_cache_debug end-to-end tests need torch")
from devices import DEVICES  # noqa: E402  (needs torch)

from harness.suites.kv_cache_debug.bench import (  # noqa: E402
    bench_prompts,
    bench_weights,
    recompute,
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")

NEW_TOKENS = 64


@pytest.fixture(scope="module", params=DEVICES)
def device(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def gpt(device, reference):
    return reference.TinyGPT({key: w.to(device) for key, w in bench_weights().items()}, 4)


@pytest.fixture(scope="module")
def prompts() -> list[list[int]]:
    return [p[: 1 + i % 16] for i, p in enumerate(bench_prompts(32, seed=3))]


@pytest.fixture(scope="module")
def recomputed(gpt, prompts) -> list[list[int]]:
    """Each prompt's tokens by recomputing, prompts of one length batched together (no pads)."""
    out = {}
    for length in {len(p) for p in prompts}:
        rows = [i for i, p in enumerate(prompts) if len(p) == length]
        out |= dict(zip(rows, recompute(gpt, [prompts[i] for i in rows], NEW_TOKENS),
                        strict=True))
    return [out[i] for i in range(len(prompts))]


@pytest.mark.parametrize("side", ["left", "right"])
def test_a_padded_batch_on_the_cache_matches_recomputing(gpt, prompts, recomputed, side):
    assert gpt.generate(prompts, NEW_TOKENS, padding_side=side) == recomputed


def test_one_prompt_at_a_time_matches_recomputing(gpt, prompts, recomputed):
    assert [gpt.generate([p], NEW_TOKENS)[0] for p in prompts] == recomputed


def test_the_tokens_are_not_trivial(recomputed):
    """A model that repeats one token everywhere would hide every bug above."""
    assert len({t for row in recomputed for t in row}) > 50
    assert len({tuple(row) for row in recomputed}) == len(recomputed)


def test_logits_and_cache_live_on_the_device_of_embed(gpt, device):
    logits, cache = gpt.forward(torch.tensor([[1, 2, 3]]))  # ids on the CPU
    assert logits.device.type == device and logits.dtype == torch.float64
    assert all(t.device.type == device and t.dtype == torch.float64 for pair in cache for t in pair)
