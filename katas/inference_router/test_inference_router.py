"""Visible examples: the two worked examples of the prompt, event by event. `pytest
katas/inference_router` also runs the hidden suite on your file."""


def ev(events):
    return [tuple(e) for e in events]


def test_worked_example_levels_1_and_2(impl):
    r = impl.InferenceRouter(queue_limit=2, retry_after_s=1.5)
    r.add_replica(0, "a", "m", "v1", 2)
    r.add_replica(0, "b", "m", "v1", 1)
    r.add_replica(0, "c", "m", "v2", 1)
    assert r.set_split(0, "m", {"v1": 90, "v2": 10}) == []
    assert r.split("m") == [("v1", 90), ("v2", 10)]
    assert r.version_for("m", "judy") == "v2" and r.version_for("m", "alice") == "v1"
    assert ev(r.submit(1, "r1", "m", "alice", 1)) == [("dispatch", "r1", "a", None)]
    assert ev(r.submit(2, "r2", "m", "bob", 1)) == [("dispatch", "r2", "b", None)]
    assert ev(r.submit(3, "r3", "m", "judy", 1)) == [("dispatch", "r3", "c", None)]
    assert ev(r.submit(4, "r4", "m", "carol", 3)) == [("dispatch", "r4", "a", None)]
    assert ev(r.submit(5, "r5", "m", "dave", 3)) == [("queue", "r5", None, None)]
    assert ev(r.submit(6, "r6", "m", "erin", 2)) == [("queue", "r6", None, None)]
    assert r.queued("m", "v1") == ["r6", "r5"]
    assert ev(r.submit(7, "r7", "m", "frank", 0)) == [("shed", "r5", None, 2),
                                                       ("queue", "r7", None, None)]
    assert ev(r.submit(8, "r8", "m", "grace", 2)) == [("reject", "r8", None, 2)]
    assert r.queued("m", "v1") == ["r7", "r6"]
    assert ev(r.complete(9, "r2")) == [("done", "r2", "b", None), ("dispatch", "r7", "b", None)]
    assert ev(r.complete(10, "r1")) == [("done", "r1", "a", None), ("dispatch", "r6", "a", None)]
    assert ev(r.submit(12, "r9", "m", "judy", 1)) == [("queue", "r9", None, None)]
    assert r.in_flight("a") == 2 and r.queued("m", "v2") == ["r9"]


def test_worked_example_level_3(impl):
    r = impl.InferenceRouter(queue_limit=2, max_attempts=2, consecutive_failures=2,
                             base_ejection_s=4, max_ejection_s=10, max_ejection_percent=50)
    r.add_replica(0, "a", "m", "v1", 1)
    r.add_replica(0, "b", "m", "v1", 1)
    r.add_replica(0, "c", "m", "v2", 2)
    r.set_split(0, "m", {"v1": 100})
    assert ev(r.submit(1, "r1", "m", "alice")) == [("dispatch", "r1", "a", None)]
    assert ev(r.submit(1, "r2", "m", "bob")) == [("dispatch", "r2", "b", None)]
    assert ev(r.complete(2, "r1", ok=False)) == [("fail", "r1", "a", None)]
    assert ev(r.submit(3, "r3", "m", "erin")) == [("dispatch", "r3", "a", None)]
    assert ev(r.complete(4, "r3", ok=False)) == [("fail", "r3", "a", None)]
    assert r.replica_state("a") == "ejected"
    assert ev(r.complete(5, "r2", ok=False)) == [("fail", "r2", "b", None)]
    assert ev(r.submit(5, "r4", "m", "grace")) == [("dispatch", "r4", "b", None)]
    assert ev(r.complete(6, "r4", ok=False)) == [("fail", "r4", "b", None)]
    assert r.replica_state("b") == "healthy"
    assert ev(r.submit(8, "r5", "m", "alice")) == [("dispatch", "r5", "a", None)]
    assert r.replica_state("a") == "probing"
    assert ev(r.submit(8, "r6", "m", "bob")) == [("dispatch", "r6", "b", None)]
    assert ev(r.complete(9, "r6")) == [("done", "r6", "b", None)]
    assert ev(r.complete(9, "r5", ok=False)) == [("retry", "r5", "b", None)]
    assert r.replica_state("a") == "ejected"
    assert ev(r.complete(10, "r5")) == [("done", "r5", "b", None)]
    assert r.start_rollout(10, "m", "v2", [(50, 30)], max_error_percent=70, window_s=4,
                           min_requests=2) == []
    assert r.split("m") == [("v1", 50), ("v2", 50)] and r.rollout_status("m") == "running"
    assert ev(r.submit(10, "s1", "m", "carol")) == [("dispatch", "s1", "c", None)]
    assert ev(r.submit(10, "s2", "m", "dave")) == [("dispatch", "s2", "c", None)]
    assert ev(r.complete(11, "s2")) == [("done", "s2", "c", None)]
    assert ev(r.submit(11, "s3", "m", "frank")) == [("dispatch", "s3", "c", None)]
    assert ev(r.submit(12, "s4", "m", "judy")) == [("queue", "s4", None, None)]
    assert ev(r.complete(14, "s3", ok=False)) == [("fail", "s3", "c", None),
                                                  ("dispatch", "s4", "c", None)]
    assert ev(r.submit(14, "s5", "m", "carol")) == [("queue", "s5", None, None)]
    assert ev(r.complete(15, "s4", ok=False)) == [("retry", "s4", "b", None)]
    assert r.rollout_status("m") == "rolled_back" and r.split("m") == [("v1", 100)]
    assert r.replica_state("c") == "draining" and r.queued("m", "v1") == ["s5"]
    assert ev(r.complete(16, "s1")) == [("done", "s1", "c", None), ("removed", None, "c", None)]
    assert ev(r.tick(17)) == [("dispatch", "s5", "a", None)]
    assert ev(r.complete(18, "s5")) == [("done", "s5", "a", None)]
    assert r.replica_state("a") == "healthy"
    assert ev(r.complete(18, "s4")) == [("done", "s4", "b", None)]
