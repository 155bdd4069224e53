"""Level 1: batches in order, retry with a budget at the front of the queue, on_done exactly
once and at once, idempotency keys, bad input."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from harness.marks import level

from .fakes import Worker, at_random, never, on_calls, poison, result
from .helpers import (
    Client,
    check_budget,
    check_no_run_after_outcome,
    check_outcome,
    payload,
    run_all,
    workloads,
)
from .oracle import retry_plan

grade = level(1)

P = [payload(i) for i in range(8)]


@grade("requests must run in submission order", "requeue", timeout=5)
def test_batches_in_submission_order(impl):
    worker = Worker()
    run_all(impl, worker, 5, max_batch_size=2)
    assert [p for call in worker.calls for p in call] == P[:5]


@grade("a batch must hold at most max_batch_size requests", "requeue", timeout=5)
def test_batches_of_at_most_max_batch_size(impl):
    worker = Worker()
    run_all(impl, worker, 5, max_batch_size=2)
    assert [len(call) for call in worker.calls] == [2, 2, 1]


@grade("each request of a good batch must get ok=True and its own result", "requeue", timeout=5)
def test_good_batch_outcomes(impl):
    client = run_all(impl, Worker(), 5, max_batch_size=2)
    for i in range(5):
        o = client.only((i, 0))
        assert o.request_id == i and o.ok is True, o
        assert o.result == result(P[i]), f"{i}: result {o.result!r} is not its own"


@grade("a success must report one more attempt than the crashes charged to it", "retry_budget",
       timeout=5)
@pytest.mark.parametrize("crashes", [0, 2])
def test_success_attempts(impl, crashes):
    client = run_all(impl, Worker(on_calls(*range(1, crashes + 1))), 2, max_batch_size=2,
                     max_attempts=3)
    assert [client.only((i, 0)).attempts for i in range(2)] == [crashes + 1] * 2


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


@grade("in the prompt's example, [a, b] must crash twice and both fail with attempts == 2, "
       "then [c] must succeed with attempts == 1", "retry_budget", timeout=5)
def test_example_from_the_prompt(impl):
    worker = Worker(poison(P[1]))
    client = run_all(impl, worker, 3, max_batch_size=2, max_attempts=2)
    assert worker.calls == [[P[0], P[1]], [P[0], P[1]], [P[2]]]
    check_outcome(client.only((0, 0)), 0, False, 2)
    check_outcome(client.only((1, 0)), 1, False, 2)
    check_outcome(client.only((2, 0)), 2, True, 1, P[2])


@grade("a crash must charge one attempt to every request of its batch", "retry_budget",
       timeout=5)
def test_crash_charges_every_request(impl):
    client = run_all(impl, Worker(on_calls(1)), 3, max_batch_size=3, max_attempts=3)
    assert [client.only((i, 0)).attempts for i in range(3)] == [2, 2, 2]


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
    run_all(impl, worker, 1, max_batch_size=4, max_attempts=max_attempts)
    assert worker.calls == [[P[0]]] * max_attempts


@grade("a request that used its budget must fail with ok=False, attempts == max_attempts and an "
       "error string", "retry_budget", timeout=5)
@pytest.mark.parametrize("max_attempts", [1, 3])
def test_failure_outcome(impl, max_attempts):
    client = run_all(impl, Worker(poison(P[0]), limit=50), 1, max_batch_size=4,
                     max_attempts=max_attempts)
    check_outcome(client.only((0, 0)), 0, False, max_attempts)


@grade("max_attempts must default to 3", "retry_budget", timeout=5)
def test_default_budget(impl):
    worker = Worker(poison(P[0]), limit=50)
    client = Client(worker)
    runner = impl.BatchRunner(worker, max_batch_size=2)
    client.submit(runner, 0, P[0])
    runner.run()
    assert worker.calls == [[P[0]]] * 3
    assert client.only((0, 0)).attempts == 3


@grade("bisection must be off unless asked for", "retry_budget", timeout=5)
def test_bisection_off_by_default(impl):
    worker = Worker(poison(P[0]), limit=50)
    client = Client(worker)
    runner = impl.BatchRunner(worker, max_batch_size=2, max_attempts=2)
    client.submit(runner, 0, P[0])
    client.submit(runner, 1, P[1])
    runner.run()
    assert worker.calls == [[P[0], P[1]]] * 2
    assert not client.only((1, 0)).ok


@grade("an Outcome handed to several callers must be immutable", "idempotency", timeout=5)
def test_outcome_is_frozen(impl):
    o = impl.Outcome("k", True)
    with pytest.raises(AttributeError):  # dataclasses.FrozenInstanceError
        o.ok = False


@grade("an Outcome's result, attempts and error must default as the API shows", "idempotency",
       timeout=5)
def test_outcome_defaults(impl):
    o = impl.Outcome("k", True)
    assert (o.result, o.attempts, o.error) == (None, 0, None)


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


def crashes_with_later_work(impl) -> list[list]:
    """Five requests, max_batch_size=3; call 1 [0, 1, 2] and call 3 crash, and "late" is
    submitted from inside call 1, so it queues behind 3 and 4. Returns the calls."""
    worker = Worker(on_calls(1, 3))
    client = Client(worker)
    runner = impl.BatchRunner(worker, max_batch_size=3, max_attempts=3)
    worker.hook = lambda n, _: n == 1 and client.submit(runner, "late", "late")
    for i in range(5):
        client.submit(runner, i, P[i])
    runner.run()
    return worker.calls


@grade("crashed requests must be retried before later work", "requeue", timeout=5)
def test_retry_before_later_work(impl):
    # call 1 [0,1,2] crashes -> front; call 2 [0,1,2] ok; call 3 [3,4,late] crashes -> front.
    calls = crashes_with_later_work(impl)
    later = {P[3], P[4], "late"}
    assert [set(c) for c in calls] == [set(P[:3]), set(P[:3]), later, later]


@grade("crashed requests must be retried in their original order", "requeue", timeout=5)
def test_retry_in_original_order(impl):
    calls = crashes_with_later_work(impl)
    for i in (0, 2):  # calls 1 and 3 crash: the next call holding their requests keeps the order
        retry = next(c for c in calls[i + 1:] if calls[i][0] in c)
        assert [p for p in retry if p in calls[i]] == calls[i], (calls[i], retry)


@grade("the batch after a crash must be topped up from the queue", "requeue", timeout=5)
def test_retry_is_topped_up(impl):
    worker = Worker(on_calls(1))
    client = Client(worker)
    runner = impl.BatchRunner(worker, max_batch_size=2, max_attempts=3)
    worker.hook = lambda n, _: n == 1 and client.submit(runner, 1, P[1])
    client.submit(runner, 0, P[0])
    runner.run()
    # [0] crashes while 1 arrives: 0 goes back to the front, and 1 fills the rest of the batch.
    assert worker.calls == [[P[0]], [P[0], P[1]]]


@grade("a crash must be any Exception from run_batch", "errors", timeout=5)
@pytest.mark.parametrize("error", [RuntimeError, ValueError, KeyError, "WorkerCrash"])
def test_exceptions_are_crashes(impl, error):
    error = impl.WorkerCrash if error == "WorkerCrash" else error
    check_crash_is_retried(impl, Worker(on_calls(1), how="raise", error=error))


@grade("an answer that is not a list or tuple must count as a crash", "errors", timeout=5)
@pytest.mark.parametrize("how", ["none", "iterator"])
def test_non_lists_are_crashes(impl, how):
    check_crash_is_retried(impl, Worker(on_calls(1), how=how))


@grade("an answer with the wrong number of results must count as a crash", "errors", timeout=5)
@pytest.mark.parametrize("how", ["short", "long"])
def test_wrong_counts_are_crashes(impl, how):
    check_crash_is_retried(impl, Worker(on_calls(1), how=how))


def check_crash_is_retried(impl, worker: Worker) -> None:
    """The first call misbehaves: as a crash, its three requests are charged and retried."""
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


def submits_from_a_callback(impl) -> tuple[Client, Worker]:
    """0, 1, 2 are submitted; 0's on_done submits "next". max_batch_size=2."""
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
    return client, worker


