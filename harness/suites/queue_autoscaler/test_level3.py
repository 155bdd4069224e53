"""Level 3: cold starts, scale-to-zero, O(1) per observation, and an hour of bursty traffic."""

import math

import pytest
from hypothesis import given, settings

from harness.marks import level

from . import bench
from .helpers import SERVING, Feed, replay, scripts, slowdown
from .helpers import settings as configs
from .oracle import Oracle

grade = level(3)


def cold(impl, **kw):
    """target 1, startup 10 s, a 1 s stable window: the count follows the latest load."""
    return impl.QueueAutoscaler(**{"target": 1, "max_replicas": 100, "stable_window_s": 1,
                                   "startup_s": 10, **kw})


def idle(impl, **kw):
    """Scale-to-zero with a 4 s grace, a 1 s stable window and no real down limit."""
    return impl.QueueAutoscaler(**{"target": 1, "max_replicas": 100, "min_replicas": 0,
                                   "stable_window_s": 1, "max_scale_down_rate": 1000,
                                   "idle_grace_s": 4, **kw})


# 0: 1 ready + 2 starting (ready at 10). 4: + 2 starting (ready at 14). 6: the count is 4, so
# one replica goes: the latest starting one, ready at 14.
STAGGERED = [(0, 3, 0), (4, 5, 0), (6, 4, 0)]


@grade("the prompt's cold-start example must return 0, 3, 1, 1, 0", "cold_start", timeout=5)
def test_prompt_example(impl):
    s = impl.QueueAutoscaler(target=1, max_replicas=10, min_replicas=0, stable_window_s=1,
                             startup_s=5, idle_grace_s=4)
    assert replay(s, [(0, 0, 0), (1, 2, 1)]) == [0, 3]
    assert (s.ready(5.5), s.ready(6)) == (0, 3)
    assert replay(s, [(3, 0, 0), (5, 0, 0), (5.5, 0, 0)]) == [1, 1, 0]


@grade("a new replica must be ready at exactly now + startup_s, and not before", "cold_start",
       timeout=5)
def test_ready_at_startup(impl):
    s = impl.QueueAutoscaler(target=1, max_replicas=10, startup_s=5)
    assert s.observe(0, 3, 0) == 3 and s.replicas == 3
    assert [s.ready(t) for t in (0, 4.5, 5, 100)] == [1, 1, 3, 3]


@grade("starting replicas must count in replicas and never be added twice", "cold_start",
       timeout=5)
def test_starting_counted(impl):
    # 1: only one replica is ready, but the fleet already has the 3 the count asks for.
    s = impl.QueueAutoscaler(target=1, max_replicas=10, startup_s=5)
    assert replay(s, [(0, 3, 0), (1, 3, 0), (2, 3, 0)]) == [3, 3, 3]
    assert s.replicas == 3 and s.ready(5) == 3


@grade("the rate limits must count ready replicas only", "cold_start", timeout=5)
def test_rate_limits_count_ready(impl):
    # up rate 2: r stays 1 until the replica added at 0 is ready at 10.
    s = cold(impl, max_scale_up_rate=2, stable_window_s=60)
    assert replay(s, [(0, 10, 0), (1, 10, 0), (9.5, 10, 0), (10, 10, 0)]) == [2, 2, 2, 4]


@grade("the panic test must count ready replicas only", "cold_start", timeout=5)
def test_panic_counts_ready(impl):
    # Panic and stable windows alike, threshold 3. 0: count 2, not over (2 < 3). 1: panic 3 >=
    # 3 * 1 ready -> over, although 3 < 3 * 2 replicas.
    s = cold(impl, stable_window_s=8, panic_window_s=8, panic_threshold=3)
    assert [(s.observe(*call), s.panicking) for call in [(0, 2, 0), (1, 4, 0)]] == \
        [(2, False), (3, True)]


@grade("a scale-down must remove the starting replica that would be ready latest",
       "cold_start", timeout=5)
