"""Level 3: streams over a slot model that crashes; resume from the delivered tokens."""

import pytest
from hypothesis import given

from harness.marks import level

from .fakes import CrashingSlots
from .streams import (
    TAG,
    Spec,
    StreamClient,
    check_log,
    check_streams,
    run_streams,
    solo,
    specs_of,
    stream_workloads,
)

grade = level(3)


def resets(client):
    """[(slot, tokens)] of the successful reset_slot calls, in order."""
    return [(e[1], e[2]) for e in client.slots.log if e[0] == "reset"]


def slot_of(client, s: Spec) -> int:
    return next(slot for slot, tokens in resets(client) if tokens == s.prompt)


@grade("streams without crashes must get their uninterrupted tokens, refilled FIFO", "streams",
       timeout=5)
def test_streams_without_crashes(impl):
    specs = specs_of([3, 1, 4, 2, 5])
    client = run_streams(impl, specs, num_slots=2)
    check_streams(client, specs, 3)
    assert [tokens for _, tokens in resets(client)] == [s.prompt for s in specs]
    assert [client.only(s.rid).attempts for s in specs] == [1] * 5
    check_log(client, specs)
    # FIFO refill on 2 slots, lengths 3,1,4,2,5: r1 ends at decode 1, r2 joins; r0 ends at 3,
    # r3 joins; r2 and r3 end at 5; r4 runs alone for decodes 6-10.
    assert sum(e[0] == "decode" for e in client.slots.log) == 10


@grade("a stream must resume from prompt + delivered tokens in its own slot after a crash",
       "resume", timeout=5)
def test_resume_after_decode_crash(impl):
    specs = specs_of([5, 3])
    client = run_streams(impl, specs, num_slots=2, decodes=(3,))
    check_streams(client, specs, 3)
    assert [client.only(s.rid).attempts for s in specs] == [2, 2]
    crash = client.slots.log.index(("crash", "decode"))
    reloads = [(e[1], e[2]) for e in client.slots.log[crash + 1 : crash + 3]]
    # Two decodes went through before the crash: each reload holds the prompt + 2 tokens.
    want = sorted((slot_of(client, s), (*s.prompt, *solo(client, s)[:2])) for s in specs)
    assert reloads == want, "survivors must be reloaded in slot order, in their own slots"
    assert len(resets(client)) == 4, "each stream is loaded once, and reloaded once per crash"
    check_log(client, specs)


@grade("survivors must be reloaded, in slot order, before free slots are refilled", "resume",
       timeout=5)
def test_survivors_before_refill(impl):
    a, b, c, d = specs_of([3, 4, 4, 2])
    slots = CrashingSlots(impl.WorkerCrash, 3, decodes=(1, 3))
    client = StreamClient(slots)
    runner = impl.StreamingRunner(slots, num_slots=3, max_attempts=2)
    on_token = client.on_token

    def a_token(rid, token):  # A's first token brings B, C and D
        on_token(rid, token)
        if len(client.tokens[rid]) == 1:
            for s in (b, c, d):
                client.submit(runner, s)

    runner.submit(a.rid, list(a.prompt), a.max_tokens, a_token, client.on_done)
    runner.run()
    # decode 1 crashes (A: 1 attempt); decode 2 gives A a token; B and C take the two free
    # slots; decode 3 crashes: A fails (2 attempts), B and C survive, D still waits.
    assert not client.only(a.rid).ok and client.only(a.rid).attempts == 2
    check_streams(client, [b, c, d], 2)
    crash = [i for i, e in enumerate(slots.log) if e[0] == "crash"][1]
    after = [(e[1], e[2]) for e in slots.log[crash + 1 : crash + 4]]
    assert after[:2] == sorted([(slot_of(client, b), b.prompt), (slot_of(client, c), c.prompt)])
    assert after[2][1] == d.prompt, "D may take a free slot only after the survivors reloaded"


@grade("a crash must end the step: no decode or token before the slots are reloaded", "resume",
       timeout=5)
def test_crash_ends_the_step(impl):
    a, b = specs_of([4, 2])
    slots = CrashingSlots(impl.WorkerCrash, 2, resets=(2,))
    client = StreamClient(slots)
    runner = impl.StreamingRunner(slots, num_slots=2)
    on_token = client.on_token

    def a_token(rid, token):
        on_token(rid, token)
        if len(client.tokens[rid]) == 1:
            client.submit(runner, b)

    runner.submit(a.rid, list(a.prompt), a.max_tokens, a_token, client.on_done)
    runner.run()
    # B's reset (the second reset call) crashes while A holds a slot: both are charged.
    check_streams(client, [a, b], 3)
    assert client.only(a.rid).attempts == 2 and client.only(b.rid).attempts == 2
    log = slots.log
    crash = log.index(("crash", "reset"))
    assert [e[0] for e in log[crash + 1 : crash + 4]] == ["reset", "reset", "decode"]
    check_log(client, [a, b])


