"""End to end: a seeded Poisson workload served by the reference DeadlineBatcher with a learned
cost, its log read back by the reference's Level 3 and checked against a plain recount; and the
benchmark's quick run, whose figures must tell the story the docs tell."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from harness import catalog
from harness.loader import load_module
from harness.suites.slo_batcher import oracle
from harness.suites.slo_batcher.helpers import Server

KATA = catalog.get("slo_batcher")
SLO = 50


@pytest.fixture(scope="module")
def served(reference):
    """5,000 Poisson arrivals at about 60 % of capacity; a batch of b runs 5 + 0.5 b ms plus
    exponential noise of mean 1 ms. Returns (batcher, cost, trace)."""
    rng = random.Random(0)
    t, arrivals = 0.0, []
    for i in range(5000):
        t += rng.expovariate(0.9)  # per ms
        arrivals.append((i, t))
    noise = [rng.expovariate(1.0) for _ in arrivals]
    cost = reference.OnlineCost(window=200, prior_fixed_ms=10, prior_per_item_ms=1)
    batcher = reference.DeadlineBatcher(slo_ms=SLO, max_batch=32, cost=cost)
    sent = Server(batcher, lambda b, i: 5 + 0.5 * b + noise[i]).run(arrivals)
    arrival = dict(arrivals)
    trace = pd.DataFrame([(rid, arrival[rid], s.dispatch, s.dispatch, s.end, s.batch_id, "gpu0")
                          for s in sent for rid in s.ids], columns=oracle.COLUMNS)
    return batcher, cost, trace


def test_the_cost_is_learned_from_the_runs(served):
    _, cost, _ = served
    fixed, slope = cost.coefficients
    assert abs(slope - 0.5) < 0.1 and abs(fixed - 6) < 1.5  # noise adds 1 ms on average


def test_the_log_accounts_for_every_request_and_violation(served):
    batcher, _, trace = served
    assert len(trace) == 5000 and trace.request_id.is_unique
    assert batcher.violations == int(((trace.end - trace.arrival) > SLO).sum())


def test_window_stats_of_the_log_match_a_plain_recount(reference, served):
    _, _, trace = served
    got = reference.window_stats(trace, 250)
    oracle.same(got, oracle.stats(trace, 250))
    assert got["requests"].sum() == 5000
    assert ((got["utilisation"] > 0) & (got["utilisation"] <= 1)).all()


def test_tail_attribution_of_the_log_matches_a_plain_recount(reference, served):
    _, _, trace = served
    oracle.same(reference.attribute_tail(trace, 250), oracle.tails(trace, 250))


def test_the_quick_benchmark_tells_the_story_of_the_docs(reference):
    bench = load_module(KATA.bench_path, "slo_batcher_bench_e2e")
    table = bench.main(reference, quick=True)
    rows = {(r[0], r[1].removesuffix(" (best fixed)")): r for r in table.rows}
    assert len(rows) == 3 * 7

    def violations(load, policy):
        return float(rows[(load, policy)][2])

    assert violations("30%", "fixed max_wait 40 ms") > 10  # blind to run time
    for load in ("30%", "60%"):
        assert violations(load, "deadline, LinearCost") < 1
        assert float(rows[(load, "deadline, LinearCost")][6]) > 25  # p50: it spends its budget
    assert violations("90%", "reference, late batches shrunk") > 50  # collapses
    assert all(float(r[-1]) <= 100 for r in table.rows)  # one worker runs one batch at a time
    assert any("µs" in note for note in table.notes)
