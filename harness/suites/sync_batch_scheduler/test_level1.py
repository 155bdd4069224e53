"""Level 1: batching by size and by the oldest request's wait, from many threads."""

import math
import statistics
import threading
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.marks import level

from .fakes import (
    EARLY_S,
    Caller,
    Recorder,
    check_oldest_leaves_600ms_after_its_submit,
    close_soon,
    scheduler,
    submit_in_order,
    wait_depth,
)

grade = level(1)


# First, so a scheduler that never dispatches a lone request costs seconds, not the whole run.
@grade("a lone request must be answered once max_wait_ms has passed", hint="timeout", timeout=4)
def test_lone_request_is_answered(impl):
    rec = Recorder()
    with scheduler(impl, rec, max_batch_size=8, max_wait_ms=50) as s:
        assert Caller(s, "only").result() == ("done", "only")
        assert rec.batches == [["only"]]


@grade("a full batch must leave at once, without waiting out max_wait_ms", hint="trigger",
       timeout=5)
def test_full_batch_leaves_at_once(impl):
    rec = Recorder()
    with scheduler(impl, rec, max_batch_size=4, max_wait_ms=60_000) as s:
        callers = [Caller(s, i) for i in range(4)]
        assert [c.result() for c in callers] == [("done", i) for i in range(4)]
        assert [sorted(b) for b in rec.batches] == [[0, 1, 2, 3]]


@grade("the scheduler must take run_batch and its settings by the names the stub gives them",
       hint="trigger", timeout=5)
def test_settings_by_name(impl):
    rec = Recorder()
    s = impl.BatchScheduler(run_batch=rec, max_batch_size=1, max_wait_ms=0)
    try:
        assert Caller(s, "a").result() == ("done", "a")
    finally:
        close_soon(s)


@grade("a full batch must leave at once with a max_batch_size above 256 too", hint="trigger",
       timeout=10)
def test_large_full_batch_leaves_at_once(impl):
    rec = Recorder()
    with scheduler(impl, rec, max_batch_size=300, max_wait_ms=60_000) as s:
        callers = [Caller(s, i) for i in range(300)]
        assert [c.result() for c in callers] == [("done", i) for i in range(300)]
        assert [sorted(b) for b in rec.batches] == [list(range(300))]


@grade("a batch must not leave before the oldest request has waited max_wait_ms", hint="trigger",
       timeout=5)
def test_not_dispatched_early(impl):
    rec = Recorder()
    with scheduler(impl, rec, max_batch_size=8, max_wait_ms=300) as s:
        callers = submit_in_order(s, ["a", "b", "c"])
        call = rec.wait_calls(1)[0]
        assert call.at >= callers[0].before + 0.300 - EARLY_S
        assert sorted(call.requests) == ["a", "b", "c"]
        for c in callers:
            c.result()


@grade("a lone request must leave soon after max_wait_ms, not much later", hint="trigger",
       timeout=5)
def test_dispatched_on_time(impl):
    rec = Recorder()
    with scheduler(impl, rec, max_batch_size=8, max_wait_ms=300) as s:
        caller = Caller(s, "a")
        seen = wait_depth(s, 1)
        call = rec.wait_calls(1)[0]
        assert caller.before + 0.300 - EARLY_S <= call.at <= seen + 0.300 + 0.400
        caller.result()


@grade("the wait must count from the oldest request's own submit, not from later arrivals",
       hint="oldest", timeout=6)
def test_wait_counts_from_oldest(impl):
    check_oldest_leaves_600ms_after_its_submit(impl, max_batch_size=8, max_wait_ms=600)


@grade("requests must keep queueing while a batch runs", hint="lock", timeout=3)
def test_submit_while_batch_runs(impl):
    rec = Recorder(gated=True)
    with scheduler(impl, rec, max_batch_size=4, max_wait_ms=0) as s:
        x = Caller(s, "x")
        rec.wait_calls(1)
        # Submitting must not wait for the GPU: the caller is queued while 'x' still runs.
        callers = [Caller(s, i) for i in range(3)]
        wait_depth(s, 3, timeout=2)
        rec.release()
        for c in [x, *callers]:
            c.result()


@grade("a batch must take the waiting requests in submit order", hint="fifo", timeout=5)
def test_fifo(impl):
    rec = Recorder(gated=True)
    with scheduler(impl, rec, max_batch_size=3, max_wait_ms=0) as s:
        x = Caller(s, "x")
        rec.wait_calls(1)
        callers = submit_in_order(s, [f"r{i}" for i in range(5)])
        rec.release()
        for c in [x, *callers]:
            assert c.result() == ("done", c.request)
        assert rec.batches == [["x"], ["r0", "r1", "r2"], ["r3", "r4"]]


@grade("a batch must never hold more than max_batch_size requests, even when many wait",
       hint="size", timeout=5)
