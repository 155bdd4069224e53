"""Visible examples. `pytest katas/slo_batcher` also runs the hidden suite on your file."""

import pandas as pd
import pytest


def batches(got):
    return [(b.batch_id, tuple(b.request_ids), b.dispatch_ms) for b in got]


def test_the_example_from_the_prompt(impl):
    b = impl.DeadlineBatcher(slo_ms=50, max_batch=8, cost=impl.LinearCost(10, 2))
    b.add("a", 0)
    assert b.next_dispatch_time() == 38          # 50 - run_ms(1)
    b.add("b", 5)
    assert b.next_dispatch_time() == 36          # 50 - run_ms(2): the wait shrinks
    b.add("c", 35)                               # latest(3) = 34 < 35: c is left out
    assert batches(b.poll(35)) == [(0, ("a", "b"), 35)]
    assert len(b) == 1 and b.next_dispatch_time() is None   # busy
    b.complete(0, 49)
    assert b.violations == 0 and b.next_dispatch_time() == 73
    assert batches(b.poll(80)) == [(1, ("c",), 73)]          # stamped at the timer


def test_a_full_batch_goes_at_once(impl):
    b = impl.DeadlineBatcher(slo_ms=50, max_batch=2, cost=impl.LinearCost(10, 2))
    b.add("a", 0)
    b.add("b", 1)
    assert batches(b.poll(1)) == [(0, ("a", "b"), 1)]


def test_online_cost_fits_a_line(impl):
    cost = impl.OnlineCost(window=8, prior_fixed_ms=10, prior_per_item_ms=2)
    assert cost.coefficients == (10, 2)
    cost.observe(1, 7)
    cost.observe(3, 13)                          # the line 4 + 3 b
    assert cost.coefficients == pytest.approx((4, 3))
    assert cost.run_ms(2) == pytest.approx(10)


def test_the_tail_is_attributed_by_its_own_requests(impl):
    trace = pd.DataFrame({
        "request_id": [0, 1, 2],
        "arrival": [0, 10, 20],
        "dispatch": [38, 38, 20],
        "start": [38, 38, 20],
        "end": [52, 52, 60],
        "batch_id": [0, 0, 1],
        "worker": [0, 0, 1],
    })
    stats = impl.window_stats(trace, 100)
    assert list(stats.index) == [0]
    assert stats.loc[0, "requests"] == 3 and stats.loc[0, "batch_size_mean"] == pytest.approx(5 / 3)
    tail = impl.attribute_tail(trace, 100)
    assert tail.loc[0, "tail"] == 1 and tail.loc[0, "cause"] == "linger"   # request 0: 38 of 52
