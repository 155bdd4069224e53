"""Level 1: slots refilled from a FIFO queue, stop token and max_tokens, callbacks."""

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

grade = level(1)


def engine(impl, plans, batch_size, limit=50):
    """An engine over a ScriptedModel whose prompts are (TAG + i,), with a call recorder."""
    model = ScriptedModel({(TAG + i,): plan for i, plan in enumerate(plans)})
    recorder = Recorder(Budget(model, limit))
    return impl.DecodingEngine(recorder, batch_size), recorder


def collect(eng, impl, specs):
    got = {}
    for s in specs:
        eng.submit(make(impl, s), lambda c, rid=s.rid: got.setdefault(rid, []).append(c))
    return got


def tags(call):
    return {prefix[0] - TAG for prefix in call}


@grade("a lone request must decode exactly like solo greedy decoding", "prefixes", timeout=5)
def test_single_request(impl):
    model = HashModel(vocab_size=50, seed=1)
    for max_tokens in (1, 2, 7):
        s = Spec("only", (TAG, 3, 4), max_tokens)
        want = solo(model, s)
        outcome = Outcome(impl.DecodingEngine(Budget(model, 20), batch_size=4), [s], impl)
        outcome.run(max_steps=20)
        outcome.check_solo([want])


@grade("requests sharing a batch must each get their own solo tokens", "bookkeeping", timeout=5)
def test_shared_batch_matches_solo(impl):
    model = HashModel(vocab_size=50, seed=2)
    specs = [Spec(i, (TAG + i, i % 5), 1 + (3 * i) % 8) for i in range(9)]
    outcome, _, solos = run_stateless(impl, specs, 3, model)
    outcome.check_solo(solos)


@grade("a freed slot must be refilled in the very next step", "refill", timeout=5)
def test_refill_next_step(impl):
    # A needs 1 call, B needs 4, C needs 2; batch of 2: C joins B in step 2.
    eng, rec = engine(impl, [[5], [5, 6, 7, 8], [9, 9]], batch_size=2)
    collect(eng, impl, [Spec("A", (TAG,), 1), Spec("B", (TAG + 1,), 4), Spec("C", (TAG + 2,), 2)])
    eng.run()
    assert [tags(c) for c in rec.calls] == [{0, 1}, {1, 2}, {1, 2}, {1}]


@grade("the model must only see the prefixes of unfinished requests", "prefixes", timeout=5)
def test_finished_not_sent(impl):
    eng, rec = engine(impl, [[5], [5, 6, 7, 8]], batch_size=2)
    collect(eng, impl, [Spec("A", (TAG,), 1), Spec("B", (TAG + 1,), 4)])
    eng.run()
    assert sorted(map(sorted, rec.calls)) == sorted(
        [sorted([(TAG,), (TAG + 1,)]), [(TAG + 1, 5)], [(TAG + 1, 5, 6)], [(TAG + 1, 5, 6, 7)]]
    )


@grade("requests must be served first come, first served", "refill", timeout=5)
def test_fifo(impl):
    specs = [Spec(f"r{i}", (TAG + i,), 2) for i in range(5)]
    eng, rec = engine(impl, [[1, 2]] * 5, batch_size=1)
    collect(eng, impl, specs)
    eng.run()
    assert [tags(c) for c in rec.calls] == [{0}, {0}, {1}, {1}, {2}, {2}, {3}, {3}, {4}, {4}]


@grade("step must return how many sequences went to the model", "prefixes", timeout=5)
def test_step_returns_batch_size(impl):
    eng, rec = engine(impl, [[1]] + [[1, 2, 3]] * 4, batch_size=3)
    collect(eng, impl, [Spec(i, (TAG + i,), 1 if i == 0 else 3) for i in range(5)])
    returned = []
    while eng.num_active or eng.num_waiting:
        returned.append(eng.step())
    assert returned == rec.batch_sizes
    assert returned[0] == 3


