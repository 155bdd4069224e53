"""Level 1: batches in order, retry with a budget at the front of the queue, on_done exactly
once and at once, idempotency keys, bad input."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from harness.marks import level

from .fakes import Worker, at_random, never, on_calls, poison, result
from .helpers import Client, check_outcome, check_run, payload, run_all, workloads
from .oracle import retry_plan

grade = level(1)

P = [payload(i) for i in range(8)]


@grade("requests must run in submission order, at most max_batch_size at a time", "requeue",
       timeout=5)
def test_batches_in_submission_order(impl):
    worker = Worker()
    client = run_all(impl, worker, 5, max_batch_size=2)
    assert worker.calls == [[P[0], P[1]], [P[2], P[3]], [P[4]]]
    for i in range(5):
        check_outcome(client.only((i, 0)), i, True, 1, P[i])


@grade("a run_batch that changes the list it was given must not change any outcome",
       "requeue", timeout=5)
def test_run_batch_gets_a_fresh_list(impl):
    seen = []

    def run_batch(payloads):
        seen.append(list(payloads))
        out = [result(p) for p in payloads]
        payloads.clear()  # a careless worker: the runner's own bookkeeping must not care
        return out

    client = Client()
    runner = impl.BatchRunner(run_batch, max_batch_size=2)
    for i in range(3):
        client.submit(runner, i, P[i])
    runner.run()
    assert seen == [[P[0], P[1]], [P[2]]]
    for i in range(3):
        check_outcome(client.only((i, 0)), i, True, 1, P[i])


@grade("a crash must charge every request of the batch and fail it once the budget is used",
       "retry_budget", timeout=5)
def test_example_from_the_prompt(impl):
    worker = Worker(poison(P[1]))
    client = run_all(impl, worker, 3, max_batch_size=2, max_attempts=2)
    assert worker.calls == [[P[0], P[1]], [P[0], P[1]], [P[2]]]
    check_outcome(client.only((0, 0)), 0, False, 2)
    check_outcome(client.only((1, 0)), 1, False, 2)
    check_outcome(client.only((2, 0)), 2, True, 1, P[2])


@grade("max_attempts must count the first try", "retry_budget", timeout=5)
@pytest.mark.parametrize("max_attempts, crashes, ok", [(1, 1, False), (2, 1, True),
                                                        (3, 2, True), (3, 3, False)])
def test_max_attempts_counts_the_first_try(impl, max_attempts, crashes, ok):
    worker = Worker(on_calls(*range(1, crashes + 1)))
    client = run_all(impl, worker, 2, max_batch_size=2, max_attempts=max_attempts)
    # max_attempts=1: one crash fails at once; otherwise success after k crashes has k + 1.
    want = crashes + 1 if ok else max_attempts
    assert len(worker.calls) == (crashes + 1 if ok else max_attempts)
    for i in range(2):
        check_outcome(client.only((i, 0)), i, ok, want, P[i])


@grade("a poison request must not be retried past its budget", "retry_budget", timeout=5)
@pytest.mark.parametrize("max_attempts", [1, 3, 7])
def test_poison_stops_at_the_budget(impl, max_attempts):
    worker = Worker(poison(P[0]), limit=50)
    client = run_all(impl, worker, 1, max_batch_size=4, max_attempts=max_attempts)
    assert worker.calls == [[P[0]]] * max_attempts
    check_outcome(client.only((0, 0)), 0, False, max_attempts)


@grade("max_attempts must default to 3, and bisection to off", "retry_budget", timeout=5)
def test_defaults(impl):
    worker = Worker(poison(P[0]), limit=50)
    client = Client(worker)
    runner = impl.BatchRunner(worker, max_batch_size=2)
    client.submit(runner, 0, P[0])
    client.submit(runner, 1, P[1])
    runner.run()
    assert worker.calls == [[P[0], P[1]]] * 3
    check_outcome(client.only((0, 0)), 0, False, 3)
    check_outcome(client.only((1, 0)), 1, False, 3)


@grade("an Outcome handed to several callers must be immutable, with the API's defaults",
       "idempotency", timeout=5)
def test_outcome_is_frozen(impl):
    o = impl.Outcome("k", True)
    assert (o.result, o.attempts, o.error) == (None, 0, None)
    with pytest.raises(AttributeError):  # dataclasses.FrozenInstanceError
        o.ok = False


@grade("large budgets and batches must count like small ones", "retry_budget", timeout=10)
def test_large_numbers(impl):
    # Counts above 256 are not shared int objects in CPython: `is` in place of `==` shows here.
    n = 300
    worker = Worker(on_calls(*range(1, n + 1)), limit=n + 5)
    client = Client(worker)
    runner = impl.BatchRunner(worker, max_batch_size=n, max_attempts=n)
    for i in range(n):
        client.submit(runner, i, ("p", i))
    runner.run()
    for i in range(n, 2 * n):
        client.submit(runner, i, ("p", i))
    runner.run()
    assert len(worker.calls) == n + 1 and all(len(c) == n for c in worker.calls)
    for i in range(n):
        check_outcome(client.only((i, 0)), i, False, n)
        check_outcome(client.only((n + i, 0)), n + i, True, 1, ("p", n + i))


@grade("crashed requests must be retried before later work, in their original order",
       "requeue", timeout=5)
def test_retry_before_later_work(impl):
    worker = Worker(on_calls(1, 3))
    client = Client(worker)
    runner = impl.BatchRunner(worker, max_batch_size=3, max_attempts=3)
    # A request submitted from inside the crashing call still joins the back of the queue.
    worker.hook = lambda n, _: n == 1 and client.submit(runner, "late", "late")
    for i in range(5):
        client.submit(runner, i, P[i])
    runner.run()
    # call 1 [0,1,2] crashes -> front; call 2 [0,1,2] ok; call 3 [3,4,late] crashes -> front.
    assert worker.calls == [[P[0], P[1], P[2]], [P[0], P[1], P[2]],
                            [P[3], P[4], "late"], [P[3], P[4], "late"]]
    for i in range(5):
        check_outcome(client.only((i, 0)), i, True, 2, P[i])
    check_outcome(client.only(("late", 0)), "late", True, 2, "late")


@grade("a malformed answer or any exception from run_batch must count as a crash", "errors",
       timeout=5)
@pytest.mark.parametrize("how, error", [
    ("raise", RuntimeError), ("raise", ValueError), ("raise", KeyError), ("raise", "WorkerCrash"),
    ("short", None), ("long", None), ("none", None), ("iterator", None)])
def test_malformed_answers_are_crashes(impl, how, error):
    error = impl.WorkerCrash if error == "WorkerCrash" else error or RuntimeError
    worker = Worker(on_calls(1), how=how, error=error)
    client = run_all(impl, worker, 3, max_batch_size=3, max_attempts=2)
    assert len(worker.calls) == 2
    for i in range(3):
        check_outcome(client.only((i, 0)), i, True, 2, P[i])


@grade("a result given as a tuple must be accepted", "errors", timeout=5)
def test_tuple_answer(impl):
    client = Client()
    runner = impl.BatchRunner(lambda ps: tuple(result(p) for p in ps), max_batch_size=2)
    for i in range(3):
        client.submit(runner, i, P[i])
    runner.run()
    for i in range(3):
        check_outcome(client.only((i, 0)), i, True, 1, P[i])


@grade("on_done must run as soon as the outcome is known, before the next run_batch call",
       "callbacks", timeout=5)
def test_on_done_at_once(impl):
    worker = Worker(poison(P[1]))
    client = run_all(impl, worker, 4, max_batch_size=2, max_attempts=2)
    # calls: [0,1] x, [0,1] x (both fail), [2,3] ok: each on_done before the next call.
    assert client.at == {(0, 0): 2, (1, 0): 2, (2, 0): 3, (3, 0): 3}


@grade("a callback may submit more work during run()", "callbacks", timeout=5)
def test_callback_submits(impl):
    worker = Worker()
    client = Client(worker)
    runner = impl.BatchRunner(worker, max_batch_size=2)
    chained = client.on_done((0, 0))

    def first_done(outcome):
        chained(outcome)
        client.submit(runner, "next", "next")

    runner.submit(0, P[0], first_done)
    client.submit(runner, 1, P[1])
    client.submit(runner, 2, P[2])
    runner.run()
    assert worker.calls == [[P[0], P[1]], [P[2], "next"]]
    check_outcome(client.only(("next", 0)), "next", True, 1, "next")


@grade("a callback resubmitting a batchmate must get its outcome replayed at once",
       "callbacks", timeout=5)
def test_batch_outcomes_stored_before_callbacks(impl):
    worker = Worker()
    runner = impl.BatchRunner(worker, max_batch_size=2)
    own, replays = {}, {}

    def on_done_for(rid, other):
        def on_done(outcome):
            own[rid] = outcome
            got = []
            runner.submit(other, P[other], got.append)
            assert len(got) == 1, f"resubmitting {other} from {rid}'s on_done: no replay in submit"
            replays[other] = got[0]

        return on_done

    runner.submit(0, P[0], on_done_for(0, 1))
    runner.submit(1, P[1], on_done_for(1, 0))
    runner.run()
    assert worker.calls == [[P[0], P[1]]]
    assert replays[0] is own[0] and replays[1] is own[1]


@grade("a known id with an equal payload must replay the very same Outcome inside submit",
       "idempotency", timeout=5)
@pytest.mark.parametrize("crash", [False, True])
def test_replay_inside_submit(impl, crash):
    worker = Worker(poison(P[0]) if crash else never)
    client = Client(worker)
    runner = impl.BatchRunner(worker, max_batch_size=1, max_attempts=2)
    client.submit(runner, 0, P[0])
    client.submit(runner, 1, P[1])
    runner.run()
    calls = list(worker.calls)
    first = client.only((0, 0))
    assert first.ok is not crash
    client.submit(runner, 0, ("p", 0), n=1)  # an equal payload, not the same object
    assert client.only((0, 1)) is first, "the replay must be the stored Outcome itself"
    runner.run()
    assert worker.calls == calls, "a known id ran again"
    assert len(client.got[(0, 0)]) == 1


@grade("a failed request must stay failed: its id replays the failure, never reruns",
       "idempotency", timeout=5)
def test_failure_is_final(impl):
    worker = Worker(poison(P[0]))
    client = Client(worker)
    runner = impl.BatchRunner(worker, max_batch_size=2, max_attempts=2)
    client.submit(runner, 0, P[0])
    runner.run()
    failed = client.only((0, 0))
    assert not failed.ok
    client.submit(runner, 0, P[0], n=1)
    runner.run()
    assert client.only((0, 1)) is failed
    assert worker.calls == [[P[0]], [P[0]]]


@grade("a duplicate of a pending id must wait for the same Outcome, not run twice",
       "idempotency", timeout=5)
def test_pending_duplicates(impl):
    worker = Worker(on_calls(1))
    client = Client(worker)
    runner = impl.BatchRunner(worker, max_batch_size=2, max_attempts=3)
    client.submit(runner, 0, P[0])
    client.submit(runner, 1, P[1])
    client.submit(runner, 0, P[0], n=1)  # before run(): pending
    worker.hook = lambda n, _: n == 1 and client.submit(runner, 1, P[1], n=1)  # during a crash
    runner.run()
    assert worker.calls == [[P[0], P[1]], [P[0], P[1]]]
    for i in range(2):
        first = client.only((i, 0))
        check_outcome(first, i, True, 2, P[i])
        assert client.only((i, 1)) is first


@grade("replaying an id during run() must hand the Outcome over inside submit", "idempotency",
       timeout=5)
def test_replay_during_run(impl):
    worker = Worker(poison(P[0]))
    client = Client(worker)
    runner = impl.BatchRunner(worker, max_batch_size=1, max_attempts=1)
    inside = []
    worker.hook = lambda n, _: n == 2 and (client.submit(runner, 0, P[0], n=1),
                                            inside.append(len(client.got[(0, 1)])))
    client.submit(runner, 0, P[0])
    client.submit(runner, 1, P[1])
    runner.run()
    assert inside == [1], "the replay of a known failure must arrive inside submit"
    assert client.only((0, 1)) is client.only((0, 0))
    assert worker.calls == [[P[0]], [P[1]]]


@grade("the same id with another payload must raise ValueError and change nothing",
       "idempotency", timeout=5)
@pytest.mark.parametrize("when", ["pending", "known"])
def test_same_id_other_payload(impl, when):
    worker = Worker()
    client = Client(worker)
    runner = impl.BatchRunner(worker, max_batch_size=2)
    client.submit(runner, "k", P[0])
    if when == "known":
        runner.run()
    with pytest.raises(ValueError):
        runner.submit("k", P[1], client.on_done(("k", 1)))
    runner.run()
    assert worker.calls == [[P[0]]]
    check_outcome(client.only(("k", 0)), "k", True, 1, P[0])
    assert client.got.get(("k", 1), []) == [], "a rejected submit must never get an on_done"


@grade("bad settings and callbacks must raise ValueError", "errors", timeout=5)
@pytest.mark.parametrize("kwargs", [
    {"max_batch_size": 0}, {"max_batch_size": -2}, {"max_attempts": 0},
    {"max_attempts": -1}, {"run_batch": "not callable"}])
def test_bad_settings(impl, kwargs):
    args = {"run_batch": Worker(), "max_batch_size": 2, "max_attempts": 3, **kwargs}
    run_batch = args.pop("run_batch")
    with pytest.raises(ValueError):
        impl.BatchRunner(run_batch, **args)


@grade("bad settings and callbacks must raise ValueError", "errors", timeout=5)
def test_on_done_not_callable(impl):
    worker = Worker()
    runner = impl.BatchRunner(worker, max_batch_size=2)
    with pytest.raises(ValueError):
        runner.submit("k", P[0], "not callable")
    client = Client(worker)
    client.submit(runner, "k", P[1])  # the rejected submit left no trace of "k"
    runner.run()
    check_outcome(client.only(("k", 0)), "k", True, 1, P[1])
    assert worker.calls == [[P[1]]]


@grade("batches, retries and outcomes must follow the retry rules under random crashes",
       "requeue")
@given(workloads())
def test_random_runs_follow_the_plan(impl, work):
    n, max_batch_size, max_attempts, crash, _ = work
    worker = Worker(crash, limit=1000)
    client = run_all(impl, worker, n, max_batch_size=max_batch_size, max_attempts=max_attempts)
    calls, outcome = retry_plan([payload(i) for i in range(n)], max_batch_size, max_attempts,
                                crash)
    assert worker.calls == calls
    for i in range(n):
        check_outcome(client.only((i, 0)), i, *outcome[payload(i)], payload(i))


@grade("no request may run past its budget or after its outcome is known", "retry_budget")
@given(workloads())
def test_random_runs_keep_the_budget(impl, work):
    n, max_batch_size, max_attempts, crash, _ = work
    worker = Worker(crash, limit=1000)
    client = run_all(impl, worker, n, max_batch_size=max_batch_size, max_attempts=max_attempts)
    check_run(client, worker, n, max_batch_size, max_attempts)
    runs = {payload(i): 0 for i in range(n)}
    for call in worker.calls:
        for p in call:
            runs[p] += 1
    assert all(k <= max_attempts for k in runs.values()), "a request ran past its budget"


class Keys(RuleBasedStateMachine):
    """Random submits, duplicates, conflicting payloads and runs on one runner: every accepted
    submit gets exactly one on_done, and every submit of an id gets the same Outcome object."""

    impl = None

    def __init__(self):
        super().__init__()
        self.worker = Worker(at_random(7, 0.3), limit=2000)
        self.runner = self.impl.BatchRunner(self.worker, max_batch_size=3, max_attempts=2)
        self.client = Client(self.worker)
        self.payloads: dict = {}
        self.count: dict = {}

    @rule(rid=st.integers(0, 5), value=st.integers(0, 1))
    def submit(self, rid, value):
        p = ("p", rid, value)
        if rid in self.payloads and self.payloads[rid] != p:
            with pytest.raises(ValueError):
                self.runner.submit(rid, p, self.client.on_done(("rejected", rid)))
            return
        self.payloads.setdefault(rid, p)
        n = self.count[rid] = self.count.get(rid, -1) + 1
        self.client.submit(self.runner, rid, p, n=n)

    @rule()
    def run(self):
        self.runner.run()
        for rid, n in self.count.items():
            outcomes = [self.client.only((rid, k)) for k in range(n + 1)]
            assert all(o is outcomes[0] for o in outcomes), f"id {rid!r}: different Outcomes"

    @invariant()
    def each_id_runs_within_its_budget(self):
        assert not any(k[0] == "rejected" for k in self.client.got)
        runs: dict = {}
        for call in self.worker.calls:
            for p in call:
                runs[p] = runs.get(p, 0) + 1
        assert all(k <= 2 for k in runs.values()), "an id ran again after its outcome"
        for key, got in self.client.got.items():
            assert len(got) == 1, f"submit {key!r} got {len(got)} on_done calls"


@grade("an id must name one request for the runner's lifetime, whatever the call order",
       "idempotency", timeout=20)
def test_keys_state_machine(impl):
    machine = type("KeysFor", (Keys,), {"impl": impl})
    run_state_machine_as_test(machine, settings=settings(max_examples=40,
                                                         stateful_step_count=15))
