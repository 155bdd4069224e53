"""Level 2: bisection isolates the poison, depth first, charging only a request alone."""

import pytest
from hypothesis import given

from harness.marks import level

from .fakes import Worker, either, on_calls, poison
from .helpers import Client, check_outcome, payload, run_all, workloads
from .oracle import bisect_plan, poison_depth

grade = level(2, "bisection")

P = [payload(i) for i in range(70)]


def bisect_all(impl, worker, n, **kw):
    return run_all(impl, worker, n, bisect=True, **kw)


@grade("bisection must split a crashed batch into its first ceil(n/2) and its last floor(n/2) "
       "requests")
@pytest.mark.parametrize("position", range(5))
def test_split_sizes_for_five(impl, position):
    worker = Worker(poison(P[position]), limit=50)
    bisect_all(impl, worker, 5, max_batch_size=5, max_attempts=2)
    # The split tree of 5: [0..4] -> [0,1,2] | [3,4]; [0,1,2] -> [0,1] | [2]; [0,1] -> [0] | [1].
    calls, _ = bisect_plan(P[:5], 5, 2, poison(P[position]))
    assert sorted(worker.calls) == sorted(calls), "the calls hold other halves than the plan"


@grade("bisection must resolve the first half completely before it runs the second")
def test_split_depth_first(impl):
    # n = 4 halves evenly at every level, so only the order of the calls can differ.
    worker = Worker(poison(P[0]), limit=50)
    bisect_all(impl, worker, 4, max_batch_size=4, max_attempts=2)
    assert worker.calls == [P[:4], P[:2], [P[0]], [P[0]], [P[1]], P[2:4]]


POISONS = [(5, 0, 2), (5, 1, 2), (5, 2, 2), (5, 3, 2), (5, 4, 2), (5, 0, 3), (5, 4, 1),
           (8, 5, 2), (64, 37, 3)]


@grade("a poison at depth d must crash the worker d + max_attempts times in 2d + max_attempts "
       "calls")
@pytest.mark.parametrize("n, position, max_attempts", POISONS)
def test_poison_cost(impl, n, position, max_attempts):
    worker = Worker(poison(P[position]), limit=500)
    bisect_all(impl, worker, n, max_batch_size=n, max_attempts=max_attempts)
    d = poison_depth(n, position)
    assert (worker.crashes, len(worker.calls)) == (d + max_attempts, 2 * d + max_attempts)


@grade("innocent batchmates of a poison must succeed with attempts == 1 under bisection")
@pytest.mark.parametrize("n, position, max_attempts", POISONS[5:])
def test_innocents_are_not_charged(impl, n, position, max_attempts):
    worker = Worker(poison(P[position]), limit=500)
    client = bisect_all(impl, worker, n, max_batch_size=n, max_attempts=max_attempts)
    for i in range(n):
        if i == position:
            check_outcome(client.only((i, 0)), i, False, max_attempts)
        else:
            check_outcome(client.only((i, 0)), i, True, 1, P[i])


@grade("a poison must fail with ok=False, attempts == max_attempts and an error string under "
       "bisection", "retry_budget")
@pytest.mark.parametrize("max_attempts", [1, 3])
def test_poison_failure_outcome(impl, max_attempts):
    client = bisect_all(impl, Worker(poison(P[1]), limit=50), 3, max_batch_size=3,
                        max_attempts=max_attempts)
    check_outcome(client.only((1, 0)), 1, False, max_attempts)


@grade("a crashed batch must be resolved completely before later work runs")
def test_depth_first_before_later_work(impl):
    worker = Worker(poison(P[1]), limit=50)
    client = Client(worker)
    runner = impl.BatchRunner(worker, max_batch_size=4, max_attempts=2, bisect=True)
    late = client.on_done((0, 0))

    def zero_done(outcome):  # work submitted meanwhile waits for the whole split tree
        late(outcome)
        client.submit(runner, "late", "late")

    runner.submit(0, P[0], zero_done)
    for i in range(1, 6):
        client.submit(runner, i, P[i])
    runner.run()
    # The split tree of [0..3] takes six calls; [4, 5] and "late" (from 0's on_done) wait.
    assert worker.calls[6:] == [[P[4], P[5], "late"]], worker.calls
    assert all(set(call) <= set(P[:4]) for call in worker.calls[:6]), worker.calls


def crashes_alone(impl) -> Client:
    """1 [0,1,2] x; 2 [0,1] x; 3 [0] x (charged); 4 [0] ok (attempts 2); 5 [1] ok; 6 [2] x
    (charged); 7 [2] ok (attempts 2)."""
    return bisect_all(impl, Worker(on_calls(1, 2, 3, 6)), 3, max_batch_size=3, max_attempts=3)


