"""End to end: the reference StreamingRunner on the ToyLM's KV-cached slots, wrapped to crash
on chosen calls and wipe every slot, gives every request what ToyLM.generate gives it alone,
and never delivers a token twice."""

import random

import pytest

torch = pytest.importorskip("torch", reason="the ToyLM end-to-end tests need torch")

from devices import DEVICES  # noqa: E402

from harness.suites.batch_crash_recovery.fakes import CrashingSlots  # noqa: E402
from harness.toylm import ToyLM  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module", params=DEVICES)
def case(request):
    """A ToyLM, 10 requests and `want`: ToyLM.generate for each request alone."""
    lm = ToyLM(seed=0, device=request.param)
    rng = random.Random(0)
    requests = [(i, [rng.randrange(lm.vocab_size) for _ in range(rng.randint(1, 8))],
                 rng.choice([1, 4, 9, 14])) for i in range(10)]
    want = {i: lm.generate(prompt, n) for i, prompt, n in requests}
    return lm, requests, want


def stream(reference, lm, requests, num_slots, max_attempts, **crashes):
    slots = CrashingSlots(reference.WorkerCrash, num_slots, model=lm,
                          inner=lm.slot_cache(num_slots), **crashes)
    runner = reference.StreamingRunner(slots, num_slots=num_slots, max_attempts=max_attempts)
    delivered, outcomes = {}, {}
    for rid, prompt, n in requests:
        runner.submit(rid, prompt, n, lambda r, t: delivered.setdefault(r, []).append(t),
                      lambda o: outcomes.setdefault(o.request_id, []).append(o))
    runner.run()
    assert all(len(v) == 1 for v in outcomes.values()) and len(outcomes) == len(requests)
    return slots, delivered, {rid: v[0] for rid, v in outcomes.items()}


@pytest.mark.parametrize("num_slots", [1, 3, 8])
def test_resumed_streams_match_generate(reference, case, num_slots):
    lm, requests, want = case
    slots, delivered, outcomes = stream(reference, lm, requests, num_slots, max_attempts=50,
                                        decodes=(2, 5, 6, 11, 19), resets=(4,))
    assert slots.crashes >= 4  # the reset crash and the decode crashes the run lasts for
    for rid, _, _ in requests:
        assert outcomes[rid].ok
        assert delivered[rid] == want[rid], f"request {rid}: a token repeated, lost or changed"
        assert list(outcomes[rid].result) == want[rid]


def test_failed_streams_keep_a_prefix(reference, case):
    lm, requests, want = case
    _, delivered, outcomes = stream(reference, lm, requests, 4, max_attempts=2, rate=0.2, seed=3)
    assert any(not o.ok for o in outcomes.values()), "the crash schedule should fail some"
    for rid, _, _ in requests:
        got = delivered.get(rid, [])
        if outcomes[rid].ok:
            assert got == want[rid]
        else:
            assert got == want[rid][: len(got)] and len(got) < len(want[rid])
