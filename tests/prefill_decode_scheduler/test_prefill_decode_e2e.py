"""End to end: the reference scheduler's plans, run on the ToyLM's KV cache, give every request
exactly the tokens the model generates for it alone, at every level.

The ToyLM runs in float64, so a request's greedy tokens do not depend on what it was batched
with: a chunk fed to the wrong sequence, a decode before the prompt was complete, or a recompute
that forgot the generated tokens all show up as wrong tokens.
"""

from __future__ import annotations

import math
import random

import pytest

torch = pytest.importorskip("torch", reason="the ToyLM end-to-end test needs torch")
from devices import DEVICES  # noqa: E402  (needs torch)

from harness.suites.prefill_decode_scheduler.engine import PrefillDecodeEngine  # noqa: E402
from harness.toylm import ToyLM  # noqa: E402

# (name, Scheduler kwargs, whether the run must preempt)
CONFIGS = [
    ("level1", dict(token_budget=32), False),
    ("level1-max-running", dict(token_budget=32, max_running=3), False),
    ("level2-chunked", dict(token_budget=8, chunked_prefill=True), False),
    ("level3-blocks", dict(token_budget=40, num_kv_blocks=10, block_size=4), True),
    ("level3-blocks-chunked", dict(token_budget=8, chunked_prefill=True, num_kv_blocks=9,
                                   block_size=4), True),
]


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def workload(vocab: int, seed: int = 0) -> list[tuple[str, list[int], int]]:
    """18 requests: prompts of 1..24 tokens, 1..10 new tokens each; ids of mixed types."""
    rng = random.Random(seed)
    out = []
    for i in range(18):
        prompt = [rng.randrange(vocab) for _ in range(rng.randint(1, 24))]
        out.append((i if i % 2 else f"r{i}", prompt, rng.randint(1, 10)))
    return out


@pytest.fixture(scope="module", params=DEVICES)
def model_and_solo(request):
    model = ToyLM(seed=0, device=request.param)
    requests = workload(model.vocab_size)
    solo = {rid: model.generate(prompt, m) for rid, prompt, m in requests}
    return model, requests, solo


@pytest.mark.parametrize("name, kwargs, must_preempt", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_batched_tokens_equal_solo_generation(reference, model_and_solo, name, kwargs,
                                              must_preempt):
    model, requests, solo = model_and_solo
    kwargs = dict(kwargs)
    sched = reference.Scheduler(kwargs.pop("token_budget"), **kwargs)
    engine = PrefillDecodeEngine(sched, model)
    # Requests arrive over time: a third up front, then two more every step.
    arrivals = list(requests)
    for rid, prompt, m in arrivals[:6]:
        engine.add_request(rid, prompt, m)
    arrivals = arrivals[6:]
    while arrivals or sched.has_unfinished():
        for rid, prompt, m in arrivals[:2]:
            engine.add_request(rid, prompt, m)
        arrivals = arrivals[2:]
        engine.step()
        assert engine.stats.steps < 2000
    assert engine.outputs == solo
    assert len(engine.cache) == 0, "every finished sequence must be freed"
    assert engine.stats.decode_tokens == sum(m for _, _, m in requests)
    if must_preempt:
        assert engine.stats.preemptions > 0, "no preemption happened: the test proves nothing"
        recomputed = engine.stats.prefill_tokens - sum(len(p) for _, p, _ in requests)
        assert recomputed > 0


def test_workload_fits_every_config():
    """The workload is valid everywhere, so the scheduler never has to reject a request."""
    for _, prompt, m in workload(128):
        for _, kw, _ in CONFIGS:
            if not kw.get("chunked_prefill"):
                assert len(prompt) <= kw["token_budget"]
            if "num_kv_blocks" in kw:
                assert math.ceil((len(prompt) + m) / kw["block_size"]) <= kw["num_kv_blocks"]
                if not kw.get("chunked_prefill"):
                    assert len(prompt) + m - 1 <= kw["token_budget"]