def test_removes_latest_starting(impl):
    s = cold(impl)
    assert replay(s, STAGGERED) == [3, 5, 4]
    assert [s.ready(t) for t in (10, 14)] == [3, 4]


@grade("a scale-down must remove starting replicas before ready ones", "cold_start",
       timeout=5)
def test_removes_starting_first(impl):
    s = cold(impl)
    replay(s, STAGGERED)
    assert s.ready(6) == 1
    # 7: nothing left to serve; every starting replica goes, the ready one stays.
    assert s.observe(7, 0, 0) == 1 and [s.ready(t) for t in (7, 14)] == [1, 1]


@grade("ready must change nothing, the clock included", "cold_start", timeout=5)
def test_ready_changes_nothing(impl):
    s = impl.QueueAutoscaler(target=1, max_replicas=10, min_replicas=2, startup_s=5)
    assert s.ready(-50) == 2  # any time before the first observe
    assert s.observe(0, 3, 0) == 3
    assert s.ready(100) == 3 and s.ready(2) == 2
    assert s.observe(1, 3, 0) == 3  # 1 is earlier than 100: ready did not move the clock
    assert s.replicas == 3 and s.ready(4) == 2


@pytest.mark.parametrize("now", [4.5, -1, math.nan, math.inf, "6", None, True])
@grade("ready must reject a time that is not a finite number or is earlier than the last "
       "observe", "cold_start", timeout=5)
def test_ready_bad_time(impl, now):
    s = impl.QueueAutoscaler(target=1, max_replicas=10, startup_s=5)
    s.observe(5, 1, 0)
    with pytest.raises(ValueError):
        s.ready(now)


@grade("an idle fleet must be held at one replica, not at its old total", "scale_to_zero",
       timeout=5)
def test_hold_at_one(impl):
    # 1: the count is 0 and the last load was at 0, within the grace: 1, not 2.
    assert replay(idle(impl), [(0, 2, 0), (1, 0, 0)]) == [2, 1]


@grade("the hold must last until exactly idle_grace_s after the last load", "scale_to_zero",
       timeout=5)
def test_hold_until_grace(impl):
    # The last load was at 0: held at 4 (4 - 0 <= 4), zero at 4.5.
    assert replay(idle(impl), [(0, 2, 0), (1, 0, 0), (4, 0, 0), (4.5, 0, 0)]) == [2, 1, 1, 0]


@grade("a single request must count as load for the hold", "scale_to_zero", timeout=5)
def test_one_request_is_load(impl):
    assert replay(idle(impl), [(0, 1, 0), (3, 0, 0), (4.5, 0, 0)]) == [1, 1, 0]


@grade("the defaults must be the signature's: no startup delay, no idle grace", "cold_start",
       timeout=5)
def test_level_3_defaults(impl):
    s = impl.QueueAutoscaler(target=1, max_replicas=10)
    assert s.observe(0, 3, 0) == 3 and s.ready(0) == 3  # ready at once
    s = impl.QueueAutoscaler(target=1, max_replicas=10, min_replicas=0, stable_window_s=0.25,
                             max_scale_down_rate=1000)
    assert replay(s, [(0, 2, 0), (0.5, 0, 0)]) == [2, 0]  # no hold at all


@grade("a fleet that never saw load must stay at zero", "scale_to_zero", timeout=5)
def test_no_load_ever(impl):
    s = idle(impl, idle_grace_s=10)
    assert replay(s, [(0, 0, 0), (5, 0, 0)]) == [0, 0]


@grade("requests in flight must keep a fleet awake", "scale_to_zero", timeout=5)
def test_in_flight_keeps_awake(impl):
    # Load at 0 was all in flight: the hold still applies at 3.
    assert replay(idle(impl), [(0, 0, 3), (3, 0, 0)]) == [3, 1]


