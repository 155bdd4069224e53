"""Level 1: the WAITING -> PREFILL -> DECODE -> FINISHED state machine under a token budget."""

import pytest

from harness.marks import level

from .machine import configs, run_machine
from .scenario import EMPTY, P, make, run

grade = level(1)


# ---- exact scenarios, one rule each ----------------------------------------------------------


@grade("a step must charge its decodes to the budget before admitting new prompts", hint="budget")
def test_decodes_charged_before_admission(impl):
    sched = make(impl, 4, [("a", 4, 2), ("b", 4, 1)])
    assert run(sched, 5) == [
        P({"a": 4}),
        P(decode=["a"]),  # 3 tokens left after a's decode: b's 4 do not fit
        P(decode=["a"], finished=["a"]),
        P({"b": 4}),
        P(decode=["b"], finished=["b"]),
    ]


@grade("a prompt must be admitted only if it fits in what is left of the budget", hint="capacity")
def test_capacity_checked_before_adding(impl):
    sched = make(impl, 4, [("a", 3, 1), ("b", 2, 1)])
    assert run(sched, 3) == [
        P({"a": 3}),
        P({"b": 2}, decode=["a"], finished=["a"]),
        P(decode=["b"], finished=["b"]),
    ]


@grade("requests that fit must not be admitted ahead of an earlier one that does not", hint="fcfs")
def test_no_skipping_ahead_of_a_blocked_head(impl):
    sched = make(impl, 4, [("x", 2, 3), ("big", 3, 1), ("small", 1, 1)])
    assert run(sched, 1) == [P({"x": 2})]
    assert sched.state("small") == impl.State.WAITING
    assert run(sched, 3) == [
        P({"big": 3}, decode=["x"]),
        P({"small": 1}, decode=["x", "big"], finished=["big"]),
        P(decode=["x", "small"], finished=["x", "small"]),
    ]


@grade("WAITING requests must be admitted in the order they were added", hint="fcfs")
def test_admitted_in_order_added(impl):
    sched = make(impl, 10, [("c", 5, 1), ("a", 1, 1), ("b", 3, 1)], max_running=2)
    assert run(sched, 1) == [P({"c": 5, "a": 1})]
    assert sched.state("b") == impl.State.WAITING


@grade("max_running must default to token_budget", hint="capacity")
def test_max_running_default(impl):
    sched = make(impl, 400, [(i, 1, 1) for i in range(300)])
    assert sorted(sched.step().prefill) == list(range(300))


@grade("a max_running above 256 must cap the running requests too", hint="capacity")
def test_large_max_running(impl):
    sched = make(impl, 400, [(i, 1, 5) for i in range(301)], max_running=300)
    assert sorted(sched.step().prefill) == list(range(300))
    assert sched.state(300) == impl.State.WAITING


@grade("a max_new_tokens above 256 must finish the request on its last token", hint="lifecycle")
def test_long_generation(impl):
    sched = make(impl, 4, [("a", 1, 300)])
    plans = [sched.step() for _ in range(301)]  # one prefill step, then 300 decodes
    assert [p.finished for p in plans[-2:]] == [[], ["a"]]
    assert sched.state("a") == impl.State.FINISHED and not sched.has_unfinished()


@grade("the Scheduler must take token_budget and its settings by the names the stub gives them",
       hint="budget")
def test_settings_by_name(impl):
    sched = impl.Scheduler(token_budget=4, max_running=2)
    sched.add_request("a", 3, 1)
    assert sched.step().prefill == {"a": 3}


@grade("running requests must never exceed max_running", hint="capacity")
def test_max_running(impl):
    sched = make(impl, 10, [(0, 1, 2), (1, 1, 2), (2, 1, 2)], max_running=2)
    assert run(sched, 6) == [
        P({0: 1, 1: 1}),
        P(decode=[0, 1]),
        P(decode=[0, 1], finished=[0, 1]),  # finishing requests still hold their slots
        P({2: 1}),
        P(decode=[2]),
        P(decode=[2], finished=[2]),
    ]