@grade("a request submitted from a callback must be run in the same run()", "callbacks",
       timeout=5)
def test_callback_submits(impl):
    client, _ = submits_from_a_callback(impl)
    check_outcome(client.only(("next", 0)), "next", True, 1, "next")


@grade("a request submitted during run() must join the back of the queue", "callbacks",
       timeout=5)
def test_callback_submit_joins_the_back(impl):
    _, worker = submits_from_a_callback(impl)
    assert worker.calls == [[P[0], P[1]], [P[2], "next"]]


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


def resubmit_after_run(impl, crash: bool) -> tuple[Client, Worker, list]:
    """0 and 1 run (0 fails when `crash`), then 0 is submitted again with an equal payload,
    not the same object, and run() is called again. Returns the client, the worker and the
    calls made before the resubmit."""
    worker = Worker(poison(P[0]) if crash else never)
    client = Client(worker)
    runner = impl.BatchRunner(worker, max_batch_size=1, max_attempts=2)
    client.submit(runner, 0, P[0])
    client.submit(runner, 1, P[1])
    runner.run()
    calls = list(worker.calls)
    client.submit(runner, 0, ("p", 0), n=1)
    runner.run()
    return client, worker, calls


@grade("a known id with an equal payload must replay the very same Outcome inside submit",
       "idempotency", timeout=5)