@grade("a step must refill free slots before it calls the model", "refill", timeout=5)
def test_refill_before_the_call(impl):
    eng, rec = engine(impl, [[1, 2], [3]], batch_size=2)
    collect(eng, impl, [Spec("A", (TAG,), 2), Spec("B", (TAG + 1,), 1)])
    eng.step()
    assert [tags(c) for c in rec.calls] == [{0, 1}]


@grade("the stop token must end the request and be left out of its tokens", "stop_rules",
       timeout=5)
def test_stop_token(impl):
    eng, _ = engine(impl, [[5, 6, 9, 7], [9]], batch_size=2)
    got = collect(eng, impl, [Spec("A", (TAG,), 10, stop_token=9),
                              Spec("B", (TAG + 1,), 10, stop_token=9)])
    eng.run()
    assert [(c.tokens, c.finish_reason) for c in got["A"]] == [([5, 6], "stop")]
    assert [(c.tokens, c.finish_reason) for c in got["B"]] == [([], "stop")]


@grade("max_tokens must cap the generated tokens exactly", "stop_rules", timeout=5)
def test_length(impl):
    # Plans are exactly max_tokens long: asking for one token more exhausts the script.
    eng, rec = engine(impl, [[5], [5, 6, 7]], batch_size=2)
    got = collect(eng, impl, [Spec("A", (TAG,), 1, stop_token=8), Spec("B", (TAG + 1,), 3)])
    eng.run()
    assert [(c.tokens, c.finish_reason) for c in got["A"]] == [([5], "length")]
    assert [(c.tokens, c.finish_reason) for c in got["B"]] == [([5, 6, 7], "length")]
    assert rec.num_calls == 3


@grade("a stop token id above 256 must end the request like any other", "stop_rules",
       timeout=5)
def test_large_stop_token(impl):
    # The caller's stop token and the model's token are equal ints, not the same object.
    eng, _ = engine(impl, [[5, 1000, 7]], batch_size=1)
    got = collect(eng, impl, [Spec("A", (TAG,), 10, stop_token=int("1000"))])
    eng.run()
    assert [(c.tokens, c.finish_reason) for c in got["A"]] == [([5], "stop")]


@grade("max_tokens above 256 must cap the generated tokens exactly", "stop_rules", timeout=5)
def test_long_max_tokens(impl):
    s = Spec("long", (TAG, 1), 300)
    outcome, _, solos = run_stateless(impl, [s], 1, HashModel(vocab_size=50, seed=4))
    outcome.check_solo(solos)


@grade("a batch of more than 256 sequences must decode like smaller ones", "prefixes",
       timeout=10)
def test_batch_above_256(impl):
    specs = [Spec(i, (TAG + i,), 2) for i in range(300)]
    outcome, recorder, solos = run_stateless(impl, specs, 300, HashModel(vocab_size=50, seed=5))
    outcome.check_solo(solos)
    assert recorder.batch_sizes[0] == 300


@grade("a stop token arriving as the last allowed token must finish with stop", "stop_rules",
       timeout=5)
def test_stop_token_beats_length(impl):
    eng, _ = engine(impl, [[4, 9]], batch_size=1)
    got = collect(eng, impl, [Spec("A", (TAG,), 2, stop_token=9)])
    eng.run()
    assert [(c.tokens, c.finish_reason) for c in got["A"]] == [([4], "stop")]


def zero_behind_one(impl, batch_size=2):
    """A (2 tokens) then Z (max_tokens=0), both queued before the first step."""
    eng, rec = engine(impl, [[1, 2], []], batch_size)
    got = collect(eng, impl, [Spec("A", (TAG,), 2), Spec("Z", (TAG + 1,), 0, stop_token=3)])
    return eng, rec, got


@grade("a max_tokens=0 request must complete at once with [] and \"length\"", "refill",
       timeout=5)
def test_zero_max_tokens(impl):
    eng, _, got = zero_behind_one(impl)
    eng.step()
    assert [(c.request_id, c.tokens, c.finish_reason) for c in got.get("Z", [])][:1] == [
        ("Z", [], "length")]


@grade("a max_tokens=0 request must never reach the model", "refill", timeout=5)
def test_zero_never_reaches_the_model(impl):
    eng, rec, _ = zero_behind_one(impl)
    eng.run()
    assert rec.calls and all(tags(call) == {0} for call in rec.calls)


