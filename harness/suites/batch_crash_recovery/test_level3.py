"""Level 3: streams over a slot model that crashes; resume from the delivered tokens."""

import pytest
from hypothesis import given

from harness.marks import level

from .fakes import CrashingSlots
from .streams import (
    TAG,
    Spec,
    StreamClient,
    check_delivery,
    check_reloads,
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


FIVE = [3, 1, 4, 2, 5]  # stream lengths on 2 slots


@grade("streams without crashes must get their uninterrupted tokens", "streams", timeout=5)
def test_streams_without_crashes(impl):
    specs = specs_of(FIVE)
    client = run_streams(impl, specs, num_slots=2)
    check_streams(client, specs, 3)
    assert [client.only(s.rid).attempts for s in specs] == [1] * 5


@grade("free slots must be refilled FIFO", "streams", timeout=5)
def test_refill_fifo(impl):
    specs = specs_of(FIVE)
    client = run_streams(impl, specs, num_slots=2)
    assert [tokens for _, tokens in resets(client)] == [s.prompt for s in specs]


@grade("each step must call decode once with every occupied slot", "streams", timeout=5)
def test_one_decode_per_step(impl):
    client = run_streams(impl, specs_of(FIVE), num_slots=2)
    # FIFO refill on 2 slots, lengths 3,1,4,2,5: r1 ends at decode 1, r2 joins; r0 ends at 3,
    # r3 joins; r2 and r3 end at 5; r4 runs alone for decodes 6-10.
    decodes = [e[1] for e in client.slots.log if e[0] == "decode"]
    assert [len(slots) for slots in decodes] == [2] * 5 + [1] * 5


def reloads_after(client, crash: int, count: int) -> list[tuple[int, tuple]]:
    """(slot, tokens) of the `count` calls after the crash-th crash (0-based)."""
    at = [i for i, e in enumerate(client.slots.log) if e[0] == "crash"][crash]
    return [(e[1], e[2]) for e in client.slots.log[at + 1 : at + 1 + count]]


@grade("a survivor must be reloaded with its prompt plus the tokens it already delivered",
       "resume", timeout=5)
def test_resume_from_delivered_tokens(impl):
    specs = specs_of([5, 3])
    client = run_streams(impl, specs, num_slots=2, decodes=(3,))
    # Two decodes went through before the crash: each reload holds the prompt + 2 tokens.
    want = sorted((*s.prompt, *solo(client, s)[:2]) for s in specs)
    assert sorted(tokens for _, tokens in reloads_after(client, 0, 2)) == want


@grade("a stream must be reloaded only after a crash wiped its slot", "resume", timeout=5)
def test_no_reload_without_a_crash(impl):
    client = run_streams(impl, specs_of([5, 3]), num_slots=2, decodes=(3,))
    assert len(resets(client)) == 4, "each stream is loaded once, and reloaded once per crash"


@grade("a survivor must be reloaded in the slot it held", "resume", timeout=5)
def test_reload_in_own_slot(impl):
    # r0 ends at decode 1 and frees its slot; decode 2 crashes with r1 alone running.
    r0, r1 = specs_of([1, 4])
    client = run_streams(impl, [r0, r1], num_slots=2, decodes=(2,))
    assert reloads_after(client, 0, 1)[0][0] == slot_of(client, r1)


@grade("survivors of a crash must be reloaded in slot order", "resume", timeout=5)
def test_reload_in_slot_order(impl):
    # r0 ends at decode 1 and r2 takes its slot, below r1's; decode 3 crashes.
    specs = specs_of([1, 4, 3])
    client = run_streams(impl, specs, num_slots=2, decodes=(3,))
    slots = [slot for slot, _ in reloads_after(client, 0, 2)]
    assert slots == sorted(slots), f"survivors reloaded in slots {slots}"


@grade("survivors must be reloaded before free slots are refilled", "resume", timeout=5)
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
    after = reloads_after(client, 1, 3)
    assert {tokens for _, tokens in after[:2]} == {b.prompt, c.prompt}, after
    assert after[2][1] == d.prompt, "D may take a free slot only after the survivors reloaded"


def reset_crash_while_running(impl) -> tuple[StreamClient, Spec, Spec]:
    """A runs; its first token brings B, whose reset_slot (the second reset call) crashes while
    A holds a slot."""
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
    return client, a, b


@grade("a crash in reset_slot must charge every request holding a slot, not only the one being "
       "loaded", "crash_charge", timeout=5)
def test_reset_crash_charges_every_holder(impl):
    client, a, b = reset_crash_while_running(impl)
    assert (client.only(a.rid).attempts, client.only(b.rid).attempts) == (2, 2)


@grade("a crash must end the step: no decode or token before the slots are reloaded", "resume",
       timeout=5)
def test_crash_ends_the_step(impl):
    client, _, _ = reset_crash_while_running(impl)
    log = client.slots.log
    crash = log.index(("crash", "reset"))
    assert [e[0] for e in log[crash + 1 : crash + 4]] == ["reset", "reset", "decode"]


@grade("a crash while reloading a survivor must be handled like any other crash", "resume",
       timeout=5)
def test_crash_while_reloading(impl):
    # decode 1 crashes; reloading the survivor (reset 2) crashes too; reset 3 works.
    spec = Spec("r0", (TAG,), 2)
    client = run_streams(impl, [spec], num_slots=1, max_attempts=3, decodes=(1,), resets=(2,))
    o = client.only("r0")
    assert (o.ok, o.attempts, client.tokens["r0"]) == (True, 3, solo(client, spec)), o


@grade("a request still waiting for a free slot must not be charged for a crash in another's "
       "reset_slot", "crash_charge", timeout=5)
def test_refill_one_at_a_time(impl):
    # Three slots, three requests: the second one's reset crashes before the third takes a slot.
    specs = specs_of([1, 1, 1])
    client = run_streams(impl, specs, num_slots=3, resets=(2,))
    assert [client.only(s.rid).attempts for s in specs] == [2, 2, 1]


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


def budget_of_one(impl) -> tuple[StreamClient, list[Spec]]:
    """r0 and r1 run on 2 slots with max_attempts=1 and decode 2 crashes; r2 waits."""
    specs = specs_of([3, 4, 2])
    return run_streams(impl, specs, num_slots=2, max_attempts=1, decodes=(2,)), specs


@grade("a crash must fail every slot holder that has used its budget, with ok=False, "
       "attempts == max_attempts, no result and an error string", "crash_charge", timeout=5)
def test_budget_of_one(impl):
    client, specs = budget_of_one(impl)
    for s in specs[:2]:
        o = client.only(s.rid)
        assert (o.ok, o.attempts, o.result) == (False, 1, None), o
        assert isinstance(o.error, str) and o.error, o


@grade("a crash must not charge a request still waiting", "crash_charge", timeout=5)
def test_waiting_request_not_charged(impl):
    client, specs = budget_of_one(impl)
    r2 = client.only(specs[2].rid)
    assert (r2.ok, r2.attempts) == (True, 1), r2


@grade("a stream that fails must free its slot", "crash_charge", timeout=5)
def test_failed_stream_frees_its_slot(impl):
    client, specs = budget_of_one(impl)
    # After the crash nothing reloads r0 or r1: r2 is the next request loaded.
    assert reloads_after(client, 0, 1)[0][1] == specs[2].prompt


@grade("attempts must count every crash charged to a stream, plus the run that succeeded",
       "crash_charge", timeout=5)
def test_attempts_count_crashes(impl):
    specs = specs_of([3, 1])
    client = run_streams(impl, specs, num_slots=2, max_attempts=4, decodes=(1, 3, 4))
    # decode 1 crashes (both charged), 2 finishes r1 (attempts 2), 3 and 4 crash (r0: 3), then
    # two more decodes finish r0 with 4 attempts.
    check_streams(client, specs, 4)
    assert [client.only(s.rid).attempts for s in specs] == [4, 2]


@grade("under random crashes each stream must deliver its uninterrupted tokens once, or a "
       "prefix of them if it fails", "resume", timeout=10)
@given(stream_workloads())
def test_random_crashes_deliver_each_token_once(impl, work):
    specs, num_slots, max_attempts, crashes = work
    client = run_streams(impl, specs, num_slots, max_attempts, **crashes)
    check_streams(client, specs, max_attempts)


@grade("under random crashes every reload must hold the prompt plus the tokens already "
       "delivered", "resume", timeout=10)
@given(stream_workloads())
def test_random_crashes_reload_what_was_delivered(impl, work):
    specs, num_slots, max_attempts, crashes = work
    check_reloads(run_streams(impl, specs, num_slots, max_attempts, **crashes), specs)


@grade("under random crashes every token must be delivered before the slot model is called "
       "again", "resume", timeout=10)
@given(stream_workloads())
def test_random_crashes_deliver_before_the_next_call(impl, work):
    specs, num_slots, max_attempts, crashes = work
    check_delivery(run_streams(impl, specs, num_slots, max_attempts, **crashes))


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


@grade("a stream's on_done must come after its last on_token", "streams", timeout=5)
def test_on_done_after_last_token(impl):
    client = run_streams(impl, specs_of([2]), num_slots=1)
    assert [e[0] for e in client.events] == ["token", "token", "done"]


@grade("on_done must run in the step where its stream finishes", "streams", timeout=5)
def test_on_done_in_its_step(impl):
    # r0 ends at decode 1 while r1 goes on: r0's on_done comes before decode 2.
    client = run_streams(impl, specs_of([1, 3]), num_slots=2)
    done = next(e for e in client.events if e[0] == "done")
    decodes = [i for i, e in enumerate(client.slots.log) if e[0] == "decode"]
    assert done[1] == "r0" and done[3] == decodes[0] + 1, (done, client.slots.log)


@grade("requests submitted from a callback must queue FIFO", "streams", timeout=5)
def test_callback_submits_queue_fifo(impl):
    a, b, c = specs_of([2, 1, 1])
    slots = CrashingSlots(impl.WorkerCrash, 1)
    client = StreamClient(slots)
    runner = impl.StreamingRunner(slots, num_slots=1)
    on_token = client.on_token

    def a_token(rid, token):  # A's first token brings B, then C
        on_token(rid, token)
        if len(client.tokens[rid]) == 1:
            client.submit(runner, b)
            client.submit(runner, c)

    runner.submit(a.rid, list(a.prompt), a.max_tokens, a_token, client.on_done)
    runner.run()
    assert [tokens for _, tokens in resets(client)] == [a.prompt, b.prompt, c.prompt]


WRONG_COUNT = "a decode answer with the wrong number of tokens must raise RuntimeError"


@pytest.mark.parametrize("answer", [
    pytest.param(lambda out: out[:-1], id="short", marks=grade(WRONG_COUNT, "errors", timeout=5)),
    pytest.param(lambda out: [*out, 0], id="long", marks=grade(WRONG_COUNT, "errors", timeout=5)),
    pytest.param(lambda out: None, id="none", marks=grade(
        "a decode answer that is not a list or tuple must raise RuntimeError", "errors",
        timeout=5))])
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


@pytest.mark.parametrize("kwargs", [
    pytest.param(kw, marks=grade(f"{what} must raise ValueError", "errors", timeout=5))
    for kw, what in [({"num_slots": 0}, "num_slots < 1"), ({"num_slots": -1}, "num_slots < 1"),
                     ({"max_attempts": 0}, "max_attempts < 1 for streams")]])
def test_bad_settings(impl, kwargs):
    args = {"num_slots": 2, "max_attempts": 3, **kwargs}
    with pytest.raises(ValueError):
        impl.StreamingRunner(CrashingSlots(impl.WorkerCrash, 2), **args)


BAD_REQUESTS = {"empty prompt": ("an empty prompt", {"prompt": []}),
                "max_tokens 0": ("max_tokens < 1", {"max_tokens": 0}),
                "max_tokens -1": ("max_tokens < 1", {"max_tokens": -1}),
                "on_token": ("a callback that is not callable", {"on_token": 3}),
                "on_done": ("a callback that is not callable", {"on_done": None})}


def submit_bad(impl, bad: str):
    """Submit a request broken as `bad` says; returns (client, runner, what submit raised)."""
    slots = CrashingSlots(impl.WorkerCrash, 1)
    client = StreamClient(slots)
    runner = impl.StreamingRunner(slots, num_slots=1)
    args = {"prompt": [TAG], "max_tokens": 2, "on_token": client.on_token,
            "on_done": client.on_done} | BAD_REQUESTS[bad][1]
    try:
        runner.submit("r", args["prompt"], args["max_tokens"], args["on_token"], args["on_done"])
    except Exception as exc:  # noqa: BLE001 - the tests say what they expected
        return client, runner, exc
    return client, runner, None


@pytest.mark.parametrize("bad", [
    pytest.param(bad, marks=grade(f"{what} must raise ValueError", "errors", timeout=5))
    for bad, (what, _) in BAD_REQUESTS.items()])
def test_bad_requests(impl, bad):
    _, _, raised = submit_bad(impl, bad)
    assert isinstance(raised, ValueError), f"submit raised {raised!r}, not a ValueError"


@grade("a submit that raises must leave nothing queued", "errors", timeout=5)
@pytest.mark.parametrize("bad", list(BAD_REQUESTS))
def test_bad_request_leaves_nothing_queued(impl, bad):
    client, runner, raised = submit_bad(impl, bad)
    if raised is None:
        return  # accepted: whether it should be is the business of the test above
    runner.run()
    assert client.events == [] and client.slots.log == [], "a rejected request was queued"


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