@grade("prefill must generate nothing: the first token comes in the next step", hint="lifecycle")
def test_first_token_in_the_step_after_prefill(impl):
    sched = make(impl, 8, [("a", 3, 1)])
    assert run(sched, 1) == [P({"a": 3})]
    assert sched.state("a") == impl.State.DECODE
    assert run(sched, 1) == [P(decode=["a"], finished=["a"])]
    assert sched.state("a") == impl.State.FINISHED


@grade("has_unfinished() must be true until every request is FINISHED", hint="lifecycle")
def test_has_unfinished(impl):
    sched = impl.Scheduler(8)
    assert not sched.has_unfinished()
    sched.add_request("a", 3, 1)
    seen = [sched.has_unfinished()]  # WAITING
    for _ in range(3):  # DECODE, FINISHED, FINISHED
        sched.step()
        seen.append(sched.has_unfinished())
    assert seen == [True, True, False, False]


@grade("a request must finish in the step of its max_new_tokens-th token", hint="lifecycle")
def test_finish_on_last_token(impl):
    sched = make(impl, 8, [("a", 2, 3)])
    assert run(sched, 4) == [
        P({"a": 2}),
        P(decode=["a"]),
        P(decode=["a"]),
        P(decode=["a"], finished=["a"]),
    ]


@grade("a finished request must never be scheduled again", hint="lifecycle")
def test_never_scheduled_again(impl):
    sched = make(impl, 8, [("a", 2, 3)])
    run(sched, 4)
    assert run(sched, 2) == [EMPTY, EMPTY]
    assert sched.state("a") == impl.State.FINISHED


@grade("ids of any hashable type must work side by side", hint="lifecycle")
def test_any_hashable_ids(impl):
    ids = [7, "a", (1, 2), None, 2.5]
    sched = make(impl, 8, [(i, 1, 2) for i in ids])
    assert run(sched, 3) == [P({i: 1 for i in ids}), P(decode=ids), P(decode=ids, finished=ids)]


@grade("a request finishing in a step must keep its running slot for that whole step",
       hint="lifecycle")
def test_finishing_request_holds_its_slot(impl):
    sched = make(impl, 10, [("a", 2, 1), ("b", 2, 1)], max_running=1)
    assert run(sched, 2) == [P({"a": 2}), P(decode=["a"], finished=["a"])]
    assert sched.state("b") == impl.State.WAITING


@grade("a finished request's slot must be free from the next step on", hint="lifecycle")
def test_finished_slot_is_free_next_step(impl):
    sched = make(impl, 10, [("a", 2, 1), ("b", 2, 1)], max_running=1)
    run(sched, 2)
    assert run(sched, 2) == [P({"b": 2}), P(decode=["b"], finished=["b"])]


@grade("state() must report WAITING, DECODE and FINISHED as the request moves", hint="lifecycle")
def test_states(impl):
    S = impl.State
    sched = make(impl, 3, [("a", 3, 2), ("b", 1, 1)])
    seen = [(sched.state("a"), sched.state("b"))]
    while sched.has_unfinished():
        sched.step()
        seen.append((sched.state("a"), sched.state("b")))
    assert seen == [
        (S.WAITING, S.WAITING),
        (S.DECODE, S.WAITING),
        (S.DECODE, S.DECODE),
        (S.FINISHED, S.FINISHED),
    ]
    assert {s.value for s in S} == {"waiting", "prefill", "decode", "finished"}


@grade("state() of an unknown id must raise KeyError", hint="lifecycle")
def test_unknown_id(impl):
    sched = make(impl, 4, [("a", 1, 1)])
    with pytest.raises(KeyError):
        sched.state("nope")


@grade("an idle scheduler must step to an empty plan", hint="lifecycle")
def test_idle(impl):
    plan = impl.Scheduler(4).step()
    assert (dict(plan.prefill), list(plan.decode), list(plan.finished), list(plan.preempted)) \
        == ({}, [], [], [])
    assert plan.num_tokens == 0


@grade("free_blocks must be None without num_kv_blocks", hint="lifecycle")
def test_free_blocks_none(impl):
    sched = make(impl, 4, [("a", 2, 1)])
    seen = [sched.free_blocks]
    for _ in range(2):
        sched.step()
        seen.append(sched.free_blocks)
    assert seen == [None, None, None]


def a_plan(impl):
    return impl.StepPlan(prefill={"a": 3, "b": 2}, decode=["c", "d"], finished=["d"])


