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
    check_oldest_leaves_1600ms_after_its_submit,
    close_soon,
    hold_full_batch,
    scheduler,
    sleep_until,
    submit_in_order,
    wait_depth,
)

grade = level(1)


# First, so a scheduler that never dispatches a lone request costs seconds, not the whole run.
@grade("a lone request must be answered once max_wait_ms has passed", hint="timeout", timeout=4)
def test_lone_request_is_answered(impl):
    rec = Recorder()
    with scheduler(impl, rec, max_batch_size=8, max_wait_ms=50, level=1) as s:
        assert Caller(s, "only").result() == ("done", "only")
        assert rec.batches == [["only"]]


@grade("a full batch must leave at once, without waiting out max_wait_ms", hint="trigger",
       timeout=5)
def test_full_batch_leaves_at_once(impl):
    rec = Recorder()
    with scheduler(impl, rec, max_batch_size=4, max_wait_ms=60_000, level=1) as s:
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
        close_soon(s, cleanup=True)


@grade("submit must block until run_batch has answered its batch", hint="routing", timeout=5)
def test_submit_blocks_until_its_batch_has_run(impl):
    rec = Recorder(gated=True)
    with scheduler(impl, rec, max_batch_size=4, max_wait_ms=0, level=1) as s:
        x = Caller(s, "x")
        rec.wait_calls(1)
        x.thread.join(0.5)
        assert x.thread.is_alive(), f"submit returned {x.response!r} while run_batch still ran"
        rec.release()
        x.result()


@grade("many threads must be able to wait in submit at the same time", hint="lock", timeout=5)
def test_many_threads_wait_in_submit_together(impl):
    rec = Recorder()
    with scheduler(impl, rec, max_batch_size=4, max_wait_ms=math.inf, level=1) as s:
        callers = [Caller(s, i) for i in range(3)]
        wait_depth(s, 3)  # three callers blocked inside submit at once
        callers.append(Caller(s, 3))  # the fourth fills the batch: all four are answered
        for c in callers:
            c.result()


@grade("run_batch must be called from one worker thread, never from a caller's", hint="invariants",
       timeout=5)
def test_one_worker_thread(impl):
    rec = Recorder()
    with scheduler(impl, rec, max_batch_size=2, max_wait_ms=0, level=1) as s:
        callers = []
        for i in range(4):  # one at a time: four batches
            callers.append(Caller(s, i))
            callers[-1].result()
    threads = {call.thread for call in rec.calls}
    assert len(threads) == 1, f"run_batch was called from {len(threads)} threads"
    callers_threads = {c.thread for c in callers} | {threading.current_thread()}
    assert not threads & callers_threads, "run_batch was called from a caller's thread"


@grade("run_batch must never be called while another call is still running", hint="invariants",
       timeout=5)
def test_no_second_call_while_one_runs(impl):
    rec = Recorder(gated=True)
    with scheduler(impl, rec, max_batch_size=4, max_wait_ms=0, level=1) as s:
        x = Caller(s, "x")
        rec.wait_calls(1)
        a = Caller(s, "a")
        # 'a' is due at once: only a second caller of run_batch could take it now. Give one a
        # full second to show itself (a correct scheduler passes however long this lasts).
        deadline = time.monotonic() + 1.0
        while len(rec.calls) < 2 and time.monotonic() < deadline:
            time.sleep(0.002)
        assert rec.overlaps == 0, "run_batch was called while its previous call still ran"
        rec.release()
        for c in [x, a]:
            c.result()


@grade("run_batch must never be called with an empty list", hint="invariants", timeout=5)
def test_never_an_empty_batch(impl):
    rec = Recorder()
    with scheduler(impl, rec, max_batch_size=4, max_wait_ms=0, level=1) as s:
        time.sleep(0.1)  # idle: nothing to send
        Caller(s, "a").result()
        time.sleep(0.1)
    assert [] not in rec.batches, "run_batch was called with an empty list"


@grade("a full batch must leave at once with a max_batch_size above 256 too", hint="trigger",
       timeout=10)
def test_large_full_batch_leaves_at_once(impl):
    rec = Recorder()
    with scheduler(impl, rec, max_batch_size=300, max_wait_ms=60_000, level=1) as s:
        callers = [Caller(s, i) for i in range(300)]
        assert [c.result() for c in callers] == [("done", i) for i in range(300)]
        assert [sorted(b) for b in rec.batches] == [list(range(300))]


@grade("a batch must not leave before the oldest request has waited max_wait_ms", hint="trigger",
       timeout=5)
def test_not_dispatched_early(impl):
    rec = Recorder()
    with scheduler(impl, rec, max_batch_size=8, max_wait_ms=300, level=1) as s:
        callers = []
        for i, r in enumerate(["a", "b", "c"]):
            callers.append(Caller(s, r))
            wait_depth(s, i + 1)
            time.sleep(0.08)  # the worker is asleep in its wait: an arrival must not send 'a'
        call = rec.wait_calls(1)[0]
        assert call.at >= callers[0].before + 0.300 - EARLY_S
        for c in callers:
            c.result()