@grade("a max_tokens=0 request's callback must run exactly once", "bookkeeping", timeout=5)
def test_zero_callback_once(impl):
    eng, _, got = zero_behind_one(impl)
    eng.run()
    assert len(got["Z"]) == 1


@grade("a max_tokens=0 request must complete in a step, not in submit", "refill", timeout=5)
def test_zero_completes_in_a_step(impl):
    eng, _, got = zero_behind_one(impl)
    assert "Z" not in got
    eng.step()
    assert "Z" in got


@grade("a max_tokens=0 request behind a full batch must wait for a free slot", "refill",
       timeout=5)
def test_zero_waits_for_a_slot(impl):
    # One slot: A takes it and finishes in step 2; Z completes in step 3's refill.
    eng, _, got = zero_behind_one(impl, batch_size=1)
    finished = []
    for _ in range(3):
        eng.step()
        finished.append(sorted(got))
    assert finished == [[], ["A"], ["A", "Z"]]


@grade("a max_tokens=0 request must not hold up the request queued behind it", "refill",
       timeout=5)
def test_zero_does_not_block(impl):
    eng, rec = engine(impl, [[1, 2], [], [3, 4]], batch_size=1)
    got = collect(eng, impl, [Spec("A", (TAG,), 2), Spec("Z", (TAG + 1,), 0),
                              Spec("C", (TAG + 2,), 2)])
    returned = [eng.step() for _ in range(5)]
    assert returned == [1, 1, 1, 1, 0]
    assert [tags(c) for c in rec.calls] == [{0}, {0}, {2}, {2}]
    assert [c.tokens for c in got["Z"]] == [[]]


def idle_steps(impl):
    """An idle step, then A (2 tokens) with Z (max_tokens=0), then an idle step again;
    returns the four step() results and the call recorder."""
    eng, rec = engine(impl, [[4, 4]], batch_size=3)
    returned = [eng.step()]
    collect(eng, impl, [Spec("A", (TAG,), 2), Spec("Z", (TAG + 1,), 0)])
    returned += [eng.step() for _ in range(3)]
    return returned, rec


@grade("no model call may be made when nothing is active", "prefixes", timeout=5)
def test_no_empty_call(impl):
    _, rec = idle_steps(impl)
    assert rec.batch_sizes == [1, 1]


@grade("step must return 0 when it sends nothing", "prefixes", timeout=5)
def test_idle_step_returns_zero(impl):
    returned, _ = idle_steps(impl)
    assert returned == [0, 1, 1, 0]


@grade("each callback must run exactly once, in the step where its request finishes",
       "bookkeeping", timeout=5)
def test_callback_timing(impl):
    lengths = [3, 1, 4, 2, 2, 1]
    eng, _ = engine(impl, [[7] * n for n in lengths], batch_size=2)
    finished = []
    for i, n in enumerate(lengths):
        eng.submit(impl.Request(i, [TAG + i], n), lambda c: finished.append(c.request_id))
    per_step = []
    for _ in range(9):
        before = len(finished)
        eng.step()
        per_step.append(sorted(finished[before:]))
    # 1: {0,1}, 1 done. 2: {0,2}. 3: {0,2}, 0 done. 4: {2,3}. 5: {2,3}, both done.
    # 6: {4,5}, 5 done. 7: {4}, done.
    assert per_step == [[1], [], [0], [], [2, 3], [5], [4], [], []]


@grade("completions must carry their own request_id after a slot is reused", "bookkeeping",
       timeout=5)
def test_request_ids_after_refill(impl):
    lengths = [1, 3, 2, 1, 4, 1, 2]
    eng, _ = engine(impl, [[10 + i] * n for i, n in enumerate(lengths)], batch_size=2)
    completions = []
    for i, n in enumerate(lengths):
        eng.submit(impl.Request(f"id{i}", [TAG + i], n), completions.append)
    eng.run()
    assert sorted((c.request_id, list(c.tokens)) for c in completions) == sorted(
        (f"id{i}", [10 + i] * n) for i, n in enumerate(lengths))


