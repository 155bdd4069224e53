"""Level 2: stop sequences, stop-rule order, callbacks that submit, bad input."""

import pytest
from hypothesis import given

from harness.fakes import HashModel, Recorder, ScriptedModel
from harness.marks import level

from .helpers import (
    TAG,
    Budget,
    Outcome,
    Spec,
    check_calls,
    ideal_schedule,
    make,
    run_stateless,
    solo,
    workloads,
)

grade = level(2)


def finish(impl, specs, plans, batch_size=1, model_next=None):
    """Run scripted requests (request i has prompt (TAG + i, *extra)); return
    {rid: (tokens, finish_reason)} of their single completions."""
    model = ScriptedModel({s.prompt: plan for s, plan in zip(specs, plans, strict=True)})
    eng = impl.DecodingEngine(model_next or Budget(model, 100), batch_size)
    got = {}
    for s in specs:
        eng.submit(make(impl, s), lambda c, rid=s.rid: got.setdefault(rid, []).append(c))
    eng.run()
    assert all(len(v) == 1 for v in got.values()) and set(got) == {s.rid for s in specs}
    return {rid: (list(v[0].tokens), v[0].finish_reason) for rid, v in got.items()}


STOP_ACROSS_STEPS = [Spec("A", (TAG,), 10, stop_sequence=(7, 8)),
                     Spec("B", (TAG + 1,), 10, stop_sequence=(4, 5, 6))]
STOP_ACROSS_PLANS = [[3, 7, 8, 4], [4, 5, 4, 5, 6, 9]]


@grade("a stop sequence split across steps must end the request", "stop_sequence", timeout=5)
def test_stop_sequence_across_steps(impl):
    recorder = Recorder(ScriptedModel({s.prompt: plan for s, plan in zip(
        STOP_ACROSS_STEPS, STOP_ACROSS_PLANS, strict=True)}))
    got = finish(impl, STOP_ACROSS_STEPS, STOP_ACROSS_PLANS, 2, model_next=recorder)
    assert {rid: reason for rid, (_, reason) in got.items()} == {"A": "stop", "B": "stop"}
    assert recorder.batch_sizes == [2, 2, 2, 1, 1]


@grade("a matched stop sequence must be removed from the tokens", "stop_sequence", timeout=5)
def test_stop_sequence_removed(impl):
    got = finish(impl, STOP_ACROSS_STEPS, STOP_ACROSS_PLANS, batch_size=2)
    assert {rid: tokens for rid, (tokens, _) in got.items()} == {"A": [3], "B": [4, 5]}


@grade("overlapping partial matches must not hide a stop sequence", "stop_sequence", timeout=5)
def test_overlapping_matches(impl):
    specs = [Spec("A", (TAG,), 10, stop_sequence=(1, 1, 2)),
             Spec("B", (TAG + 1,), 10, stop_sequence=(1, 2, 1, 3)),
             Spec("C", (TAG + 2,), 10, stop_sequence=(5, 5))]
    got = finish(impl, specs, [[1, 1, 1, 2, 9], [1, 2, 1, 2, 1, 3, 9], [4, 5, 5, 9]], 3)
    assert got == {"A": ([1], "stop"), "B": ([1, 2], "stop"), "C": ([4], "stop")}


@grade("a stop sequence equal to the whole output must leave no tokens", "stop_sequence",
       timeout=5)
def test_whole_output_is_stop_sequence(impl):
    got = finish(impl, [Spec("A", (TAG,), 5, stop_sequence=(5, 6))], [[5, 6, 1]])
    assert got == {"A": ([], "stop")}


@grade("prompt tokens must not count toward a stop sequence", "stop_sequence", timeout=5)
def test_prompt_not_counted(impl):
    specs = [Spec("A", (TAG, 7), 3, stop_sequence=(7, 8)),
             Spec("B", (TAG + 1, 1, 2), 2, stop_sequence=(1, 2, 3))]
    got = finish(impl, specs, [[8, 5, 6], [3, 4]], batch_size=2)
    assert got == {"A": ([8, 5, 6], "length"), "B": ([3, 4], "length")}


