"""End to end: the reference scheduler in front of a ToyLM; batched answers equal solo ones.

Many threads submit prompts of different lengths at once; run_batch is one ToyLM forward (or a
few greedy steps) over the whole batch. The ToyLM runs in float64, so a request's tokens do not
depend on what it was batched with, and any mix-up of responses shows as a wrong token.
"""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

import pytest

torch = pytest.importorskip("torch", reason="the ToyLM end-to-end test needs torch")
from devices import DEVICES  # noqa: E402  (needs torch)

from harness.toylm import ToyLM  # noqa: E402


def prompts(n: int, vocab: int, seed: int = 0) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(vocab) for _ in range(rng.randint(1, 24))] for _ in range(n)]


def serve(reference, run_batch, requests, *, threads: int = 16):
    """Submit every request from `threads` threads at once; return responses and batch sizes."""
    sizes: list[int] = []

    def recorded(batch):
        sizes.append(len(batch))
        return run_batch(batch)

    with reference.BatchScheduler(recorded, max_batch_size=8, max_wait_ms=5) as s:
        with ThreadPoolExecutor(threads) as pool:
            responses = list(pool.map(s.submit, requests))
    return responses, sizes


@pytest.mark.parametrize("device", DEVICES)
def test_next_token_matches_solo_forward(reference, device):
    model = ToyLM(seed=0, device=device)
    requests = prompts(32, model.vocab_size)
    responses, sizes = serve(reference, model.model_next, requests)
    solo = [model.model_next([p])[0] for p in requests]
    assert responses == solo
    assert max(sizes) > 1, "nothing was batched: the test proves nothing"
    assert max(sizes) <= 8 and sum(sizes) == len(requests)


@pytest.mark.parametrize("device", DEVICES)
def test_greedy_steps_match_solo_generate(reference, device):
    model = ToyLM(seed=0, device=device)
    steps = 3

    def generate_batch(batch: list[list[int]]) -> list[list[int]]:
        prefixes = [list(p) for p in batch]
        for _ in range(steps):
            for prefix, token in zip(prefixes, model.model_next(prefixes), strict=True):
                prefix.append(token)
        return [prefix[len(p):] for prefix, p in zip(prefixes, batch, strict=True)]

    requests = prompts(16, model.vocab_size, seed=1)
    responses, sizes = serve(reference, generate_batch, requests)
    assert responses == [model.generate(p, max_tokens=steps) for p in requests]
    assert max(sizes) > 1