@grade("submit must only queue: nothing may run before step", "bookkeeping", timeout=5)
def test_submit_only_queues(impl):
    eng, rec = engine(impl, [[1]] * 3, batch_size=2)
    got = collect(eng, impl, [Spec(i, (TAG + i,), 1) for i in range(3)])
    assert (rec.num_calls, got, eng.num_active, eng.num_waiting) == (0, {}, 0, 3)


@grade("num_active and num_waiting must count slots and queue between steps", "bookkeeping",
       timeout=5)
def test_counts(impl):
    eng, _ = engine(impl, [[1, 1]] * 5, batch_size=2)
    collect(eng, impl, [Spec(i, (TAG + i,), 2) for i in range(5)])
    counts = [(eng.num_active, eng.num_waiting)]
    for _ in range(6):
        eng.step()
        counts.append((eng.num_active, eng.num_waiting))
    assert counts == [(0, 5), (2, 3), (0, 3), (2, 1), (0, 1), (1, 0), (0, 0)]


class ListsOnly:
    """A model that accepts only what the prompt promises it: a list of token lists."""

    def __init__(self, model):
        self.model = model

    def __call__(self, prefixes):
        assert isinstance(prefixes, list), f"model_next got a {type(prefixes).__name__}"
        for p in prefixes:
            assert isinstance(p, list), f"a prefix is a {type(p).__name__}, not a list"
        return self.model(prefixes)


@grade("model_next must get a list of token lists", "prefixes", timeout=5)
def test_model_gets_lists(impl):
    model = HashModel(vocab_size=50, seed=6)
    specs = [Spec(i, (TAG + i, i), 3) for i in range(3)]
    outcome = Outcome(impl.DecodingEngine(ListsOnly(Budget(model, 20)), 2), specs, impl)
    outcome.run(max_steps=20)
    outcome.check_solo([solo(model, s) for s in specs])


@grade("the prompt's example must run as described", "refill", timeout=5)
def test_prompt_example(impl):
    # a: [1] -> 2..6 by length; b: [5] -> 6, 7, then 8 stops it in step 3; c, queued third,
    # takes b's slot in step 4 while a still runs (a finishes in step 5).
    recorder = Recorder(lambda ps: [(p[-1] + 1) % 10 for p in ps])
    eng = impl.DecodingEngine(recorder, batch_size=2)
    got = {}
    for r in (impl.Request("a", [1], 5), impl.Request("b", [5], 10, stop_token=8),
              impl.Request("c", [0], 1)):
        eng.submit(r, lambda c: got.setdefault(c.request_id, (list(c.tokens), c.finish_reason)))
    eng.run()
    assert got == {"a": ([2, 3, 4, 5, 6], "length"), "b": ([6, 7], "stop"), "c": ([1], "length")}
    assert [sorted(p[0] for p in call) for call in recorder.calls] == [
        [1, 5], [1, 5], [1, 5], [0, 1], [1]]


@grade("completions must equal solo decoding for any request mix and batch size",
       "bookkeeping")
@given(workloads(stop_sequences=False))
def test_random_mix_matches_solo(impl, work):
    outcome, _, solos = run_stateless(impl, *work)
    outcome.check_solo(solos)


@grade("every model call must hold only live prefixes, at most batch_size of them", "prefixes")
@given(workloads(stop_sequences=False))
def test_random_mix_calls(impl, work):
    specs, batch_size, _ = work
    _, recorder, solos = run_stateless(impl, *work)
    check_calls(recorder.calls, specs, solos, batch_size)


@grade("model calls and finishing steps must equal those of ideal FIFO refill", "refill")
@given(workloads(stop_sequences=False))
def test_random_mix_call_count(impl, work):
    specs, batch_size, _ = work
    outcome, recorder, solos = run_stateless(impl, *work)
    calls, finish = ideal_schedule([len(x.stream) for x in solos], batch_size)
    assert recorder.num_calls == calls
    assert [outcome.step_of[s.rid] for s in specs] == finish