@grade("a partial stop-sequence match must not carry over to the slot's next request",
       "stop_sequence", timeout=5)
def test_partial_match_does_not_survive_refill(impl):
    # One slot: A ends by length on a partial match [7]; B starts with 8 and must go on.
    specs = [Spec("A", (TAG,), 2, stop_sequence=(7, 8)),
             Spec("B", (TAG + 1,), 3, stop_sequence=(7, 8)),
             Spec("C", (TAG + 2,), 3, stop_sequence=(9, 7, 8)),
             Spec("D", (TAG + 3,), 2, stop_sequence=(9, 7, 8))]
    got = finish(impl, specs, [[3, 7], [8, 6, 5], [1, 9, 7], [8, 2]])
    assert got == {"A": ([3, 7], "length"), "B": ([8, 6, 5], "length"),
                   "C": ([1, 9, 7], "length"), "D": ([8, 2], "length")}


@grade("a stop token that also completes the stop sequence must win", "stop_rules", timeout=5)
def test_stop_token_before_sequence(impl):
    got = finish(impl, [Spec("A", (TAG,), 5, stop_token=2, stop_sequence=(1, 2))], [[1, 2, 3]])
    assert got == {"A": ([1], "stop")}


@grade("a stop sequence completed on the last allowed token must finish with stop",
       "stop_rules", timeout=5)
def test_stop_sequence_beats_length(impl):
    got = finish(impl, [Spec("A", (TAG,), 3, stop_sequence=(5, 6))], [[1, 5, 6]])
    assert got == {"A": ([1], "stop")}


@grade("the length rule must count a partial stop-sequence match", "stop_rules", timeout=5)
def test_length_counts_a_partial_match(impl):
    # [7] may start the stop sequence [7, 8], yet it is the second of two allowed tokens.
    got = finish(impl, [Spec("A", (TAG,), 2, stop_sequence=(7, 8))], [[3, 7]])
    assert got == {"A": ([3, 7], "length")}


@grade("completions and model calls with stop sequences must equal solo decoding for any "
       "request mix", "stop_sequence")
@given(workloads())
def test_random_mix_matches_solo(impl, work):
    specs, batch_size, _ = work
    outcome, recorder, solos = run_stateless(impl, *work)
    outcome.check_solo(solos)
    check_calls(recorder.calls, specs, solos, batch_size)


@grade("model calls and finishing steps with every stop rule must equal ideal FIFO refill",
       "refill")
@given(workloads())
def test_random_mix_call_count(impl, work):
    specs, batch_size, _ = work
    outcome, recorder, solos = run_stateless(impl, *work)
    calls, finish_steps = ideal_schedule([len(x.stream) for x in solos], batch_size)
    assert recorder.num_calls == calls
    assert [outcome.step_of[s.rid] for s in specs] == finish_steps


@grade("requests submitted from a callback must be decoded too", "callbacks", timeout=5)
def test_callback_submits(impl):
    model = HashModel(vocab_size=20, seed=5)
    specs = [Spec(i, (TAG + i, i), 1 + i % 4, stop_token=3) for i in range(8)]
    want = {s.rid: solo(model, s) for s in specs}
    eng = impl.DecodingEngine(Budget(model, 100), batch_size=2)
    got = {}

    def callback(c):
        got.setdefault(c.request_id, []).append(c)
        follow = c.request_id + 2  # 0 submits 2, 1 submits 3, ... chains up to 7
        if follow < len(specs):
            eng.submit(make(impl, specs[follow]), callback)

    eng.submit(make(impl, specs[0]), callback)
    eng.submit(make(impl, specs[1]), callback)
    eng.run()
    assert sorted(got) == list(range(8))
    for rid, cs in got.items():
        assert [(list(c.tokens), c.finish_reason) for c in cs] == [
            (want[rid].tokens, want[rid].reason)]


