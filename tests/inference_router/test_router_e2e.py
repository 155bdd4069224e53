"""End to end: the reference router in front of simulated replicas on a simulated clock, driving
a canary rollout that fails and rolls back, one that is promoted, and the benchmark's quick run,
whose figures must tell the story the docs tell."""

from __future__ import annotations

import pytest

from harness import catalog
from harness.loader import load_module
from harness.suites.inference_router.sim import poisson, run

KATA = catalog.get("inference_router")
STABLE, CANARY = ("s0", "s1", "s2"), ("c0", "c1")
STEPS = [(10, 30), (50, 30), (100, 30)]  # start at t = 20: steps at 50 and 80, promotion at 110


def rollout(reference, canary_fails: bool):
    r = reference.InferenceRouter(queue_limit=8, queue_timeout_s=5, max_attempts=2)
    for replica in STABLE:
        r.add_replica(0, replica, "m", "v1", 2)
    for replica in CANARY:
        r.add_replica(0, replica, "m", "v2", 2)
    r.set_split(0, "m", {"v1": 100})
    def start(router, t):
        return router.start_rollout(t, "m", "v2", STEPS, max_error_percent=20, window_s=10,
                                    min_requests=5)

    arrivals = poisson(3, 150, 7)
    fails = (lambda replica, t: replica in CANARY) if canary_fails else (lambda replica, t: False)
    out = run(r, "m", arrivals, {k: 1.0 for k in STABLE + CANARY}, fails=fails, until=170,
              calls=[(20, start)])
    return r, arrivals, out


@pytest.fixture(scope="module")
def rolled_back(reference):
    return rollout(reference, canary_fails=True)


@pytest.fixture(scope="module")
def promoted(reference):
    return rollout(reference, canary_fails=False)


def test_a_failing_canary_is_rolled_back_in_its_first_step(rolled_back):
    r, arrivals, out = rolled_back
    assert r.rollout_status("m") == "rolled_back" and r.split("m") == [("v1", 100)]
    removed = {e[2]: t for t, e in out.log if e[0] == "removed"}
    assert set(removed) == set(CANARY)
    assert max(removed.values()) < 50  # before the second step
    assert [r.replica_state(k) for k in CANARY] == ["removed", "removed"]
    # After the last canary attempt finished, only the stable pool serves.
    last = max(removed.values())
    assert all(e[2] in STABLE for t, e in out.log if t > last and e[0] in ("dispatch", "retry"))


def test_every_request_ends_once_and_the_canary_cost_few(rolled_back):
    r, arrivals, out = rolled_back
    ends = out.ends
    assert set(ends) == {a.rid for a in arrivals}
    assert set(ends.values()) <= {"done", "fail", "reject", "shed", "timeout"}
    failed = [rid for rid, end in ends.items() if end == "fail"]
    # Only canary attempts fail, a failed canary attempt is retried on the other canary replica
    # while the rollout runs, and the rollout stops after a handful of records.
    assert 0 < len(failed) <= 10
    assert sum(end == "done" for end in ends.values()) >= 0.95 * len(arrivals)
    assert all(r.in_flight(k) == 0 for k in STABLE + CANARY)


def test_a_healthy_canary_takes_its_weights_and_is_promoted(promoted):
    r, arrivals, out = promoted
    assert r.rollout_status("m") == "promoted" and r.split("m") == [("v2", 100)]
    first = [e[2] for t, e in out.log if 20 <= t < 50 and e[0] == "dispatch"]
    share = sum(k in CANARY for k in first) / len(first)
    assert 0.02 < share < 0.25  # 10 % of the buckets, of a random key sample
    removed = {e[2]: t for t, e in out.log if e[0] == "removed"}
    assert set(removed) == set(STABLE) and min(removed.values()) >= 110
    assert all(e[2] in CANARY for t, e in out.log if t >= 110 and e[0] == "dispatch")
    ends = list(out.ends.values())
    assert "fail" not in ends and ends.count("done") >= 0.98 * len(arrivals)


def test_the_quick_benchmark_tells_the_story_of_the_docs(reference):
    bench = load_module(KATA.bench_path, "inference_router_bench_e2e")
    table = bench.main(reference, quick=True)
    rows = {r[1]: r for r in table.rows}
    fifo, shed = rows["FIFO tail-drop, all at priority 1 (baseline)"], rows["priority shedding"]
    assert float(shed[2]) >= 0.99 and float(fifo[2]) < 0.8  # p0 goodput
    assert float(shed[3]) < float(fifo[3])  # p0 p99
    assert abs(float(shed[4]) / float(fifo[4]) - 1) < 0.02  # total completions per second
    attempts = [float(rows[v][5]) for v in ("no budget", "budget 20 %, at least 3",
                                            "budget and ejection after 5 failures")]
    assert attempts[0] > attempts[1] > attempts[2] and attempts[2] < 1.1
    assert float(rows["budget and ejection after 5 failures"][6]) > 99
    assert any("µs" in note for note in table.notes)