def test_batch_size_cap(impl):
    rec = Recorder(gated=True)
    with scheduler(impl, rec, max_batch_size=3, max_wait_ms=0) as s:
        x = Caller(s, "x")
        rec.wait_calls(1)
        callers = [Caller(s, i) for i in range(10)]
        wait_depth(s, 10)
        rec.release()
        for c in [x, *callers]:
            c.result()
        assert [len(b) for b in rec.batches] == [1, 3, 3, 3, 1]


@grade("queue_depth must count the waiting requests, not the batch in flight", hint="depth",
       timeout=5)
def test_queue_depth(impl):
    rec = Recorder(gated=True)
    with scheduler(impl, rec, max_batch_size=4, max_wait_ms=0) as s:
        assert s.queue_depth == 0
        x = Caller(s, "x")
        rec.wait_calls(1)
        assert s.queue_depth == 0
        callers = submit_in_order(s, ["a", "b"])
        assert s.queue_depth == 2
        rec.release()
        for c in [x, *callers]:
            c.result()
        assert s.queue_depth == 0


@grade("each caller must get its own response", hint="routing", timeout=6)
def test_each_caller_gets_its_own(impl):
    rec = Recorder(respond=lambda r: r * r + 1)
    with scheduler(impl, rec, max_batch_size=4, max_wait_ms=5) as s:
        callers = [Caller(s, i) for i in range(40)]
        assert [c.result() for c in callers] == [i * i + 1 for i in range(40)]
        assert sorted(r for b in rec.batches for r in b) == list(range(40))


@grade("equal or unhashable requests must each get their own response", hint="routing", timeout=5)
def test_equal_and_unhashable_requests(impl):
    count = iter(range(10**6))
    # One fresh tag per position: a response handed to two callers shows up twice.
    rec = Recorder(gated=True, answer=lambda reqs: [(r, next(count)) for r in reqs])
    with scheduler(impl, rec, max_batch_size=8, max_wait_ms=0) as s:
        x = Caller(s, "x")
        rec.wait_calls(1)
        requests = ["same", "same", [1, 2], {"k": 1}, [1, 2], "same", None]
        callers = submit_in_order(s, requests)
        rec.release()
        responses = [c.result() for c in [x, *callers]]
        assert [r for r, _ in responses] == ["x", *requests]
        assert len({tag for _, tag in responses}) == len(responses)


@grade("with max_wait_ms=inf only a full batch may leave", hint="trigger", timeout=5)
def test_infinite_wait(impl):
    rec = Recorder()
    with scheduler(impl, rec, max_batch_size=3, max_wait_ms=math.inf) as s:
        callers = submit_in_order(s, ["a", "b"])
        time.sleep(0.5)
        assert rec.batches == [] and s.queue_depth == 2
        callers.append(Caller(s, "c"))
        for c in callers:
            c.result()
        assert rec.batches == [["a", "b", "c"]]


@grade("with max_wait_ms=0 a request must be dispatched as soon as the worker is free",
       hint="polling", timeout=8)
def test_zero_wait_is_immediate(impl):
    rec = Recorder()
    with scheduler(impl, rec, max_batch_size=8, max_wait_ms=0) as s:
        round_trips = []
        for i in range(30):
            began = time.monotonic()
            assert s.submit(i) == ("done", i)
            round_trips.append(time.monotonic() - began)
        # A round trip is well under a millisecond; a worker that naps 50 ms between looks
        # makes nearly every one of them 50 ms long.
        assert statistics.median(round_trips) < 0.025


@st.composite
def traffic(draw):
    threads = draw(st.integers(1, 6))
    return {
        "max_batch_size": draw(st.integers(1, 5)),
        "max_wait_ms": draw(st.sampled_from([0, 1, 5])),
        "cost": draw(st.sampled_from([0, 0.0005])),
        "gaps": [draw(st.lists(st.sampled_from([0, 0, 0.001]), min_size=1, max_size=6))
                 for _ in range(threads)],
    }


@grade("every request must be answered once, by batches that never overlap, are never empty "
       "and never exceed max_batch_size", hint="invariants", timeout=30)
@settings(max_examples=25)
@given(traffic())
def test_many_threads_invariants(impl, t):
    rec = Recorder(seconds=t["cost"])
    answers: dict = {}

    def client(tid, gaps):
        for k, gap in enumerate(gaps):
            time.sleep(gap)
            answers[tid, k] = s.submit((tid, k))

    with scheduler(impl, rec, max_batch_size=t["max_batch_size"],
                   max_wait_ms=t["max_wait_ms"]) as s:
        threads = [threading.Thread(target=client, args=(tid, gaps), daemon=True)
                   for tid, gaps in enumerate(t["gaps"])]
        for th in threads:
            th.start()
        for th in threads:
            th.join(5)
            assert not th.is_alive(), "a submit never returned"
    expected = sorted((tid, k) for tid, gaps in enumerate(t["gaps"]) for k in range(len(gaps)))
    assert sorted(answers) == expected
    assert all(answers[key] == ("done", key) for key in expected)
    assert sorted(r for b in rec.batches for r in b) == expected
    assert all(1 <= len(b) <= t["max_batch_size"] for b in rec.batches)
    assert rec.overlaps == 0
