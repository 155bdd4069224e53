"""End to end: the benchmark's serving hour (seeded Poisson arrivals with three 8x bursts, 2 s
ticks, 5 s cold starts, a 2 s SLO) under the reference scaler, the utilisation baseline, a fixed
fleet, a plain oracle of the prompt, and classic mistakes.

The figures are the prompt's, not the reference's: the oracle, which keeps every sample and scans
every window, gives the same ones; and the scaler beats scaling on utilisation on both.
"""

from __future__ import annotations

import pytest

from harness import catalog, mutants
from harness.loader import load_module
from harness.suites.queue_autoscaler import bench
from harness.suites.queue_autoscaler.helpers import SERVING
from harness.suites.queue_autoscaler.oracle import Oracle

KATA = catalog.get("queue_autoscaler")


class OracleScaler(bench.Scaler):
    def __init__(self) -> None:
        self.scaler = Oracle(**bench.SETTINGS)


@pytest.fixture(scope="module")
def hour():
    return bench.arrivals()


def figures(run: bench.Run) -> tuple[int, int]:
    return run.violations, run.replica_seconds


def test_the_reference_gives_the_pinned_figures_and_beats_utilisation_on_both(reference, hour):
    runs = bench.runs(reference, hour, bench.HOUR)
    scaler, hpa = runs["queue autoscaler"], runs["HPA on utilisation (baseline)"]
    assert figures(scaler) == SERVING
    assert scaler.violations < hpa.violations and scaler.replica_seconds < hpa.replica_seconds
    assert len(scaler.latencies) == len(hpa.latencies) == len(hour)  # every request served


def test_the_figures_are_the_prompts_not_the_references(hour):
    assert figures(bench.simulate(OracleScaler(), hour)) == SERVING


def test_a_fleet_fixed_for_the_peak_meets_the_slo_at_the_highest_cost(reference, hour):
    runs = bench.runs(reference, hour, bench.HOUR)
    fixed = runs[f"fixed fleet of {bench.FIXED}"]
    assert fixed.violations == 0
    assert fixed.replica_seconds > max(r.replica_seconds for r in runs.values() if r is not fixed)


@pytest.mark.parametrize("name", ["scales_down_in_panic", "starting_not_counted",
                                  "panic_leaves_when_not_over", "load_without_in_flight"])
def test_a_classic_mistake_changes_the_figures(hour, name):
    bad = load_module(mutants.materialise(KATA, name), f"queue_autoscaler_mutant_{name}")
    assert figures(bench.simulate(bench.Scaler(bad), hour)) != SERVING