@grade("a request whose reset_slot crashes must be charged, so a poison prompt cannot loop",
       "crash_charge", timeout=5)
@pytest.mark.parametrize("max_attempts", [1, 3])
def test_reset_crash_is_charged(impl, max_attempts):
    specs = specs_of([2, 3, 2])
    client = run_streams(impl, specs, num_slots=1, max_attempts=max_attempts,
                         poison=(TAG + 1,), limit=60)
    bad = client.only("r1")
    assert not bad.ok and bad.attempts == max_attempts and client.tokens.get("r1") is None
    assert client.slots.crashes == max_attempts
    check_streams(client, [specs[0], specs[2]], max_attempts)
    assert client.only("r0").attempts == 1 and client.only("r2").attempts == 1


@grade("max_attempts must default to 3 for streams", "crash_charge", timeout=5)
def test_stream_default_budget(impl):
    slots = CrashingSlots(impl.WorkerCrash, 1, poison=(TAG,), limit=60)
    client = StreamClient(slots)
    runner = impl.StreamingRunner(slots, num_slots=1)
    client.submit(runner, Spec("r0", (TAG,), 2))
    runner.run()
    assert slots.crashes == 3 and client.only("r0").attempts == 3 and not client.only("r0").ok


@grade("large budgets and long streams must count like small ones", "crash_charge",
       timeout=10)
def test_large_numbers(impl):
    # Counts above 256 are not shared int objects in CPython: `is` in place of `==` shows here.
    specs = [Spec("long", (TAG,), 300), Spec("bad", (TAG + 1,), 1)]
    client = run_streams(impl, specs, num_slots=1, max_attempts=300, poison=(TAG + 1,),
                         limit=1000)
    check_streams(client, specs, 300)
    assert client.only("long").attempts == 1 and len(client.tokens["long"]) == 300
    assert client.only("bad").attempts == 300 and client.slots.crashes == 300
    wide = specs_of([2] * 300)
    check_streams(run_streams(impl, wide, num_slots=300), wide, 3)


@grade("a crash must fail every slot holder that has used its budget, and no waiting request",
       "crash_charge", timeout=5)
def test_budget_of_one(impl):
    specs = specs_of([3, 4, 2])
    client = run_streams(impl, specs, num_slots=2, max_attempts=1, decodes=(2,))
    check_streams(client, specs, 1)
    r0, r1, r2 = (client.only(s.rid) for s in specs)
    assert (r0.ok, r0.attempts, r1.ok, r1.attempts) == (False, 1, False, 1)
    assert client.tokens["r0"] == solo(client, specs[0])[:1]
    assert (r2.ok, r2.attempts) == (True, 1)


@grade("attempts must count every crash charged to a stream, plus the run that succeeded",
       "crash_charge", timeout=5)
def test_attempts_count_crashes(impl):
    specs = specs_of([3, 1])
    client = run_streams(impl, specs, num_slots=2, max_attempts=4, decodes=(1, 3, 4))
    # decode 1 crashes (both charged), 2 finishes r1 (attempts 2), 3 and 4 crash (r0: 3), then
    # two more decodes finish r0 with 4 attempts.
    check_streams(client, specs, 4)
    assert [client.only(s.rid).attempts for s in specs] == [4, 2]


@grade("every token must be delivered once, before the slot model is called again", "resume",
       timeout=10)
@given(stream_workloads())
def test_random_crashes_deliver_each_token_once(impl, work):
    specs, num_slots, max_attempts, crashes = work
    client = run_streams(impl, specs, num_slots, max_attempts, **crashes)
    check_streams(client, specs, max_attempts)
    check_log(client, specs)


@grade("a finished or failed id must be free again when its on_done runs", "streams", timeout=5)
@pytest.mark.parametrize("max_attempts", [1, 3])
def test_on_done_may_resubmit(impl, max_attempts):
    slots = CrashingSlots(impl.WorkerCrash, 2, decodes=(2,))
    client = StreamClient(slots)
    runner = impl.StreamingRunner(slots, num_slots=2, max_attempts=max_attempts)
    again = Spec("r0", (TAG + 5, 1), 2)
    on_done = client.on_done

    def first_done(outcome):
        on_done(outcome)
        if len(client.done["r0"]) == 1:
            runner.submit("r0", list(again.prompt), again.max_tokens, client.on_token, on_done)

    runner.submit("r0", [TAG, 1], 2, client.on_token, first_done)
    runner.run()
    assert len(client.done["r0"]) == 2
    assert list(client.done["r0"][1].result) == solo(client, again)


