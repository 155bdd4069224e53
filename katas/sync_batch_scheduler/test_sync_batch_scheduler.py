"""Visible examples. `pytest katas/sync_batch_scheduler` also runs the hidden suite on your file."""

import threading
import time

import pytest


def submit_in_threads(scheduler, requests):
    """Call submit(r) for each request on its own thread; return {request: response or error}."""
    results = {}

    def call(r):
        try:
            results[r] = scheduler.submit(r)
        except Exception as exc:
            results[r] = exc

    threads = [threading.Thread(target=call, args=(r,), daemon=True) for r in requests]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    return results


def test_a_lone_request_waits_max_wait_ms(impl):
    batches = []

    def run_batch(requests):
        batches.append(list(requests))
        return [r.upper() for r in requests]

    with impl.BatchScheduler(run_batch, max_batch_size=8, max_wait_ms=100) as s:
        start = time.monotonic()
        assert s.submit("hi") == "HI"
        assert time.monotonic() - start >= 0.1 - 0.002  # not full: it waits out max_wait_ms
    assert batches == [["hi"]]


def test_a_full_batch_is_one_call(impl):
    batches = []

    def run_batch(requests):
        batches.append(sorted(requests))
        return [r * 10 for r in requests]

    with impl.BatchScheduler(run_batch, max_batch_size=4, max_wait_ms=60_000) as s:
        results = submit_in_threads(s, [1, 2, 3, 4])
    assert results == {1: 10, 2: 20, 3: 30, 4: 40}
    assert batches == [[1, 2, 3, 4]]


def test_run_batch_errors_reach_the_caller(impl):
    def run_batch(requests):
        raise KeyError("gpu fell over")

    with impl.BatchScheduler(run_batch, max_batch_size=2, max_wait_ms=0) as s:
        with pytest.raises(KeyError):
            s.submit("a")


def test_close_answers_what_waits_then_refuses(impl):
    s = impl.BatchScheduler(lambda rs: [-r for r in rs], max_batch_size=8, max_wait_ms=60_000)
    waiting = threading.Thread(target=lambda: results.append(s.submit(7)), daemon=True)
    results = []
    waiting.start()
    while s.queue_depth < 1:
        time.sleep(0.001)
    s.close()  # does not wait a minute: it dispatches what waits at once
    waiting.join(1)
    assert results == [-7]
    with pytest.raises(impl.SchedulerClosedError):
        s.submit(8)


def test_bad_settings_raise_value_error(impl):
    with pytest.raises(ValueError):
        impl.BatchScheduler(lambda rs: rs, max_batch_size=0, max_wait_ms=5)
    with pytest.raises(ValueError):
        impl.BatchScheduler(lambda rs: rs, max_batch_size=4, max_wait_ms=-1)