@grade("a request that crashes alone must be run alone again at once", "retry_budget")
def test_alone_retried_at_once(impl):
    client = crashes_alone(impl)
    assert client.worker.calls == [P[:3], P[:2], [P[0]], [P[0]], [P[1]], [P[2]], [P[2]]]


@grade("under bisection attempts must count the crashes a request had alone, plus one",
       "retry_budget")
def test_attempts_count_crashes_alone(impl):
    client = crashes_alone(impl)
    assert [client.only((i, 0)).attempts for i in range(3)] == [2, 1, 2]


@grade("a large budget must be counted exactly under bisection", "retry_budget", timeout=10)
def test_large_budget_under_bisection(impl):
    worker = Worker(poison(P[1]), limit=400)
    client = bisect_all(impl, worker, 2, max_batch_size=2, max_attempts=300)
    assert worker.calls == [P[:2], [P[0]]] + [[P[1]]] * 300
    check_outcome(client.only((1, 0)), 1, False, 300)


@grade("a malformed answer must be bisected like an exception")
@pytest.mark.parametrize("how", ["short", "long", "none"])
def test_malformed_answers_are_bisected(impl, how):
    worker = Worker(poison(P[2]), how=how, limit=50)
    client = bisect_all(impl, worker, 4, max_batch_size=4, max_attempts=2)
    assert worker.calls == [P[:4], P[:2], P[2:4], [P[2]], [P[2]], [P[3]]]
    assert [client.only((i, 0)).ok for i in range(4)] == [True, True, False, True]


@grade("on_done under bisection must run as soon as each outcome is known", "callbacks")
def test_on_done_at_once_under_bisection(impl):
    worker = Worker(poison(P[2]))
    client = bisect_all(impl, worker, 4, max_batch_size=4, max_attempts=2)
    # calls: 1 [0..3] x, 2 [0,1] ok, 3 [2,3] x, 4 [2] x, 5 [2] x (fails), 6 [3] ok
    assert client.at == {(0, 0): 2, (1, 0): 2, (2, 0): 5, (3, 0): 6}


@grade("idempotency keys must hold under bisection too", "idempotency")
def test_keys_under_bisection(impl):
    worker = Worker(poison(P[1]))
    client = Client(worker)
    runner = impl.BatchRunner(worker, max_batch_size=2, max_attempts=2, bisect=True)
    client.submit(runner, 0, P[0])
    client.submit(runner, 1, P[1])
    client.submit(runner, 1, P[1], n=1)  # pending duplicate
    runner.run()
    client.submit(runner, 1, P[1], n=2)  # a known failure is replayed, not rerun
    client.submit(runner, 0, P[0], n=1)
    runner.run()
    assert worker.calls == [P[:2], [P[0]], [P[1]], [P[1]]]
    assert client.only((1, 1)) is client.only((1, 0)) is client.only((1, 2))
    assert client.only((0, 1)) is client.only((0, 0))
    with pytest.raises(ValueError):
        runner.submit(1, P[0], client.on_done(("rejected", 1)))
    assert ("rejected", 1) not in client.got


@grade("every innocent request must succeed under bisection, whatever the poison set")
@given(workloads(transient=False))
def test_random_poison_sets(impl, work):
    n, max_batch_size, max_attempts, crash, bad = work
    worker = Worker(crash, limit=2000)
    client = bisect_all(impl, worker, n, max_batch_size=max_batch_size,
                        max_attempts=max_attempts)
    for i in range(n):
        if i in bad:
            check_outcome(client.only((i, 0)), i, False, max_attempts)
        else:
            check_outcome(client.only((i, 0)), i, True, 1, payload(i))


@grade("bisection calls and outcomes must follow the rules under random crashes")
@given(workloads())
def test_random_crashes_follow_the_plan(impl, work):
    n, max_batch_size, max_attempts, crash, _ = work
    worker = Worker(crash, limit=2000)
    client = bisect_all(impl, worker, n, max_batch_size=max_batch_size,
                        max_attempts=max_attempts)
    calls, outcome = bisect_plan([payload(i) for i in range(n)], max_batch_size, max_attempts,
                                 crash)
    assert worker.calls == calls
    for i in range(n):
        check_outcome(client.only((i, 0)), i, *outcome[payload(i)], payload(i))


@grade("a poison must not be retried past its budget under bisection", "retry_budget")
@pytest.mark.parametrize("max_attempts", [1, 4])
def test_poison_budget_under_bisection(impl, max_attempts):
    worker = Worker(either(poison(P[0]), poison(P[3])), limit=50)
    client = bisect_all(impl, worker, 4, max_batch_size=4, max_attempts=max_attempts)
    alone = [c for c in worker.calls if len(c) == 1 and c[0] in (P[0], P[3])]
    assert alone == [[P[0]]] * max_attempts + [[P[3]]] * max_attempts
    assert [client.only((i, 0)).attempts for i in range(4)] == [max_attempts, 1, 1, max_attempts]