@grade("StepPlan.num_tokens must count prefill tokens plus one per decode", hint="budget")
def test_step_plan(impl):
    assert a_plan(impl).num_tokens == 7


@grade("StepPlan.preempted must default to empty", hint="lifecycle")
def test_step_plan_preempted_default(impl):
    assert list(a_plan(impl).preempted) == []


@grade("StepPlan must be a frozen dataclass", hint="lifecycle")
def test_step_plan_frozen(impl):
    with pytest.raises(AttributeError):
        a_plan(impl).decode = []


@grade("StepPlan.prefill must list only the ids that processed prompt tokens", hint="lifecycle")
def test_prefill_lists_only_prefilled_ids(impl):
    sched = make(impl, 4, [("a", 2, 2), ("b", 3, 1)])
    assert [dict(sched.step().prefill) for _ in range(3)] == [{"a": 2}, {"b": 3}, {}]


# ---- bad input ---------------------------------------------------------------------------------

BAD_SCHEDULERS = [
    ("token_budget 0", (0,), {}),
    ("token_budget -3", (-3,), {}),
    ("max_running 0", (4,), {"max_running": 0}),
    ("max_running above token_budget", (4,), {"max_running": 5}),
]


@pytest.mark.parametrize(
    "args, kwargs",
    [pytest.param(a, k, id=what, marks=grade(f"Scheduler with {what} must raise ValueError",
                                              hint="errors"))
     for what, a, k in BAD_SCHEDULERS])
def test_bad_scheduler(impl, args, kwargs):
    with pytest.raises(ValueError) as info:
        impl.Scheduler(*args, **kwargs)
    assert str(info.value), "the ValueError must say what is wrong"


BAD_REQUESTS = [
    ("prompt_len 0", 0, 1),
    ("max_new_tokens 0", 2, 0),
    ("a prompt longer than the budget without chunked prefill", 9, 1),
]


@pytest.mark.parametrize(
    "prompt_len, max_new_tokens",
    [pytest.param(p, m, id=what, marks=grade(f"add_request with {what} must raise ValueError",
                                              hint="errors"))
     for what, p, m in BAD_REQUESTS])
def test_bad_request(impl, prompt_len, max_new_tokens):
    sched = impl.Scheduler(8)
    with pytest.raises(ValueError) as info:
        sched.add_request("r", prompt_len, max_new_tokens)
    assert str(info.value), "the ValueError must say what is wrong"


@grade("a reused request id must raise ValueError, even a finished request's", hint="errors")
def test_reused_id(impl):
    sched = make(impl, 8, [("a", 2, 1)])
    with pytest.raises(ValueError):
        sched.add_request("a", 1, 1)
    run(sched, 2)
    assert sched.state("a") == impl.State.FINISHED
    with pytest.raises(ValueError):
        sched.add_request("a", 1, 1)


@grade("the limits themselves must be accepted: max_running = token_budget, prompt = budget",
       hint="errors")
def test_limits_accepted(impl):
    sched = make(impl, 4, [("a", 4, 1)], max_running=4)
    assert run(sched, 2) == [P({"a": 4}), P(decode=["a"], finished=["a"])]


# ---- random add/step sequences -----------------------------------------------------------------

LEVEL1 = configs(chunked=False, blocks=False)


@grade("random runs: a step must stay within token_budget and max_running", hint="budget",
       timeout=20)
def test_random_budget(impl):
    run_machine(impl, LEVEL1, {"budget"})


@grade("random runs: no decode before prefill, none after finishing, tokens counted right",
       hint="lifecycle", timeout=20)
def test_random_transitions(impl):
    run_machine(impl, LEVEL1, {"transitions"})


@grade("random runs: requests must be admitted first-come-first-served", hint="fcfs", timeout=20)
def test_random_fcfs(impl):
    run_machine(impl, LEVEL1, {"fcfs"})


@grade("random runs: every request must finish with exactly max_new_tokens tokens, in time",
       hint="lifecycle", timeout=20)
def test_random_liveness(impl):
    run_machine(impl, LEVEL1, {"liveness"})


@grade("random runs: every plan must be the one the rules determine", hint="budget", timeout=20)
def test_random_exact(impl):
    run_machine(impl, LEVEL1, {"oracle"}, max_examples=40)
