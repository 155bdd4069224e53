"""Level 1: stable mode — samples and windows, the mean, rate limits, bounds, totals."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.marks import level

from .helpers import replay, scripts
from .helpers import settings as configs
from .oracle import Oracle

grade = level(1)


def scaler(impl, **kw):
    kw.setdefault("max_replicas", 100)
    return impl.QueueAutoscaler(**kw)


@grade("the prompt's stable-mode example must return 2, 4, 3, 1", "windows", timeout=5)
def test_prompt_example(impl):
    # target 2, window 10. 0: mean 4 -> 2. 4: mean (4 + 12) / 2 = 8 -> 4. 10: the sample at 0 is
    # out, mean (12 + 0) / 2 = 6 -> 3. 14: mean 0, but down = floor(3 / 2) = 1.
    s = scaler(impl, target=2, max_replicas=10, stable_window_s=10)
    assert replay(s, [(0, 3, 1), (4, 10, 2), (10, 0, 0), (14, 0, 0)]) == [2, 4, 3, 1]


@grade("the defaults must be the signature's: a 60 s stable window, a scale-up rate of 1000",
       "windows", timeout=5)
def test_level_1_defaults(impl):
    # A 60 s window still holds the sample at 0 at 59.5 (mean 5), and not at 60.5.
    s = scaler(impl, target=1, max_scale_down_rate=1000)
    assert replay(s, [(0, 10, 0), (59.5, 0, 0), (60.5, 0, 0)]) == [10, 5, 1]
    # One ready replica may grow to ceil(1000 * 1) at once, and no further.
    assert replay(scaler(impl, target=1, max_replicas=10_000), [(0, 10**6, 0)]) == [1000]


@grade("requests in flight must count as load", "windows", timeout=5)
def test_in_flight_is_load(impl):
    # Nothing queued, 6 being served: load 6, target 2 -> 3; then 2 + 3 = 5 -> mean 5.5 -> 3.
    s = scaler(impl, target=2)
    assert replay(s, [(0, 0, 6), (1, 2, 3)]) == [3, 3]


@grade("the stable count must round the mean over target up", "windows", timeout=5)
def test_stable_rounds_up(impl):
    # target 2: load 3 -> ceil(1.5) = 2; then mean 2 -> 1, and mean 5 / 3 -> ceil(5 / 6) = 1.
    s = scaler(impl, target=2, max_scale_down_rate=1000)
    assert replay(s, [(0, 3, 0), (1, 1, 0), (1, 1, 0)]) == [2, 1, 1]
    s = scaler(impl, target=4)
    assert replay(s, [(0, 9, 0)]) == [3]


@grade("a sample exactly one window old must have left the window", "windows", timeout=5)
def test_window_edge(impl):
    # Window 10, no down limit worth the name. At 9.5 the sample at 0 is still in: mean 5 ->
    # 5; at 10 it is out: mean (0 + 0) / 2 = 0 -> min_replicas 1.
    s = scaler(impl, target=1, stable_window_s=10, max_scale_down_rate=1000)
    assert replay(s, [(0, 10, 0), (9.5, 0, 0)]) == [10, 5]
    assert replay(s, [(10, 0, 0)]) == [1]


@grade("the window must hold the samples of the last stable_window_s seconds, not a count of "
       "samples", "windows", timeout=5)
def test_window_by_time(impl):
    # Two samples 11 s apart in a 10 s window: only the newer one counts.
    s = scaler(impl, target=1, stable_window_s=10, max_scale_down_rate=1000)
    assert replay(s, [(0, 20, 0), (11, 0, 2)]) == [20, 2]
    # Eleven samples within one second of a 10 s window: all of them count. The last mean is
    # 100 / 11 -> 10, where the last ten samples alone would give 0.
    s = scaler(impl, target=1, stable_window_s=10, max_scale_down_rate=1000)
    calls = [(0, 100, 0)] + [(i / 16, 0, 0) for i in range(1, 11)]
    assert replay(s, calls) == [100, 50, 34, 25, 20, 17, 15, 13, 12, 10, 10]


@grade("the mean must include the sample just recorded", "windows", timeout=5)
def test_current_sample_counts(impl):
    s = scaler(impl, target=1)
    assert replay(s, [(0, 8, 0)]) == [8]
    assert replay(s, [(1, 16, 0)]) == [12]


@grade("a sample at the same time as the previous one must still be recorded", "windows",
       timeout=5)
def test_same_time_sample_recorded(impl):
    # Both samples at 0 count: mean (4 + 0) / 2 = 2, not the last one alone (0 -> 1).
    s = scaler(impl, target=1, max_scale_down_rate=1000)
    assert replay(s, [(0, 4, 0), (0, 0, 0)]) == [4, 2]


@grade("a call at a repeated time must still take a decision", "decision", timeout=5)
def test_repeated_time_decides(impl):
    s = scaler(impl, target=1)
    assert replay(s, [(0, 2, 0), (0, 10, 0), (0, 12, 0)]) == [2, 6, 8]
    assert s.replicas == 8


@grade("the mean must be the sum of the loads in the window over their number", "windows",
       timeout=5)
def test_mean_is_sum_over_count(impl):
    # Window 10 holds 3 and 4: mean 3.5 -> 4 (not 7 / 10 s, not 7 // 2 = 3).
    s = scaler(impl, target=1, stable_window_s=10)
    assert replay(s, [(0, 3, 0), (1, 4, 0)]) == [3, 4]
    s = scaler(impl, target=0.5, stable_window_s=10)
    assert replay(s, [(0, 1, 0), (4, 0, 0)]) == [2, 1]  # mean 0.5 over target 0.5


@grade("scaling up at rate 1.5 from one replica must go 2, 3, 5, 8", "rate_limits", timeout=5)
def test_up_rate(impl):
    # up = ceil(1.5 * r): ceil(1.5) = 2, ceil(3) = 3, ceil(4.5) = 5, ceil(7.5) = 8.
    s = scaler(impl, target=1, max_scale_up_rate=1.5)
    assert replay(s, [(t, 100, 0) for t in range(5)]) == [2, 3, 5, 8, 12]


@grade("a fall must be limited to floor(r / max_scale_down_rate) per decision", "rate_limits",
       timeout=5)
def test_down_rate(impl):
    # From 7 with no load left (window 1): floor(7 / 2) = 3, floor(3 / 2) = 1, then 1.
    s = scaler(impl, target=1, stable_window_s=1)
    assert replay(s, [(0, 7, 0), (1, 0, 0), (2, 0, 0), (3, 0, 0)]) == [7, 3, 1, 1]
    s = scaler(impl, target=1, stable_window_s=1, max_scale_down_rate=4)
    assert replay(s, [(0, 9, 0), (1, 0, 0)]) == [9, 2]


@grade("a fleet at zero must grow when load arrives", "rate_limits", timeout=5)
def test_zero_grows(impl):
    # min_replicas 0: r = max(1, 0) = 1, so up = ceil(1000 * 1) leaves room for the count.
    s = scaler(impl, target=1, min_replicas=0, stable_window_s=1)
    assert replay(s, [(0, 0, 0), (1, 5, 0)]) == [0, 5]
    s = scaler(impl, target=1, min_replicas=0, stable_window_s=1, max_scale_up_rate=2)
    assert replay(s, [(0, 0, 0), (1, 5, 0), (2, 5, 0)]) == [0, 2, 4]


@grade("before the first decision replicas must be min_replicas", "decision", timeout=5)
def test_initial_replicas(impl):
    for low in (0, 1, 3):
        assert scaler(impl, target=1, min_replicas=low).replicas == low


@grade("the total must stay within min_replicas and max_replicas", "decision", timeout=5)
def test_bounds(impl):
    s = scaler(impl, target=1, min_replicas=3, max_replicas=5)
    assert replay(s, [(0, 0, 0), (1, 100, 0), (1, 100, 0)]) == [3, 5, 5]
    assert s.replicas == 5


@grade("observe must return the new total, and replicas must report it", "decision",
       timeout=5)
def test_returns_total(impl):
    s = scaler(impl, target=1, min_replicas=2, max_replicas=6, stable_window_s=1)
    for call, want in [((0, 4, 0), 4), ((0, 4, 0), 4), ((1, 10, 0), 6), ((2, 0, 0), 3),
                       ((3, 0, 0), 2)]:
        assert s.observe(*call) == want
        assert s.replicas == want


@grade("decisions must follow the stable-mode rules over random calls", "decision",
       timeout=30)
@settings(max_examples=150)
@given(configs(1), scripts())
def test_matches_oracle(impl, kw, script):
    s, oracle = impl.QueueAutoscaler(**kw), Oracle(**kw)
    for call in script:
        assert s.observe(*call) == oracle.observe(*call), (kw, call)


@grade("every result must be an int within the bounds and equal to replicas", "decision",
       timeout=20)
@settings(max_examples=100)
@given(configs(1), scripts())
def test_results_are_bounded_totals(impl, kw, script):
    s = impl.QueueAutoscaler(**kw)
    for call in script:
        got = s.observe(*call)
        assert type(got) is int and kw["min_replicas"] <= got <= kw["max_replicas"], (call, got)
        assert s.replicas == got


@grade("a decision must stay within the rate limits of the total before it", "rate_limits",
       timeout=20)
@settings(max_examples=100)
@given(configs(1), scripts())
def test_rate_limits_hold(impl, kw, script):
    s = impl.QueueAutoscaler(**kw)
    for call in script:
        p = max(1, s.replicas)
        got = s.observe(*call)
        low = math.floor(p / kw["max_scale_down_rate"])
        high = math.ceil(kw["max_scale_up_rate"] * p)
        assert low <= got <= high, (call, p, got)


@grade("multiplying every load and the target by a power of two must change no decision",
       "windows", timeout=20)
@settings(max_examples=100)
@given(configs(1), scripts(), st.sampled_from((2, 4, 8, 1024)))
def test_scale_invariance(impl, kw, script, k):
    plain = replay(impl.QueueAutoscaler(**kw), script)
    scaled = replay(impl.QueueAutoscaler(**{**kw, "target": kw["target"] * k}),
                    [(t, q * k, f * k) for t, q, f in script])
    assert scaled == plain