@pytest.mark.parametrize("crash", [False, True])
def test_replay_inside_submit(impl, crash):
    client, _, _ = resubmit_after_run(impl, crash)
    assert client.only((0, 1)) is client.only((0, 0)), "the replay must be the stored Outcome"


@grade("a known id with an equal payload must never run again", "idempotency", timeout=5)
@pytest.mark.parametrize("crash", [False, True])
def test_known_id_never_runs_again(impl, crash):
    _, worker, calls = resubmit_after_run(impl, crash)
    assert worker.calls == calls, "a known id ran again"


@grade("a replay must not call the earlier on_done again", "callbacks", timeout=5)
@pytest.mark.parametrize("crash", [False, True])
def test_replay_leaves_earlier_on_done_alone(impl, crash):
    client, _, _ = resubmit_after_run(impl, crash)
    assert len(client.got[(0, 0)]) == 1, "the first on_done ran again"


@grade("a failed id must replay its failure, not run again", "idempotency", timeout=5)
def test_failure_is_final(impl):
    worker = Worker(poison(P[0]))
    client = Client(worker)
    runner = impl.BatchRunner(worker, max_batch_size=2, max_attempts=2)
    client.submit(runner, 0, P[0])
    runner.run()
    failed = client.only((0, 0))
    client.submit(runner, 0, P[0], n=1)
    runner.run()
    assert worker.calls == [[P[0]], [P[0]]]
    assert client.only((0, 1)) is failed


def pending_duplicates(impl) -> tuple[Client, Worker]:
    """0 is resubmitted before run(), 1 from inside the crashing first call."""
    worker = Worker(on_calls(1))
    client = Client(worker)
    runner = impl.BatchRunner(worker, max_batch_size=2, max_attempts=3)
    client.submit(runner, 0, P[0])
    client.submit(runner, 1, P[1])
    client.submit(runner, 0, P[0], n=1)  # before run(): pending
    worker.hook = lambda n, _: n == 1 and client.submit(runner, 1, P[1], n=1)  # during a crash
    runner.run()
    return client, worker


@grade("a duplicate of a pending id must not run twice", "idempotency", timeout=5)
def test_pending_duplicates_run_once(impl):
    _, worker = pending_duplicates(impl)
    assert worker.calls == [[P[0], P[1]], [P[0], P[1]]]


@grade("a duplicate of a pending id must get the same Outcome when it arrives", "idempotency",
       timeout=5)
def test_pending_duplicates_share_the_outcome(impl):
    client, _ = pending_duplicates(impl)
    for i in range(2):
        assert client.got[(i, 1)] and client.got[(i, 0)], f"no on_done for {i}"
        assert client.got[(i, 1)][0] is client.got[(i, 0)][0], f"{i}: two different Outcomes"