@grade("a lone request must leave soon after max_wait_ms, not much later", hint="trigger",
       timeout=5)
def test_dispatched_on_time(impl):
    rec = Recorder()
    with scheduler(impl, rec, max_batch_size=8, max_wait_ms=300, level=1) as s:
        caller = Caller(s, "a")
        seen = wait_depth(s, 1)
        call = rec.wait_calls(1)[0]
        assert call.at <= seen + 0.300 + 0.400, f"left {call.at - seen:.3f} s after its submit"
        caller.result()


@grade("the wait must count from the oldest request's own submit, not from later arrivals",
       hint="oldest", timeout=6)
def test_wait_counts_from_oldest(impl):
    check_oldest_leaves_1600ms_after_its_submit(impl, level=1, max_batch_size=8, max_wait_ms=1600)


@grade("a request that waited out max_wait_ms behind a running batch must leave as soon as the "
       "worker is free", hint="oldest", timeout=8)
def test_overdue_request_leaves_when_the_worker_is_free(impl):
    # 'a' queues while a full batch runs and has waited over max_wait_ms (1 s) when that batch
    # ends. Counted from its own submit, its wait is over: it leaves at once. A clock started
    # when the worker got free, or first looked at 'a', sends it a whole second later, so the
    # verdict does not hang on how fast the machine is.
    rec = Recorder(gated=True)
    with scheduler(impl, rec, max_batch_size=2, max_wait_ms=1000, level=1) as s:
        running = hold_full_batch(s, rec, 2)
        a = Caller(s, "a")
        sleep_until(wait_depth(s, 1) + 1.050)
        freed = time.monotonic()
        rec.release()
        call = rec.wait_calls(2)[1]
        assert call.requests == ["a"], call.requests
        assert call.at - freed < 0.900, (
            f"'a' left {call.at - freed:.2f} s after the worker became free, although it had "
            "already waited max_wait_ms since its own submit")
        for c in [*running, a]:
            c.result()


@grade("a request left behind by a full batch must not leave before its own max_wait_ms has "
       "passed", hint="oldest", timeout=8)
def test_leftover_waits_from_its_own_submit(impl):
    # 'a' starts the queue 0.5 s before 'b' and 'c' join it; [a, b] leaves full and 'c' waits
    # alone. A clock kept from when the queue filled up ('a') would send 'c' 0.5 s early.
    rec = Recorder(gated=True)
    with scheduler(impl, rec, max_batch_size=2, max_wait_ms=800, level=1) as s:
        running = hold_full_batch(s, rec, 2)
        a = Caller(s, "a")
        sleep_until(wait_depth(s, 1) + 0.500)
        b, c = submit_in_order(s, ["b", "c"], start_depth=1)
        rec.release()
        call = next(call for call in rec.wait_calls(3) if "c" in call.requests)
        assert call.at >= c.before + 0.800 - EARLY_S, (
            f"'c' left {call.at - c.before:.3f} s after its submit, before max_wait_ms (0.8 s)")
        for r in [*running, a, b, c]:
            r.result()


@grade("a batch that leaves on time must take every waiting request, up to max_batch_size",
       hint="size", timeout=8)
def test_time_trigger_takes_every_waiting_request(impl):
    # 'a' is overdue and 'b' is 0.5 s younger when the worker gets free: both must go, though
    # only 'a' has waited max_wait_ms.
    rec = Recorder(gated=True)
    with scheduler(impl, rec, max_batch_size=8, max_wait_ms=1000, level=1) as s:
        running = hold_full_batch(s, rec, 8)
        a = Caller(s, "a")
        seen = wait_depth(s, 1)
        sleep_until(seen + 0.500)
        b = Caller(s, "b")
        wait_depth(s, 2)
        sleep_until(seen + 1.050)
        rec.release()
        call = rec.wait_calls(2)[1]
        assert sorted(call.requests) == ["a", "b"], call.requests
        for c in [*running, a, b]:
            c.result()


@grade("a batch that filled up while another ran must leave as soon as the worker is free",
       hint="trigger", timeout=5)
def test_full_batch_waiting_behind_a_running_one(impl):
    rec = Recorder(gated=True)
    with scheduler(impl, rec, max_batch_size=2, max_wait_ms=math.inf, level=1) as s:
        running = hold_full_batch(s, rec, 2)
        callers = submit_in_order(s, ["a", "b"])
        rec.release()
        call = rec.wait_calls(2)[1]
        assert sorted(call.requests) == ["a", "b"], call.requests
        for c in [*running, *callers]:
            c.result()


@grade("requests must keep queueing while a batch runs", hint="lock", timeout=3)
def test_submit_while_batch_runs(impl):
    rec = Recorder(gated=True)
    with scheduler(impl, rec, max_batch_size=4, max_wait_ms=0, level=1) as s:
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
    with scheduler(impl, rec, max_batch_size=3, max_wait_ms=0, level=1) as s:
        x = Caller(s, "x")
        rec.wait_calls(1)
        callers = submit_in_order(s, [f"r{i}" for i in range(5)])
        rec.release()
        for c in [x, *callers]:
            c.result()
        assert rec.batches == [["x"], ["r0", "r1", "r2"], ["r3", "r4"]]