@grade("a callback must be able to resubmit its own request_id", "callbacks", timeout=5)
def test_resubmit_own_id(impl):
    model = ScriptedModel({(TAG,): [4, 4, 4], (TAG + 1,): [5, 5, 5]})
    eng = impl.DecodingEngine(Budget(model, 50), batch_size=2)
    got = []

    def callback(c):
        got.append((c.request_id, list(c.tokens)))
        if len(got) == 1:
            eng.submit(impl.Request("same", [TAG + 1], 3), callback)

    eng.submit(impl.Request("same", [TAG], 2), callback)
    eng.run()
    assert got == [("same", [4, 4]), ("same", [5, 5, 5])]


@grade("a zero-token request's callback must be able to submit", "callbacks", timeout=5)
def test_zero_callback_submits(impl):
    model = ScriptedModel({(TAG,): [4, 4]})
    eng = impl.DecodingEngine(Budget(model, 50), batch_size=1)
    got = []

    def callback(c):
        got.append((c.request_id, list(c.tokens), c.finish_reason))
        if len(got) == 1:
            eng.submit(impl.Request("Z", [TAG], 2), callback)  # same id, now with tokens

    eng.submit(impl.Request("Z", [TAG + 1], 0), callback)
    eng.run()
    assert got == [("Z", [], "length"), ("Z", [4, 4], "length")]


@grade("request ids of any hashable type must be kept apart", "bookkeeping", timeout=5)
def test_hashable_ids(impl):
    ids = [("a", 1), 7, "7", frozenset({1}), 7.5]
    model = ScriptedModel({(TAG + i,): [i] * 3 for i in range(len(ids))})
    eng = impl.DecodingEngine(Budget(model, 50), batch_size=2)
    got = []
    for i, rid in enumerate(ids):
        eng.submit(impl.Request(rid, [TAG + i], 1 + i % 3), got.append)
    eng.run()
    assert sorted((repr(c.request_id), list(c.tokens)) for c in got) == sorted(
        (repr(rid), [i] * (1 + i % 3)) for i, rid in enumerate(ids))


# --- bad input ---------------------------------------------------------------------------


@grade("batch_size below 1 must raise ValueError", "errors", timeout=5)
@pytest.mark.parametrize("batch_size", [0, -2])
def test_bad_batch_size(impl, batch_size):
    with pytest.raises(ValueError):
        impl.DecodingEngine(HashModel(), batch_size)


def bad_requests(impl):
    return {
        "negative max_tokens": impl.Request("x", [1], -1),
        "empty prompt": impl.Request("x", [], 3),
        "empty stop_sequence": impl.Request("x", [1], 3, stop_sequence=[]),
    }


BAD_CASES = ["negative max_tokens", "empty prompt", "empty stop_sequence"]


@grade("an invalid request must be rejected with ValueError", "errors", timeout=5)
@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_request(impl, case):
    eng = impl.DecodingEngine(HashModel(), 2)
    with pytest.raises(ValueError):
        eng.submit(bad_requests(impl)[case], lambda c: None)


@grade("a ValueError must say what was wrong", "errors", timeout=5)
@pytest.mark.parametrize("case", ["batch_size 0", *BAD_CASES, "duplicate id"])
def test_value_errors_have_a_message(impl, case):
    eng = impl.DecodingEngine(HashModel(), 2)
    eng.submit(impl.Request("x", [1], 3), lambda c: None)
    calls = {"batch_size 0": lambda: impl.DecodingEngine(HashModel(), 0),
             "duplicate id": lambda: eng.submit(impl.Request("x", [2], 3), lambda c: None)}
    call = calls.get(case, lambda: eng.submit(bad_requests(impl)[case], lambda c: None))
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value)


@grade("a request_id already waiting or active must be rejected with ValueError", "errors",
       timeout=5)