@grade("on_done must run exactly once for each submit call, duplicates included", "callbacks",
       timeout=5)
def test_on_done_once_per_submit(impl):
    client, _ = pending_duplicates(impl)
    for key in [(0, 0), (0, 1), (1, 0), (1, 1)]:
        client.only(key)


@grade("replaying a known failure during run() must hand the Outcome over inside submit",
       "idempotency", timeout=5)
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


@grade("the same id with another payload must raise ValueError", "idempotency", timeout=5)
@pytest.mark.parametrize("when", ["pending", "known"])
def test_same_id_other_payload(impl, when):
    runner = impl.BatchRunner(Worker(), max_batch_size=2)
    runner.submit("k", P[0], lambda o: None)
    if when == "known":
        runner.run()
    with pytest.raises(ValueError):
        runner.submit("k", P[1], lambda o: None)


@grade("a submit refused for another payload must change nothing, and its on_done must never "
       "run", "idempotency", timeout=5)
@pytest.mark.parametrize("when", ["pending", "known"])
def test_other_payload_changes_nothing(impl, when):
    worker = Worker()
    client = Client(worker)
    runner = impl.BatchRunner(worker, max_batch_size=2)
    client.submit(runner, "k", P[0])
    if when == "known":
        runner.run()
    try:
        runner.submit("k", P[1], client.on_done(("k", 1)))
    except ValueError:
        pass
    runner.run()
    assert worker.calls == [[P[0]]]
    check_outcome(client.only(("k", 0)), "k", True, 1, P[0])
    assert client.got.get(("k", 1), []) == [], "a rejected submit must never get an on_done"


def construct(impl, **kwargs):
    args = {"run_batch": Worker(), "max_batch_size": 2, "max_attempts": 3, **kwargs}
    return impl.BatchRunner(args.pop("run_batch"), **args)


@pytest.mark.parametrize("kwargs", [
    pytest.param(kw, marks=grade(f"{what} must raise ValueError", "errors", timeout=5))
    for kw, what in [({"max_batch_size": 0}, "max_batch_size < 1"),
                     ({"max_batch_size": -2}, "max_batch_size < 1"),
                     ({"max_attempts": 0}, "max_attempts < 1"),
                     ({"max_attempts": -1}, "max_attempts < 1"),
                     ({"run_batch": "not callable"}, "a run_batch that is not callable")]])
def test_bad_settings(impl, kwargs):
    with pytest.raises(ValueError):
        construct(impl, **kwargs)


@grade("an on_done that is not callable must raise ValueError", "errors", timeout=5)
def test_on_done_not_callable(impl):
    runner = impl.BatchRunner(Worker(), max_batch_size=2)
    with pytest.raises(ValueError):
        runner.submit("k", P[0], "not callable")


@grade("a submit refused for its on_done must leave no trace of its id", "errors", timeout=5)
def test_refused_submit_leaves_no_trace(impl):
    worker = Worker()
    runner = impl.BatchRunner(worker, max_batch_size=2)
    try:
        runner.submit("k", P[0], "not callable")
    except ValueError:
        pass
    client = Client(worker)
    client.submit(runner, "k", P[1])  # "k" is still unknown: another payload is fine
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


@grade("under random crashes no request may run past its budget", "retry_budget")
@given(workloads())
def test_random_runs_keep_the_budget(impl, work):
    n, max_batch_size, max_attempts, crash, _ = work
    worker = Worker(crash, limit=1000)
    client = run_all(impl, worker, n, max_batch_size=max_batch_size, max_attempts=max_attempts)
    check_budget(client, worker, n, max_attempts)


@grade("under random crashes no request may run after its outcome is known", "callbacks")
@given(workloads())
def test_random_runs_stop_at_the_outcome(impl, work):
    n, max_batch_size, max_attempts, crash, _ = work
    worker = Worker(crash, limit=1000)
    client = run_all(impl, worker, n, max_batch_size=max_batch_size, max_attempts=max_attempts)
    check_no_run_after_outcome(client, worker, n)


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