@grade("the first load must wake a fleet at zero", "scale_to_zero", timeout=5)
def test_wakes_from_zero(impl):
    # Mean (0 + 1) / 2 over target 1 -> 1; r = max(1, 0) = 1, so up = ceil(2 * 1) = 2.
    s = impl.QueueAutoscaler(target=1, max_replicas=10, min_replicas=0, max_scale_up_rate=2,
                             startup_s=5)
    assert replay(s, [(0, 0, 0), (10, 1, 0)]) == [0, 1]
    assert [s.ready(t) for t in (10, 14.5, 15)] == [0, 0, 1]
    assert s.observe(11, 20, 0) == 2  # still nothing ready: r = 1, up = 2


@grade("observe must not slow down as its windows fill: 100,000 samples against 1,000", "cost",
       timeout=90)
def test_observe_cost_is_flat(impl):
    # The big windows never expire anything; the small ones drop a sample per call. A scan is
    # caught before the big windows are full: its slowdown passes 10 at about 15,000 samples.
    small, big = Feed(impl, 1000), Feed(impl, 10**6)
    small.feed(1000)
    for size in (2000, 4000, 8000, 16000, 32000, 64000, 100_000):
        big.feed(size - big.now)
        ratio = slowdown(small, big, limit=10)
        assert ratio <= 10, f"observe is {ratio:.0f}x slower with {size:,} samples than with 1,000"


def ready_counts(impl, kw, script):
    """After each call: (ready at now + 0, 0.5, 1, 2, 5 and startup_s, replicas)."""
    s = impl.QueueAutoscaler(**kw)
    for call in script:
        s.observe(*call)
        yield [s.ready(call[0] + dt) for dt in (0, 0.5, 1, 2, 5, kw["startup_s"])], s.replicas


@grade("ready must never fall as time moves on", "cold_start", timeout=20)
@settings(max_examples=100)
@given(configs(3), scripts())
def test_ready_never_falls(impl, kw, script):
    for counts, _ in ready_counts(impl, kw, script):
        assert counts[:-1] == sorted(counts[:-1]), counts


@grade("ready must reach replicas startup_s after the last call, and never exceed it",
       "cold_start", timeout=20)
@settings(max_examples=100)
@given(configs(3), scripts())
def test_all_ready_after_startup(impl, kw, script):
    for counts, replicas in ready_counts(impl, kw, script):
        assert counts[-1] == replicas and max(counts) <= replicas, (counts, replicas)


@grade("a result of 0 must follow a stable window and a grace period without load",
       "scale_to_zero", timeout=20)
@settings(max_examples=100)
@given(configs(3), scripts())
def test_zero_only_when_idle(impl, kw, script):
    s, loaded = impl.QueueAutoscaler(**kw), []
    for now, queued, in_flight in script:
        if queued + in_flight:
            loaded.append(now)
        if s.observe(now, queued, in_flight) == 0:  # no load in (now - w, now] nor [now - g, now]
            assert all(t <= now - kw["stable_window_s"] and t < now - kw["idle_grace_s"]
                       for t in loaded), (now, loaded)


@grade("a call with load must get at least one replica", "scale_to_zero", timeout=20)
@settings(max_examples=100)
@given(configs(3), scripts())
def test_load_gets_a_replica(impl, kw, script):
    s = impl.QueueAutoscaler(**kw)
    for call in script:
        got = s.observe(*call)
        assert got >= 1 or call[1] + call[2] == 0, call


@grade("decisions and ready counts must follow every rule over random calls", "cold_start",
       timeout=30)
@settings(max_examples=150)
@given(configs(3), scripts())
def test_matches_oracle(impl, kw, script):
    s, oracle = impl.QueueAutoscaler(**kw), Oracle(**kw)
    for call in script:
        assert s.observe(*call) == oracle.observe(*call), (kw, call)
        for dt in (0, 0.5, 2, 5):
            assert s.ready(call[0] + dt) == oracle.ready(call[0] + dt), (kw, call, dt)


@grade("an hour of bursty traffic, decided every 2 s, must serve with the replicas the rules "
       "imply", "decision", timeout=30)
def test_serving_hour(impl):
    run = bench.simulate(bench.Scaler(impl), bench.arrivals())
    assert (run.violations, run.replica_seconds) == SERVING
