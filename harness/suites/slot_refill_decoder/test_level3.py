"""Level 3: the same engine over a KV-cached slot model (reset_slot / decode)."""

import pytest
from hypothesis import given

from harness.fakes import HashModel, ScriptedModel
from harness.marks import level

from .helpers import (
    TAG,
    LoggedSlots,
    Outcome,
    Spec,
    check_slot_log,
    ideal_schedule,
    solo,
    workloads,
)

grade = level(3)


def run_slots(impl, specs, batch_size, model):
    solos = [solo(model, s) for s in specs]
    slots = LoggedSlots(model, batch_size, limit=sum(len(x.stream) for x in solos) + 1)
    outcome = Outcome(impl.SlotDecodingEngine(slots, batch_size), specs, impl)
    outcome.run(max_steps=len(specs) + sum(len(x.stream) for x in solos) + 1)
    return outcome, slots, solos


@grade("KV-cached slots must give every request its solo tokens", "slots")
@given(workloads())
def test_random_mix_matches_solo(impl, work):
    outcome, _, solos = run_slots(impl, *work)
    outcome.check_solo(solos)


@grade("a slot must be reset with its new request's prompt and decoded only while it is live",
       "slots")
@given(workloads())
def test_random_mix_slot_log(impl, work):
    specs, batch_size, _ = work
    _, slots, solos = run_slots(impl, *work)
    check_slot_log(slots.log, specs, solos, batch_size)


@grade("decode calls and finishing steps must equal those of ideal FIFO refill", "refill")
@given(workloads())
def test_random_mix_call_count(impl, work):
    specs, batch_size, _ = work
    outcome, slots, solos = run_slots(impl, *work)
    calls, finish = ideal_schedule([len(x.stream) for x in solos], batch_size)
    assert len(slots.decodes) == calls
    assert [outcome.step_of[s.rid] for s in specs] == finish


@grade("a reused slot must not continue the previous request's cache", "slots", timeout=5)
def test_reused_slot_is_reset(impl):
    model = HashModel(vocab_size=40, seed=3)
    specs = [Spec(i, (TAG + i, 2 * i), 3 + i) for i in range(4)]
    outcome, slots, solos = run_slots(impl, specs, 1, model)
    outcome.check_solo(solos)
    assert [(slot, prompt) for slot, prompt in slots.resets] == [(0, s.prompt) for s in specs]


STOPPING = [Spec("A", (TAG,), 2, stop_sequence=(7, 8)),
            Spec("B", (TAG + 1,), 3, stop_sequence=(7, 8)),
            Spec("C", (TAG + 2,), 5, stop_token=2, stop_sequence=(1, 2)),
            Spec("D", (TAG + 3,), 0),
            Spec("E", (TAG + 4,), 3, stop_sequence=(5, 6))]


def run_stopping(impl):
    """Every stop rule over two slots; returns (outcome, slots, solos)."""
    model = ScriptedModel({s.prompt: plan for s, plan in zip(
        STOPPING, [[3, 7], [8, 6, 5], [1, 2], [], [1, 5, 6]], strict=True)})
    return run_slots(impl, STOPPING, 2, model)


@grade("the slot engine must keep every stop rule across refills", "stop_rules", timeout=5)
def test_slot_engine_stop_rules(impl):
    outcome, _, solos = run_stopping(impl)
    outcome.check_solo(solos)
    assert [(s.tokens, s.reason) for s in solos] == [
        ([3, 7], "length"), ([8, 6, 5], "length"), ([1], "stop"), ([], "length"), ([1], "stop")]


@grade("a slot must be decoded only while its request runs, whatever stopped it", "slots",
       timeout=5)
def test_slot_engine_stopped_slots(impl):
    _, slots, solos = run_stopping(impl)
    check_slot_log(slots.log, STOPPING, solos, 2)


@grade("batch_size below 1 must raise ValueError in the slot engine too", "errors", timeout=5)
def test_slot_engine_bad_batch_size(impl):
    with pytest.raises(ValueError):
        impl.SlotDecodingEngine(LoggedSlots(HashModel(), 1), 0)


@grade("a slot model returning the wrong number of tokens must raise RuntimeError", "errors",
       timeout=5)
def test_slot_engine_wrong_count(impl):
    class Short(LoggedSlots):
        def decode(self, slots):
            return super().decode(slots)[:-1]

    eng = impl.SlotDecodingEngine(Short(HashModel(), 2), 2)
    for i in range(2):
        eng.submit(impl.Request(i, [TAG + i], 4), lambda c: None)
    with pytest.raises(RuntimeError):
        eng.step()
