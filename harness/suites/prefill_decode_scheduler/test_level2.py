"""Level 2: chunked prefill."""


from harness.marks import level

from .machine import ALL_CHECKS, configs, run_machine
from .scenario import P, make, run

grade = level(2)


def chunked(impl, budget, requests, **kw):
    return make(impl, budget, requests, chunked_prefill=True, **kw)


@grade("a prompt longer than the budget must be accepted with chunked prefill", hint="chunking")
def test_long_prompt_accepted(impl):
    chunked(impl, 4, [("a", 100, 1)])


@grade("a long prompt must run in chunks of the remaining budget, staying PREFILL until done",
       hint="chunking")
def test_chunks(impl):
    S = impl.State
    sched = chunked(impl, 4, [("a", 10, 1)])
    seen = []
    for _ in range(4):
        seen.append(run(sched, 1)[0])
        seen.append(sched.state("a"))
    assert seen == [P({"a": 4}), S.PREFILL, P({"a": 4}), S.PREFILL, P({"a": 2}), S.DECODE,
                    P(decode=["a"], finished=["a"]), S.FINISHED]


@grade("the incomplete prefill must continue before any new request is admitted", hint="chunking")
def test_continuation_first(impl):
    sched = chunked(impl, 4, [("a", 7, 1), ("b", 3, 1)])
    assert run(sched, 4) == [
        P({"a": 4}),
        P({"a": 3, "b": 1}),
        P({"b": 2}, decode=["a"], finished=["a"]),
        P(decode=["b"], finished=["b"]),
    ]


@grade("with chunked prefill, decodes must still be charged before any chunk", hint="chunking")
def test_decodes_before_chunks(impl):
    sched = chunked(impl, 4, [("a", 2, 2), ("b", 5, 1)])
    assert run(sched, 3) == [
        P({"a": 2, "b": 2}),
        P({"b": 3}, decode=["a"]),
        P(decode=["a", "b"], finished=["a", "b"]),
    ]
    # b's next chunk gets the 3 tokens a's decode left, not the 4 of a whole budget.
    sched = chunked(impl, 4, [("a", 2, 2), ("b", 6, 1)])
    assert run(sched, 4) == [
        P({"a": 2, "b": 2}),
        P({"b": 3}, decode=["a"]),
        P({"b": 1}, decode=["a"], finished=["a"]),
        P(decode=["b"], finished=["b"]),
    ]


@grade("each admitted request must get min(remaining prompt, remaining budget) tokens",
       hint="chunking")
def test_several_admissions_in_one_step(impl):
    sched = chunked(impl, 10, [("a", 3, 1), ("b", 4, 1), ("c", 5, 1)])
    assert run(sched, 3) == [
        P({"a": 3, "b": 4, "c": 3}),
        P({"c": 2}, decode=["a", "b"], finished=["a", "b"]),
        P(decode=["c"], finished=["c"]),
    ]


@grade("with chunked prefill, WAITING requests must still be admitted in the order they were added",
       hint="chunking")
def test_chunked_order_added(impl):
    sched = chunked(impl, 6, [("c", 5, 1), ("a", 1, 1), ("b", 3, 1)])
    assert run(sched, 1) == [P({"c": 5, "a": 1})]


@grade("with chunked prefill, no request may get a chunk of 0 tokens", hint="chunking")
def test_no_zero_chunk(impl):
    sched = chunked(impl, 4, [("a", 4, 1), ("b", 2, 1)])
    assert run(sched, 1) == [P({"a": 4})]
    assert sched.state("b") == impl.State.WAITING


@grade("has_unfinished() must be true while a request is part-way through its prefill",
       hint="chunking")
def test_has_unfinished_during_prefill(impl):
    sched = chunked(impl, 4, [("a", 10, 1)])
    for _ in range(2):
        sched.step()
        assert sched.state("a") == impl.State.PREFILL
        assert sched.has_unfinished()


@grade("with chunked prefill, a new request must still respect max_running", hint="chunking")
def test_chunked_max_running(impl):
    sched = chunked(impl, 6, [("a", 2, 2), ("b", 2, 1)], max_running=1)
    assert run(sched, 5) == [
        P({"a": 2}),
        P(decode=["a"]),
        P(decode=["a"], finished=["a"]),
        P({"b": 2}),
        P(decode=["b"], finished=["b"]),
    ]


LEVEL2 = configs(chunked=True, blocks=False)
GENERIC = ALL_CHECKS - {"oracle"}


@grade("random chunked runs: budget, max_running, FCFS, lifecycle and completion must hold",
       hint="chunking", timeout=20)
def test_random_invariants(impl):
    run_machine(impl, LEVEL2, GENERIC)


@grade("random chunked runs: every plan must be the one the rules determine", hint="chunking",
       timeout=20)
def test_random_exact(impl):
    run_machine(impl, LEVEL2, {"oracle"}, max_examples=40)
