"""Level 2: the learned cost (least squares over a window, the fallback, the clamps) and bad
input, where a call that raises must change nothing."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.marks import level

from .helpers import batches, halves

grade = level(2)


def close(got, want) -> bool:
    return all(abs(g - w) <= 1e-9 * abs(w) + 1e-9 for g, w in zip(got, want, strict=True))


def online(impl, points=(), *, window=8, fixed=10, per_item=2):
    cost = impl.OnlineCost(window=window, prior_fixed_ms=fixed, prior_per_item_ms=per_item)
    for x, y in points:
        cost.observe(x, y)
    return cost


@grade("coefficients must be the priors before any observation", "online_cost", timeout=5)
def test_priors_first(impl):
    cost = online(impl, fixed=10, per_item=2)
    assert close(cost.coefficients, (10, 2))
    assert close([cost.run_ms(3)], [16])


@grade("the slope must be the least-squares slope over the window", "online_cost", timeout=5)
def test_least_squares(impl):
    # x̄ = 2, ȳ = 37/3; Σ(x-x̄)(y-ȳ) = 4, Σ(x-x̄)² = 2: slope 2, fixed 37/3 - 4 = 25/3.
    cost = online(impl, [(1, 10), (2, 13), (3, 14)])
    assert close(cost.coefficients, (25 / 3, 2))


@grade("with one distinct size the slope must be the prior per-item cost, fitted through the "
       "mean", "online_cost", timeout=5)
def test_one_size_falls_back(impl):
    assert close(online(impl, [(3, 20)]).coefficients, (14, 2))  # 20 - 2 * 3
    assert close(online(impl, [(4, 30), (4, 34)]).coefficients, (24, 2))  # 32 - 2 * 4


@grade("a negative slope must be clamped to zero before the fixed cost is fitted",
       "online_cost", timeout=5)
def test_negative_slope_clamped(impl):
    cost = online(impl, [(1, 20), (3, 10)])  # slope -5 -> 0; fixed = ȳ = 15
    assert close(cost.coefficients, (15, 0))
    assert close([cost.run_ms(1), cost.run_ms(7)], [15, 15])


@grade("a fitted fixed cost below zero must be kept", "online_cost", timeout=5)
def test_negative_fixed_kept(impl):
    cost = online(impl, [(2, 1), (4, 7)])  # slope 3, fixed 4 - 3 * 3 = -5
    assert close(cost.coefficients, (-5, 3))
    assert close([cost.run_ms(2), cost.run_ms(4)], [1, 7])


@grade("run_ms must never be negative", "online_cost", timeout=5)
def test_run_ms_clamped(impl):
    cost = online(impl, [(2, 1), (4, 7)])
    assert cost.run_ms(1) == 0


@grade("only the last window observations may count", "online_cost", timeout=5)
def test_window(impl):
    cost = online(impl, [(1, 100), (1, 12), (3, 16)], window=2)  # (1, 100) is forgotten
    assert close(cost.coefficients, (10, 2))
    cost.observe(3, 16)  # the window now holds one size: the prior slope through ȳ = 16
    assert close(cost.coefficients, (10, 2))
    cost.observe(5, 36)
    assert close(cost.coefficients, (-14, 10))


@grade("a batcher must learn its cost from the run times it observes", "online_cost",
       timeout=5)
def test_batcher_learns_from_zero(impl):
    cost = online(impl, fixed=0, per_item=0)
    b = impl.DeadlineBatcher(slo_ms=50, max_batch=4, cost=cost)
    b.add("a", 0)
    assert b.next_dispatch_time() == pytest.approx(50, abs=1e-6)  # a cost of 0: wait it all
    b.poll(50)
    b.complete(0, 60)
    assert b.violations == 1 and close(cost.coefficients, (10, 0))
    b.add("b", 100)
    assert b.next_dispatch_time() == pytest.approx(140, abs=1e-6)


@grade("linear data over two or more sizes must be fitted exactly", "online_cost", timeout=20)
@settings(max_examples=60)
@given(halves, st.integers(0, 10).map(lambda k: k / 2),
       st.lists(st.integers(1, 64), min_size=2, max_size=30).filter(lambda xs: len(set(xs)) > 1))
def test_linear_data_fitted(impl, fixed, slope, sizes):
    cost = online(impl, [(x, fixed + slope * x) for x in sizes], window=len(sizes), fixed=3,
                  per_item=7)
    assert close(cost.coefficients, (fixed, slope))


@grade("the fit must depend only on the last window observations, in any order",
       "online_cost", timeout=20)
@settings(max_examples=60)
@given(st.lists(st.tuples(st.integers(1, 16), halves), min_size=1, max_size=30),
       st.integers(1, 12), st.randoms(use_true_random=False))
def test_window_order_free(impl, points, window, rng):
    kept = points[-window:]
    shuffled = rng.sample(kept, len(kept))
    got = online(impl, points, window=window).coefficients
    assert close(got, online(impl, shuffled, window=window).coefficients)


# Bad input: each case breaks one rule.

def busy(impl):
    """A batcher at clock 38 with "a" in flight as batch 0 and "b" queued."""
    b = impl.DeadlineBatcher(slo_ms=50, max_batch=4, cost=impl.LinearCost(10, 2))
    b.add("a", 0)
    b.poll(38)
    b.add("b", 38)
    return b


@pytest.mark.parametrize("call", ["add", "poll", "complete"])
@pytest.mark.parametrize("now", ["40", None, math.nan, math.inf])
@grade("a now that is not a finite number must raise ValueError", "errors", timeout=5)
def test_bad_now(impl, call, now):
    b = busy(impl)
    with pytest.raises(ValueError):
        {"add": lambda: b.add("c", now), "poll": lambda: b.poll(now),
         "complete": lambda: b.complete(0, now)}[call]()


@pytest.mark.parametrize("make", [
    lambda impl: impl.DeadlineBatcher(slo_ms=True, max_batch=4, cost=impl.LinearCost(10, 2)),
    lambda impl: impl.DeadlineBatcher(slo_ms=50, max_batch=True, cost=impl.LinearCost(10, 2)),
    lambda impl: impl.LinearCost(True, 2),
    lambda impl: impl.LinearCost(10, False),
    lambda impl: impl.LinearCost(10, 2).run_ms(True),
    lambda impl: impl.OnlineCost(window=True, prior_fixed_ms=10, prior_per_item_ms=2),
    lambda impl: impl.OnlineCost(window=4, prior_fixed_ms=False, prior_per_item_ms=2),
    lambda impl: online(impl).observe(True, 12),
    lambda impl: online(impl).observe(2, True),
    lambda impl: online(impl).run_ms(True),
    lambda impl: impl.DeadlineBatcher(slo_ms=50, max_batch=4,
                                      cost=impl.LinearCost(10, 2)).add("c", True),
], ids=["slo_ms", "max_batch", "fixed_ms", "per_item_ms", "run_ms", "window", "prior",
        "observe_size", "observe_ms", "online_run_ms", "now"])
@grade("a bool must never be accepted as a number", "errors", timeout=5)
def test_bool_is_not_a_number(impl, make):
    with pytest.raises(ValueError):
        make(impl)


@pytest.mark.parametrize("first, then", [
    (lambda b: b.add("c", 40), lambda b: b.add("d", 39.5)),
    (lambda b: b.poll(60), lambda b: b.add("c", 59)),
    (lambda b: b.complete(0, 70), lambda b: b.poll(69)),
    (lambda b: b.poll(60), lambda b: b.complete(0, 50)),
], ids=["after_add", "after_poll", "after_complete", "complete_after_poll"])
@grade("a now earlier than the latest one accepted must raise ValueError", "errors", timeout=5)
def test_clock_never_goes_back(impl, first, then):
    b = busy(impl)
    first(b)
    with pytest.raises(ValueError):
        then(b)


@pytest.mark.parametrize("slo", [0, -5, math.nan, math.inf, "50", None])
@grade("slo_ms that is not a finite number above 0 must raise ValueError", "errors", timeout=5)
def test_bad_slo(impl, slo):
    with pytest.raises(ValueError):
        impl.DeadlineBatcher(slo_ms=slo, max_batch=4, cost=impl.LinearCost(10, 2))


@pytest.mark.parametrize("make", [
    lambda impl: impl.DeadlineBatcher(slo_ms=50, max_batch=0, cost=impl.LinearCost(10, 2)),
    lambda impl: impl.DeadlineBatcher(slo_ms=50, max_batch=2.0, cost=impl.LinearCost(10, 2)),
    lambda impl: impl.DeadlineBatcher(slo_ms=50, max_batch="4", cost=impl.LinearCost(10, 2)),
    lambda impl: impl.OnlineCost(window=0, prior_fixed_ms=10, prior_per_item_ms=2),
    lambda impl: impl.OnlineCost(window=1.5, prior_fixed_ms=10, prior_per_item_ms=2),
    lambda impl: impl.LinearCost(10, 2).run_ms(0),
    lambda impl: impl.LinearCost(10, 2).run_ms(2.0),
    lambda impl: online(impl).run_ms(-1),
    lambda impl: online(impl).observe(0, 12),
    lambda impl: online(impl).observe(1.5, 12),
], ids=["max_batch_0", "max_batch_float", "max_batch_str", "window_0", "window_float",
        "run_ms_0", "run_ms_float", "online_run_ms_negative", "observe_0", "observe_float"])
@grade("max_batch, window and batch sizes must be ints of at least 1", "errors", timeout=5)
def test_bad_counts(impl, make):
    with pytest.raises(ValueError):
        make(impl)


@pytest.mark.parametrize("make", [
    lambda impl: impl.LinearCost(-1, 2),
    lambda impl: impl.LinearCost(10, -0.5),
    lambda impl: impl.LinearCost(math.nan, 2),
    lambda impl: impl.LinearCost(10, math.inf),
    lambda impl: impl.LinearCost("10", 2),
    lambda impl: impl.OnlineCost(window=4, prior_fixed_ms=-1, prior_per_item_ms=2),
    lambda impl: impl.OnlineCost(window=4, prior_fixed_ms=10, prior_per_item_ms=math.nan),
    lambda impl: impl.OnlineCost(window=4, prior_fixed_ms=math.inf, prior_per_item_ms=2),
    lambda impl: online(impl).observe(2, -1),
    lambda impl: online(impl).observe(2, math.nan),
    lambda impl: online(impl).observe(2, math.inf),
    lambda impl: online(impl).observe(2, None),
], ids=["fixed_negative", "per_item_negative", "fixed_nan", "per_item_inf", "fixed_str",
        "prior_negative", "prior_nan", "prior_inf", "run_negative", "run_nan", "run_inf",
        "run_none"])
@grade("fixed_ms, per_item_ms, priors and run times must be finite and at least 0", "errors",
       timeout=5)
def test_bad_ms(impl, make):
    with pytest.raises(ValueError):
        make(impl)


@grade("an id that is queued or in flight must be refused with ValueError", "errors",
       timeout=5)
def test_duplicate_id(impl):
    b = busy(impl)
    with pytest.raises(ValueError):
        b.add("b", 39)  # queued
    with pytest.raises(ValueError):
        b.add("a", 39)  # in flight
    assert len(b) == 1


@grade("an id must be accepted again once its batch has completed", "errors", timeout=5)
def test_id_reused_after_completion(impl):
    b = busy(impl)
    b.complete(0, 50)
    b.add("a", 51)
    assert len(b) == 2


@pytest.mark.parametrize("script", [
    lambda b: b.complete(0, 1),  # nothing in flight yet
    lambda b: (b.add("a", 0), b.poll(38), b.complete(1, 40)),  # batch 0 is in flight
    lambda b: (b.add("a", 0), b.poll(38), b.complete(0, 50), b.complete(0, 51)),  # done
    # batch 0 is done and batch 1 is in flight: an older id is not in flight either
    lambda b: (b.add("a", 0), b.poll(38), b.complete(0, 50), b.add("b", 50), b.poll(100),
               b.complete(0, 101)),
], ids=["none_in_flight", "other_batch", "completed_twice", "older_batch"])
@grade("complete of a batch not in flight must raise KeyError", "errors", timeout=5)
def test_complete_unknown_batch(impl, script):
    b = impl.DeadlineBatcher(slo_ms=50, max_batch=4, cost=impl.LinearCost(10, 2))
    with pytest.raises(KeyError):
        script(b)


@grade("the first call may come at any finite time, a negative one included", "errors",
       timeout=5)
def test_first_call_at_a_negative_time(impl):
    b = impl.DeadlineBatcher(slo_ms=50, max_batch=4, cost=impl.LinearCost(10, 2))
    b.add("a", -100)
    assert len(b) == 1 and b.next_dispatch_time() == -62


@grade("a call that raises must not move the clock or fire a timer", "errors", timeout=5)
def test_raising_call_changes_nothing(impl):
    b = impl.DeadlineBatcher(slo_ms=50, max_batch=8, cost=impl.LinearCost(10, 2))
    b.add("a", 0)
    b.add("b", 5)  # timer at 36
    with pytest.raises(ValueError):
        b.add("a", 40)  # a duplicate, at a time past the timer
    assert b.next_dispatch_time() == 36 and len(b) == 2
    b.add("c", 20)  # the clock is still at 5
    assert b.next_dispatch_time() == 34
    assert batches(b.poll(34)) == [(0, ("a", "b", "c"), 34)]


@grade("an observation that raises must leave the fit unchanged", "errors", timeout=5)
def test_rejected_observation(impl):
    cost = online(impl, [(1, 12)], window=2)
    with pytest.raises(ValueError):
        cost.observe(2, -1)
    assert close(cost.coefficients, (10, 2))
    cost.observe(3, 16)
    assert close(cost.coefficients, (10, 2))


def bad_calls(b, t: float, flight, queued):
    """Calls that must raise and change nothing; those with a valid time make it `t + 100`,
    past any timer."""
    yield ValueError, lambda: b.add("fresh", -1)  # before the clock
    yield ValueError, lambda: b.poll(math.nan)
    yield KeyError, lambda: b.complete(-1 if flight is None else flight + 1, t + 100)
    if queued:
        yield ValueError, lambda: b.add(queued[0], t + 100)


@grade("after a raising call the batcher must answer like a twin that never saw it", "errors",
       timeout=20)
@settings(max_examples=60)
@given(st.lists(st.tuples(st.sampled_from(["add", "add", "poll", "complete"]), halves,
                          st.integers(0, 4)), max_size=30))
def test_twin(impl, script):
    pair = [impl.DeadlineBatcher(slo_ms=20, max_batch=3, cost=impl.LinearCost(4, 1))
            for _ in range(2)]
    t, flight, queued, n = 0.0, None, [], 0
    for op, dt, bad in script:
        t += dt
        if op == "add":
            for b in pair:
                b.add(f"r{n}", t)
            queued.append(f"r{n}")
            n += 1
        elif op == "complete" and flight is not None:
            for b in pair:
                b.complete(flight, t)
            flight = None
        got = [batches(b.poll(t)) for b in pair]
        assert got[0] == got[1]
        for batch_id, ids, _ in got[0]:
            flight = batch_id
            queued = [rid for rid in queued if rid not in ids]
        for error, call in list(bad_calls(pair[0], t, flight, queued))[bad:bad + 1]:
            with pytest.raises(error):
                call()
        a, b = pair
        assert (len(a), a.next_dispatch_time(), a.violations) == (
            len(b), b.next_dispatch_time(), b.violations)