@grade("a finished or failed id must be free again when its on_done runs", "streams", timeout=5)
@pytest.mark.parametrize("decodes", [(), (2,)])
def test_on_done_may_resubmit_a_stepmate(impl, decodes):
    # "a" and "b" end in the same step (both finish, or both fail with max_attempts=1); each
    # on_done resubmits the other's id, so whichever runs first finds the other's id free.
    slots = CrashingSlots(impl.WorkerCrash, 2, decodes=decodes)
    client = StreamClient(slots)
    runner = impl.StreamingRunner(slots, num_slots=2, max_attempts=1)
    first = {"a": "b", "b": "a"}
    on_done = client.on_done

    def resubmit_other(outcome):
        on_done(outcome)
        other = first.pop(outcome.request_id, None)
        if other is not None and len(client.done[outcome.request_id]) == 1:
            runner.submit(other, [TAG + 7], 1, client.on_token, on_done)

    for rid, tag in (("a", TAG), ("b", TAG + 1)):
        runner.submit(rid, [tag], 2, client.on_token, resubmit_other)
    runner.run()
    assert len(client.done["a"]) == 2 and len(client.done["b"]) == 2


@grade("every on_token of a step must come before that step's on_done calls", "streams",
       timeout=5)
def test_tokens_before_on_done(impl):
    specs = specs_of([2, 2, 2])
    client = run_streams(impl, specs, num_slots=3)
    kinds = [e[0] for e in client.events]
    assert kinds == ["token"] * 6 + ["done"] * 3


@grade("a malformed decode answer must raise RuntimeError, not count as a crash", "errors",
       timeout=5)
@pytest.mark.parametrize("answer", [lambda out: out[:-1], lambda out: [*out, 0],
                                    lambda out: None])
def test_malformed_decode(impl, answer):
    class Broken(CrashingSlots):
        def decode(self, slots):
            return answer(super().decode(slots))

    slots = Broken(impl.WorkerCrash, 2)
    runner = impl.StreamingRunner(slots, num_slots=2)
    for s in specs_of([2, 2]):
        runner.submit(s.rid, list(s.prompt), s.max_tokens, lambda r, t: None, lambda o: None)
    with pytest.raises(RuntimeError):
        runner.run()


@grade("an exception other than WorkerCrash must propagate", "errors", timeout=5)
def test_other_errors_propagate(impl):
    class Failing(CrashingSlots):
        def decode(self, slots):
            raise KeyError("not a crash")

    slots = Failing(impl.WorkerCrash, 1)
    runner = impl.StreamingRunner(slots, num_slots=1)
    runner.submit("r", [TAG], 2, lambda r, t: None, lambda o: None)
    with pytest.raises(KeyError):
        runner.run()


@grade("bad settings and requests must raise ValueError", "errors", timeout=5)
@pytest.mark.parametrize("kwargs", [{"num_slots": 0}, {"num_slots": -1}, {"max_attempts": 0}])
def test_bad_settings(impl, kwargs):
    args = {"num_slots": 2, "max_attempts": 3, **kwargs}
    with pytest.raises(ValueError):
        impl.StreamingRunner(CrashingSlots(impl.WorkerCrash, 2), **args)


@grade("bad settings and requests must raise ValueError", "errors", timeout=5)
@pytest.mark.parametrize("bad", ["empty prompt", "max_tokens 0", "max_tokens -1",
                                 "on_token", "on_done"])
def test_bad_requests(impl, bad):
    slots = CrashingSlots(impl.WorkerCrash, 1)
    client = StreamClient(slots)
    runner = impl.StreamingRunner(slots, num_slots=1)
    args = {"prompt": [TAG], "max_tokens": 2, "on_token": client.on_token,
            "on_done": client.on_done}
    args.update({"empty prompt": {"prompt": []}, "max_tokens 0": {"max_tokens": 0},
                 "max_tokens -1": {"max_tokens": -1}, "on_token": {"on_token": 3},
                 "on_done": {"on_done": None}}[bad])
    with pytest.raises(ValueError):
        runner.submit("r", args["prompt"], args["max_tokens"], args["on_token"], args["on_done"])
    runner.run()
    assert client.events == [] and slots.log == [], "a rejected request must not be queued"


@grade("an id already waiting or running must raise ValueError", "errors", timeout=5)
def test_duplicate_ids(impl):
    slots = CrashingSlots(impl.WorkerCrash, 1)
    client = StreamClient(slots)
    runner = impl.StreamingRunner(slots, num_slots=1)
    refused = []
    on_token = client.on_token

    def a_token(rid, token):  # "a" is running: its id is taken
        on_token(rid, token)
        if len(client.tokens[rid]) == 3:  # in its last step: whether the id is free is open
            return
        try:
            runner.submit("a", [TAG + 3], 1, client.on_token, client.on_done)
        except ValueError:
            refused.append(token)

    runner.submit("a", [TAG], 3, a_token, client.on_done)
    client.submit(runner, Spec("b", (TAG + 1,), 2))
    with pytest.raises(ValueError):  # "b" is waiting
        client.submit(runner, Spec("b", (TAG + 2,), 1))
    runner.run()
    assert len(refused) == 2, "submitting a running id must raise ValueError"
    check_streams(client, [Spec("a", (TAG,), 3), Spec("b", (TAG + 1,), 2)], 3)