@grade("a batch must never hold more than max_batch_size requests, even when many wait",
       hint="size", timeout=5)
def test_batch_size_cap(impl):
    rec = Recorder(gated=True)
    with scheduler(impl, rec, max_batch_size=3, max_wait_ms=0, level=1) as s:
        x = Caller(s, "x")
        rec.wait_calls(1)
        callers = [Caller(s, i) for i in range(10)]
        wait_depth(s, 10)
        rec.release()
        for c in [x, *callers]:
            c.result()
        assert [len(b) for b in rec.batches] == [1, 3, 3, 3, 1]


@grade("requests that do not fit in a batch must stay for the next one", hint="size", timeout=5)
def test_the_rest_stay_for_the_next_batch(impl):
    rec = Recorder(gated=True)
    with scheduler(impl, rec, max_batch_size=3, max_wait_ms=0, level=1) as s:
        x = Caller(s, "x")
        rec.wait_calls(1)
        callers = submit_in_order(s, [f"r{i}" for i in range(5)])
        rec.release()
        for c in [x, *callers]:
            c.result()


@grade("queue_depth must count the waiting requests, not the batch in flight", hint="depth",
       timeout=5)
def test_queue_depth(impl):
    rec = Recorder(gated=True)
    with scheduler(impl, rec, max_batch_size=4, max_wait_ms=0, level=1) as s:
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
    with scheduler(impl, rec, max_batch_size=4, max_wait_ms=5, level=1) as s:
        callers = [Caller(s, i) for i in range(40)]
        assert [c.result() for c in callers] == [i * i + 1 for i in range(40)]
        assert sorted(r for b in rec.batches for r in b) == list(range(40))


@grade("equal or unhashable requests must each get their own response", hint="routing", timeout=5)
def test_equal_and_unhashable_requests(impl):
    count = iter(range(10**6))
    # One fresh tag per position: a response handed to two callers shows up twice.
    rec = Recorder(gated=True, answer=lambda reqs: [(r, next(count)) for r in reqs])
    with scheduler(impl, rec, max_batch_size=8, max_wait_ms=0, level=1) as s:
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
    with scheduler(impl, rec, max_batch_size=3, max_wait_ms=math.inf, level=1) as s:
        callers = [Caller(s, "a")]
        wait_depth(s, 1)
        time.sleep(0.3)  # the worker is asleep in its wait by now: 'b' arriving must not send 'a'
        callers.append(Caller(s, "b"))
        wait_depth(s, 2)
        time.sleep(0.5)
        assert rec.batches == [] and s.queue_depth == 2
        callers.append(Caller(s, "c"))
        for c in callers:
            c.result()
        assert [sorted(b) for b in rec.batches] == [["a", "b", "c"]]


@grade("with max_wait_ms=0 a request must be dispatched as soon as the worker is free",
       hint="polling", timeout=8)
def test_zero_wait_is_immediate(impl):
    rec = Recorder()
    with scheduler(impl, rec, max_batch_size=8, max_wait_ms=0, level=1) as s:
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


def serve(impl, t) -> tuple[dict, Recorder, list]:
    """Every client thread submits (thread id, k) after each of its gaps. Returns the answers
    by request, the recorder and every request, sorted."""
    rec = Recorder(seconds=t["cost"])
    answers: dict = {}

    def client(tid, gaps):
        for k, gap in enumerate(gaps):
            time.sleep(gap)
            answers[tid, k] = s.submit((tid, k))

    with scheduler(impl, rec, max_batch_size=t["max_batch_size"],
                   max_wait_ms=t["max_wait_ms"], level=1) as s:
        threads = [threading.Thread(target=client, args=(tid, gaps), daemon=True)
                   for tid, gaps in enumerate(t["gaps"])]
        for th in threads:
            th.start()
        for th in threads:
            th.join(5)
            assert not th.is_alive(), "a submit never returned"
    expected = sorted((tid, k) for tid, gaps in enumerate(t["gaps"]) for k in range(len(gaps)))
    return answers, rec, expected


@grade("under traffic from many threads every request must run once and get its own response",
       hint="invariants", timeout=30)
@settings(max_examples=25)
@given(traffic())
def test_many_threads_answers(impl, t):
    answers, rec, expected = serve(impl, t)
    assert sorted(answers) == expected
    assert all(answers[key] == ("done", key) for key in expected)
    assert sorted(r for b in rec.batches for r in b) == expected


@grade("under traffic from many threads every batch must hold 1 to max_batch_size requests",
       hint="size", timeout=30)
@settings(max_examples=25)
@given(traffic())
def test_many_threads_batch_sizes(impl, t):
    _, rec, _ = serve(impl, t)
    assert all(1 <= len(b) <= t["max_batch_size"] for b in rec.batches), rec.batches


@grade("under traffic from many threads run_batch calls must never overlap", hint="invariants",
       timeout=30)
@settings(max_examples=25)
@given(traffic())
def test_many_threads_no_overlap(impl, t):
    _, rec, _ = serve(impl, t)
    assert rec.overlaps == 0