def test_duplicate_ids(impl):
    eng = impl.DecodingEngine(Budget(HashModel(), 50), 1)
    got = []
    eng.submit(impl.Request("a", [1], 3), got.append)
    eng.submit(impl.Request("b", [2], 3), got.append)
    with pytest.raises(ValueError):
        eng.submit(impl.Request("b", [3], 3), got.append)  # waiting
    eng.step()  # "a" is active now, "b" still waiting
    for rid in ("a", "b"):
        with pytest.raises(ValueError):
            eng.submit(impl.Request(rid, [3], 3), got.append)


@grade("a completed request's id must be accepted again", "errors", timeout=5)
def test_completed_id_reusable(impl):
    eng = impl.DecodingEngine(Budget(HashModel(), 50), 1)
    got = []
    eng.submit(impl.Request("a", [1], 3), got.append)
    eng.run()
    eng.submit(impl.Request("a", [4], 1), got.append)  # finished: the id is free again
    eng.run()
    assert [c.request_id for c in got] == ["a", "a"]


def submit_rejected(impl, eng, got, *extra) -> None:
    """Submit one request of each invalid kind, all with id "x", then `extra`; each must
    raise ValueError, which the tests of rejection check: here only what is left matters."""
    for bad in (impl.Request("x", [], 3), impl.Request("x", [1], -1),
                impl.Request("x", [1], 3, stop_sequence=[]), *extra):
        try:
            eng.submit(bad, got.append)
        except ValueError:
            pass


@grade("a rejected request must not be queued", "errors", timeout=5)
def test_rejected_request_not_queued(impl):
    eng = impl.DecodingEngine(Budget(HashModel(), 50), 1)
    got = []
    eng.submit(impl.Request("w", [1], 3), got.append)
    submit_rejected(impl, eng, got, impl.Request("w", [2], 3))  # w is waiting already
    assert (eng.num_active, eng.num_waiting) == (0, 1)


@grade("a rejected request must not hold its id", "errors", timeout=5)
def test_rejected_request_holds_no_id(impl):
    eng = impl.DecodingEngine(Budget(HashModel(), 50), 1)
    got = []
    submit_rejected(impl, eng, got)
    eng.submit(impl.Request("x", [1], 2), got.append)  # the id was never taken
    eng.run()
    assert [(c.request_id, len(c.tokens)) for c in got] == [("x", 2)]


def miscounting(impl, extra: int):
    """Three requests over a model that answers len(prefixes) + extra tokens."""
    eng = impl.DecodingEngine(lambda prefixes: [1] * (len(prefixes) + extra), 3)
    for i in range(3):
        eng.submit(impl.Request(i, [TAG + i], 5), lambda c: None)
    return eng


@grade("a model returning the wrong number of tokens must raise RuntimeError", "errors",
       timeout=5)
@pytest.mark.parametrize("extra", [-1, 2])
def test_wrong_token_count(impl, extra):
    with pytest.raises(RuntimeError):
        miscounting(impl, extra).step()


@grade("the RuntimeError must name the expected and the actual count", "errors", timeout=5)
@pytest.mark.parametrize("extra", [-1, 2])
def test_wrong_token_count_message(impl, extra):
    with pytest.raises(RuntimeError) as info:
        miscounting(impl, extra).step()
    assert "3" in str(info.value) and str(3 + extra) in str(info.value)


@grade("a model returning its tokens as a tuple must be accepted", "bookkeeping", timeout=5)
def test_tuple_tokens(impl):
    model = HashModel(vocab_size=30, seed=9)
    specs = [Spec(i, (TAG + i,), 4) for i in range(3)]
    recorder = Recorder(model)
    outcome = Outcome(impl.DecodingEngine(lambda p: tuple(recorder(p)), 2), specs, impl)
    outcome.run(max_steps=20)
    outcome.check_solo([solo(model, s) for s in specs])
    assert recorder.num_calls == ideal_schedule([4, 4, 4], 2)[0]
