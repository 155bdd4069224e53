"""End to end: the reference engines on the ToyLM give every request what it gets alone."""

import random

import pytest

torch = pytest.importorskip("torch", reason="the ToyLM end-to-end tests need torch")

from devices import DEVICES  # noqa: E402

from harness.toylm import ToyLM  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module", params=DEVICES)
def case(request):
    """A ToyLM and requests whose stop token / stop sequence come from their own greedy output,
    so the stop rules really fire; `want` is ToyLM.generate for each request alone."""
    lm = ToyLM(seed=0, device=request.param)
    rng = random.Random(0)
    requests, want = [], {}
    for i in range(12):
        prompt = [rng.randrange(lm.vocab_size) for _ in range(rng.randint(1, 8))]
        max_tokens = rng.choice([0, 1, 6, 11, 16])
        raw = lm.generate(prompt, max_tokens)
        stop_token = stop_sequence = None
        if raw and i % 3 == 1:
            stop_token = rng.choice(raw)
        if len(raw) >= 3 and i % 3 == 2:
            j = rng.randrange(len(raw) - 1)
            stop_sequence = raw[j : j + 2]
        requests.append((i, prompt, max_tokens, stop_token, stop_sequence))
        want[i] = lm.generate(prompt, max_tokens, stop_token, stop_sequence)
    return lm, requests, want


def decode(reference, engine, requests):
    got = {}
    for args in requests:
        engine.submit(reference.Request(*args),
                      lambda c: got.setdefault(c.request_id, []).append(c))
    engine.run()
    assert sorted(got) == sorted(r[0] for r in requests)
    assert all(len(cs) == 1 for cs in got.values())
    return {rid: cs[0].tokens for rid, cs in got.items()}


@pytest.mark.parametrize("batch_size", [1, 4])
def test_decoding_engine_matches_generate(reference, case, batch_size):
    lm, requests, want = case
    assert decode(reference, reference.DecodingEngine(lm.model_next, batch_size), requests) == want


@pytest.mark.parametrize("batch_size", [1, 3, 16])
def test_slot_engine_matches_generate(reference, case, batch_size):
    lm, requests, want = case
    engine = reference.SlotDecodingEngine(lm.slot_cache(batch_size), batch_size)
    assert decode(reference, engine, requests) == want


def test_stop_rules_fired(case):
    """The workload is only a good test if some requests really stop early."""
    lm, requests, want = case
    assert any(len(want[i]) < max_tokens for i, _, max_tokens, *_ in requests)
