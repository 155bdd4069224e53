"""Level 2: panic mode, scale-down stabilisation, bad input."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.marks import level

from .helpers import replay, scripts
from .helpers import settings as configs
from .oracle import Oracle

grade = level(2)

NOT_FINITE = [math.inf, -math.inf, math.nan]


def panicky(impl, **kw):
    """target 1, stable window 8 s, panic window 1 s: the panic count is the current load."""
    return impl.QueueAutoscaler(**{"target": 1, "max_replicas": 100, "stable_window_s": 8,
                                   "panic_window_s": 1, **kw})


def trace(scaler, calls) -> list[tuple[int, bool]]:
    return [(scaler.observe(*call), scaler.panicking) for call in calls]


# Over at 1 (4 >= 2 * 1), then calm: panic mode lasts while now - 1 <= 8, and holds the total.
# 2: stable mean 4 / 3 -> 2, down = floor(4 / 2) = 2, replicas before 4 -> 4.
# 9.5: 8.5 > 8, panic mode ends; the window (1.5, 9.5] holds only zeros, down = 2 -> 2.
CALM_AFTER_OVER = [(0, 0, 0), (1, 4, 0), (2, 0, 0), (9, 0, 0), (9.5, 0, 0)]
CALM_AFTER_OVER_TRACE = [(1, False), (4, True), (4, True), (4, True), (2, False)]

# max_scale_up_rate 1.5: the rate limits bind while panicking.
# 1: stable mean 10, panic 20, up = ceil(1.5 * 1) = 2 -> 2. 2: stable 40 / 3 -> 14, up 3 -> 3.
# 3: not over (1 < 2 * 3) but still panicking; stable 41 / 4 -> 11, up = ceil(4.5) = 5, panic
#    count 1 (down 1), replicas before 3 -> the stable count 5 wins.
RATE_LIMITED = [(0, 0, 0), (1, 20, 0), (2, 20, 0), (3, 1, 0)]


@grade("the prompt's panic example must return 1, 1, 5, 9, 9, 9, 4", "panic", timeout=5)
def test_prompt_example(impl):
    s = panicky(impl, panic_window_s=2)
    assert trace(s, [(0, 1, 0), (1, 1, 0), (2, 9, 0), (3, 9, 0), (4, 0, 2), (10, 0, 0),
                     (10.5, 0, 0)]) == [(1, False), (1, False), (5, True), (9, True),
                                        (9, True), (9, True), (4, False)]


@grade("panic mode must start when the panic count reaches exactly threshold times r",
       "panic", timeout=5)
def test_panic_at_threshold(impl):
    # 1: panic 2 >= 2 * 1 -> over; stable mean 1 -> 1; panic decides 2.
    assert trace(panicky(impl), [(0, 0, 0), (1, 2, 0)]) == [(1, False), (2, True)]
    # threshold 1.5 with r = 2: panic 3 >= 3 -> over.
    s = panicky(impl, min_replicas=2, panic_threshold=1.5)
    assert trace(s, [(0, 0, 0), (1, 3, 0)]) == [(2, False), (3, True)]


@grade("the panic test must compare the panic count rounded up", "panic", timeout=5)
def test_panic_count_rounded(impl):
    # target 2, load 3: panic = ceil(1.5) = 2 >= 2 * 1 -> over, although 1.5 < 2.
    s = panicky(impl, target=2)
    assert trace(s, [(0, 0, 0), (1, 3, 0)]) == [(1, False), (2, True)]


@grade("the panic count must be the mean over the panic window", "panic", timeout=5)
def test_panic_window_mean(impl):
    # 2: the panic window holds only 6 (panic 6); the stable window's mean is 2.
    s = panicky(impl)
    assert trace(s, [(0, 0, 0), (1, 0, 0), (2, 6, 0)]) == [(1, False), (1, False), (6, True)]


@grade("the call that enters panic mode must already decide in panic mode", "panic",
       timeout=5)
def test_enters_and_decides(impl):
    # 1: over; the stable count alone would be 5, the panic count is 10.
    assert replay(panicky(impl), [(0, 0, 0), (1, 10, 0)]) == [1, 10]


@grade("panic mode must last until more than stable_window_s has passed since the last over "
       "call", "panic", timeout=5)
def test_panic_lasts_a_stable_window(impl):
    assert trace(panicky(impl), CALM_AFTER_OVER) == CALM_AFTER_OVER_TRACE


@grade("panicking must report panic mode, not whether the last call was over", "panic",
       timeout=5)
def test_panicking_is_the_mode(impl):
    s = panicky(impl)
    assert not s.panicking
    assert [panicking for _, panicking in trace(s, CALM_AFTER_OVER)] == \
        [panicking for _, panicking in CALM_AFTER_OVER_TRACE]


@grade("every over call must renew panic mode", "panic", timeout=5)
def test_over_renews(impl):
    # 1: over (4 >= 2). 2: over again (8 >= 2 * 4): last_over = 2. 9.5: 7.5 <= 8, still
    # panicking. 10.5: 8.5 > 8, it ends; stable (2.5, 10.5] is all 0, down = floor(8 / 2) = 4.
    calls = [(0, 0, 0), (1, 4, 0), (2, 8, 0), (9.5, 0, 0), (10.5, 0, 0)]
    assert trace(panicky(impl), calls) == [(1, False), (4, True), (8, True), (8, True),
                                           (4, False)]


@grade("panic mode must never scale down", "panic", timeout=5)
def test_panic_never_scales_down(impl):
    # At 2 the stable count and down are both 2, the total before was 4.
    assert replay(panicky(impl), CALM_AFTER_OVER[:3]) == [1, 4, 4]


@grade("panic mode must not decide below the stable count", "panic", timeout=5)
def test_panic_keeps_stable_count(impl):
    assert replay(panicky(impl, max_scale_up_rate=1.5), RATE_LIMITED)[-1] == 5


@grade("the panic count must obey the rate limits", "panic", timeout=5)
def test_panic_rate_limited(impl):
    assert replay(panicky(impl, max_scale_up_rate=1.5), RATE_LIMITED)[:3] == [1, 2, 3]


@grade("without a panic window the scaler must never panic", "panic", timeout=5)
def test_no_panic_window(impl):
    # A jump from 0 to 50 after nine calm seconds: the stable mean is 50 / 10 = 5.
    s = impl.QueueAutoscaler(target=1, max_replicas=100, stable_window_s=10)
    assert trace(s, [(t, 0, 0) for t in range(9)] + [(9, 50, 0)])[-1] == (5, False)


@grade("a peak must be held for scale_down_window_s, and not at exactly that age",
       "stabilisation", timeout=5)
def test_peak_held_exactly(impl):
    # Window 1, no real down limit: the recommendations are 10, 0, 0, 0; the 10 recorded at 0
    # holds at 1 and 3.5, and is out at 4 (0 > 4 - 4 is false).
    s = impl.QueueAutoscaler(target=1, max_replicas=100, stable_window_s=1,
                             max_scale_down_rate=1000, scale_down_window_s=4)
    assert replay(s, [(0, 10, 0), (1, 0, 0), (3.5, 0, 0), (4, 0, 0)]) == [10, 10, 10, 1]


@grade("the held maximum must be the largest recommendation still in the window",
       "stabilisation", timeout=5)
def test_held_maximum_after_the_peak(impl):
    # Recommendations 10, 3, 5, 0 at 0, 1, 2, 4 (window 4): at 4 the 10 is out, 3 and 5 are in.
    s = impl.QueueAutoscaler(target=1, max_replicas=100, stable_window_s=1,
                             max_scale_down_rate=1000, scale_down_window_s=4)
    assert replay(s, [(0, 10, 0), (1, 3, 0), (2, 5, 0), (4, 0, 0), (6, 0, 0)]) == \
        [10, 10, 10, 5, 1]


@grade("stabilisation must hold the recorded recommendations, not its own results",
       "stabilisation", timeout=5)
def test_holds_recommendations_not_results(impl):
    # The call at 2 recommends 0 and returns the held 10; at 5 only that 0 is in (1, 5].
    s = impl.QueueAutoscaler(target=1, max_replicas=100, stable_window_s=1,
                             max_scale_down_rate=1000, scale_down_window_s=4)
    assert replay(s, [(0, 10, 0), (2, 0, 0), (5, 0, 0)]) == [10, 10, 1]


@grade("stabilisation must hold the decisions panic mode raised", "stabilisation", timeout=5)
def test_holds_panic_decisions(impl):
    # Stable window 2, panic 1, scale-down window 6. 1: over, d = 8. 2: panicking, d = 8.
    # 3.5: 2.5 > 2, panic mode ends; d = down = 4, but the 8s recorded at 1 and 2 still hold.
    s = panicky(impl, stable_window_s=2, scale_down_window_s=6)
    assert trace(s, [(0, 0, 0), (1, 8, 0), (2, 0, 0), (3.5, 0, 0)]) == \
        [(1, False), (8, True), (8, True), (8, False)]


@grade("decisions must follow the panic and stabilisation rules over random calls", "panic",
       timeout=30)
@settings(max_examples=150)
@given(configs(2), scripts())
def test_matches_oracle(impl, kw, script):
    s, oracle = impl.QueueAutoscaler(**kw), Oracle(**kw)
    for call in script:
        assert (s.observe(*call), s.panicking) == (oracle.observe(*call), oracle.panicking), \
            (kw, call)


@grade("stabilisation must hold the largest recommendation of its window over random calls",
       "stabilisation", timeout=20)
@settings(max_examples=150)
@given(st.sampled_from((1, 2.5, 6)), st.sampled_from((0.5, 1, 2)), scripts())
def test_stabilisation_matches_oracle(impl, width, stable, script):
    # A short stable window and no down limit: the recommendations swing with the load, so the
    # held maximum keeps changing hands as peaks age out.
    kw = dict(target=1, max_replicas=100, stable_window_s=stable, max_scale_down_rate=1000,
              scale_down_window_s=width)
    s, oracle = impl.QueueAutoscaler(**kw), Oracle(**kw)
    for call in script:
        assert s.observe(*call) == oracle.observe(*call), (kw, call)


@grade("a call that leaves the scaler panicking must never lower the total", "panic",
       timeout=20)
@settings(max_examples=100)
@given(configs(2), scripts())
def test_panicking_never_lowers(impl, kw, script):
    s = impl.QueueAutoscaler(**kw)
    for call in script:
        before = s.replicas
        got = s.observe(*call)
        assert not s.panicking or got >= before, (call, before, got)


@grade("once panic mode starts it must last at least stable_window_s", "panic", timeout=20)
@settings(max_examples=100)
@given(configs(2), scripts())
def test_panic_lasts(impl, kw, script):
    s, started = impl.QueueAutoscaler(**kw), None
    for call in script:
        was = s.panicking
        s.observe(*call)
        if s.panicking and not was:
            started = call[0]
        if started is not None and call[0] <= started + kw["stable_window_s"]:
            assert s.panicking, (started, call)


@grade("without panic mode a scale-down window must never decide below no window",
       "stabilisation", timeout=20)
@settings(max_examples=100)
@given(configs(2), scripts())
def test_stabilisation_only_delays_decreases(impl, kw, script):
    kw["panic_window_s"] = None
    held = replay(impl.QueueAutoscaler(**kw), script)
    plain = replay(impl.QueueAutoscaler(**{**kw, "scale_down_window_s": 0}), script)
    assert all(h >= p for h, p in zip(held, plain, strict=True)), (held, plain)


# Bad input: each case breaks exactly one rule. VALID is a scaler that every case starts from.
VALID = dict(target=1, max_replicas=10, stable_window_s=10)


def rejects(impl, **kw):
    with pytest.raises(ValueError):
        impl.QueueAutoscaler(**{**VALID, **kw})


@pytest.mark.parametrize("now", [*NOT_FINITE, "1", None, [0], 4.5])
@grade("a time that is not a finite number, or earlier than the last observe, must raise "
       "ValueError", "errors", timeout=5)
def test_bad_time(impl, now):
    s = impl.QueueAutoscaler(**VALID)
    s.observe(5, 1, 0)
    with pytest.raises(ValueError):
        s.observe(now, 1, 0)


@pytest.mark.parametrize("queued, in_flight", [(-1, 0), (0, -1), (1.0, 0), (0, 2.0), ("1", 0),
                                               (None, 0), (0, None)])
@grade("a queued or in-flight count that is not an int >= 0 must raise ValueError", "errors",
       timeout=5)
def test_bad_counts(impl, queued, in_flight):
    s = impl.QueueAutoscaler(**VALID)
    with pytest.raises(ValueError):
        s.observe(0, queued, in_flight)


@pytest.mark.parametrize("kw", [dict(target=t) for t in (0, -1, *NOT_FINITE, "1", None)]
                         + [dict(stable_window_s=w) for w in (0, -2, *NOT_FINITE, "10", None)])
@grade("a target or stable window that is not a finite number > 0 must raise ValueError",
       "errors", timeout=5)
def test_bad_target_or_window(impl, kw):
    rejects(impl, **kw)


@pytest.mark.parametrize("low", [-1, 1.0, None, "1"])
@grade("a min_replicas that is not an int >= 0 must raise ValueError", "errors", timeout=5)
def test_bad_min_replicas(impl, low):
    rejects(impl, min_replicas=low)


@pytest.mark.parametrize("kw", [dict(max_replicas=0), dict(max_replicas=0, min_replicas=0),
                                dict(max_replicas=2, min_replicas=3), dict(max_replicas=10.0),
                                dict(max_replicas=None)])
@grade("a max_replicas that is not an int >= max(1, min_replicas) must raise ValueError",
       "errors", timeout=5)
def test_bad_max_replicas(impl, kw):
    rejects(impl, **kw)


@pytest.mark.parametrize("kw", [{name: v} for name in ("max_scale_up_rate", "max_scale_down_rate",
                                                       "panic_threshold")
                                for v in (1, 1.0, 0.5, 0, -2, *NOT_FINITE, "2", None)])
@grade("a rate or panic threshold that is not a finite number > 1 must raise ValueError",
       "errors", timeout=5)
def test_bad_rates(impl, kw):
    rejects(impl, panic_window_s=5, **kw)


@pytest.mark.parametrize("width", [0, -1, 10.5, *NOT_FINITE, "5"])
@grade("a panic window that is not None or a number in (0, stable_window_s] must raise "
       "ValueError", "errors", timeout=5)
def test_bad_panic_window(impl, width):
    rejects(impl, panic_window_s=width)


@pytest.mark.parametrize("kw", [{name: v} for name in ("scale_down_window_s", "startup_s",
                                                       "idle_grace_s")
                                for v in (-1, -0.5, *NOT_FINITE, "0", None)])
@grade("a scale-down window, startup or grace that is not a finite number >= 0 must raise "
       "ValueError", "errors", timeout=5)
def test_bad_durations(impl, kw):
    rejects(impl, **kw)


@pytest.mark.parametrize("kw", [dict(panic_threshold=1), dict(panic_threshold=math.nan),
                                dict(panic_threshold="2"), dict(idle_grace_s=-1),
                                dict(idle_grace_s=math.inf)])
@grade("a bad setting must raise ValueError even where the configuration does not use it",
       "errors", timeout=5)
def test_unused_settings_checked(impl, kw):
    rejects(impl, min_replicas=1, **kw)  # no panic window uses the threshold, no zero the grace


@pytest.mark.parametrize("kw", [dict(target=True), dict(stable_window_s=True),
                                dict(panic_window_s=True), dict(scale_down_window_s=False),
                                dict(startup_s=True), dict(idle_grace_s=True),
                                dict(min_replicas=True), dict(max_replicas=True)])
@grade("a bool given as a number or a count must raise ValueError", "errors", timeout=5)
def test_bool_settings(impl, kw):
    rejects(impl, **kw)


@pytest.mark.parametrize("call", [(True, 1, 0), (0, True, 0), (0, 1, False)])
@grade("a bool given to observe must raise ValueError", "errors", timeout=5)
def test_bool_calls(impl, call):
    s = impl.QueueAutoscaler(**VALID)
    with pytest.raises(ValueError):
        s.observe(*call)


@grade("a call that raises must change nothing, the clock included", "errors", timeout=5)
def test_failed_call_changes_nothing(impl):
    s = impl.QueueAutoscaler(**VALID)
    assert s.observe(0, 4, 0) == 4
    for bad in [(10, -1, 0), (10, 1, 0.5), (-1, 1, 0), (math.nan, 1, 0)]:
        with pytest.raises(ValueError):
            s.observe(*bad)
    assert s.replicas == 4
    assert s.observe(5, 2, 0) == 3  # 5 is not earlier than 0: no failed call moved the clock


@grade("a call that raised must change no later answer", "errors", timeout=20)
@settings(max_examples=80)
@given(configs(2), scripts(20), st.lists(st.tuples(st.integers(0, 19),
                                                   st.sampled_from([(-1, 0), (0, -3), (1.5, 0),
                                                                    (0, True)])), max_size=8))
def test_failed_calls_leave_no_trace(impl, kw, script, faults):
    clean, faulty = impl.QueueAutoscaler(**kw), impl.QueueAutoscaler(**kw)
    for i, call in enumerate(script):
        for at, (queued, in_flight) in faults:
            if at == i:
                with pytest.raises(ValueError):
                    faulty.observe(call[0] + 1, queued, in_flight)
        assert faulty.observe(*call) == clean.observe(*call)
        assert faulty.panicking == clean.panicking
