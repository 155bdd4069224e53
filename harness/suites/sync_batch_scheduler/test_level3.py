"""Level 3: a latency budget that counts the estimated run time of the batch as it would go."""

import math
import time

from harness.marks import level

from .fakes import (
    EARLY_S,
    Caller,
    Recorder,
    check_oldest_leaves_1600ms_after_its_submit,
    scheduler,
    submit_in_order,
    wait_depth,
)

grade = level(3)


@grade("a lone request must leave once its wait plus the estimate for one reaches the budget",
       hint="budget", timeout=6)
def test_lone_request_budget(impl):
    rec = Recorder()
    # estimate(1) = 600 ms of a 1000 ms budget: leave after 400 ms. A full batch would be
    # estimated far over budget, and the budget alone would mean waiting the full second.
    with scheduler(impl, rec, max_batch_size=64, max_wait_ms=math.inf, latency_budget_ms=1000,
                   estimate_batch_ms=lambda n: 500 + 100 * n) as s:
        caller = Caller(s, "a")
        seen = wait_depth(s, 1)
        call = rec.wait_calls(1)[0]
        assert caller.before + 0.400 - EARLY_S <= call.at <= seen + 0.400 + 0.300
        assert caller.result() == ("done", "a")


@grade("a sub-second budget must be kept to its fraction of a second", hint="budget", timeout=6)
def test_sub_second_budget(impl):
    rec = Recorder()
    # estimate(1) = 300 ms of a 700 ms budget: leave after 400 ms, not at once.
    with scheduler(impl, rec, max_batch_size=64, max_wait_ms=math.inf, latency_budget_ms=700,
                   estimate_batch_ms=lambda n: 200 + 100 * n) as s:
        caller = Caller(s, "a")
        seen = wait_depth(s, 1)
        call = rec.wait_calls(1)[0]
        assert caller.before + 0.400 - EARLY_S <= call.at <= seen + 0.400 + 0.300
        assert caller.result() == ("done", "a")


def four_is_too_many(n):
    return 0.0 if n < 4 else 2000.0


@grade("a bigger waiting batch must leave sooner", hint="budget", timeout=6)
def test_bigger_batch_leaves_sooner(impl):
    rec = Recorder()
    # Three waiting requests fit the budget for 1.5 s; a fourth is estimated over it on its own.
    with scheduler(impl, rec, max_batch_size=16, max_wait_ms=math.inf, latency_budget_ms=1500,
                   estimate_batch_ms=four_is_too_many) as s:
        callers = submit_in_order(s, ["a", "b", "c"])
        time.sleep(0.3)  # the worker has long seen the three: the fourth must change its mind
        assert rec.batches == []
        callers.append(Caller(s, "d"))
        call = rec.wait_calls(1)[0]
        assert sorted(call.requests) == ["a", "b", "c", "d"]
        assert call.at <= callers[-1].before + 0.500
        for c in callers:
            c.result()


@grade("the budget must count from the oldest request's own submit", hint="budget", timeout=6)
def test_budget_counts_from_oldest(impl):
    # 2000 ms budget, 400 ms estimate: the oldest leaves 1600 ms after its submit.
    check_oldest_leaves_1600ms_after_its_submit(
        impl, max_batch_size=16, max_wait_ms=math.inf, latency_budget_ms=2000,
        estimate_batch_ms=lambda n: 400.0)


@grade("max_wait_ms must still apply alongside a latency budget", hint="budget", timeout=6)
def test_max_wait_still_applies(impl):
    rec = Recorder()
    with scheduler(impl, rec, max_batch_size=16, max_wait_ms=200, latency_budget_ms=5000,
                   estimate_batch_ms=lambda n: 10.0) as s:
        caller = Caller(s, "a")
        seen = wait_depth(s, 1)
        call = rec.wait_calls(1)[0]
        assert caller.before + 0.200 - EARLY_S <= call.at <= seen + 0.200 + 0.400
        caller.result()


@grade("a full batch must still leave at once under a latency budget", hint="budget", timeout=5)
def test_full_batch_under_budget(impl):
    rec = Recorder()
    with scheduler(impl, rec, max_batch_size=3, max_wait_ms=math.inf, latency_budget_ms=60_000,
                   estimate_batch_ms=lambda n: 1.0) as s:
        callers = [Caller(s, i) for i in range(3)]
        assert [c.result(timeout=2) for c in callers] == [("done", i) for i in range(3)]
