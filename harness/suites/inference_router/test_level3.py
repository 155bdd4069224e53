"""Level 3: outlier ejection (consecutive failures, the cap, linear durations, probes), draining,
and canary rollouts (scheduled steps, promotion, the sliding error window, rollback, migration,
the order of complete's events)."""

import math

import pytest

from harness.marks import level

from .helpers import (
    KEY,
    dispatch,
    done,
    ev,
    fail,
    fill,
    queue,
    reject,
    removed,
    retry,
    router,
    timeout,
)

grade = level(3)


@grade("the Level 3 example must give its events", "ejection", timeout=5)
def test_level_3_example(impl):
    r = router(impl, [("a", "v1", 1), ("b", "v1", 1), ("c", "v2", 2)], queue_limit=2,
               max_attempts=2, consecutive_failures=2, base_ejection_s=4, max_ejection_s=10,
               max_ejection_percent=50)
    assert ev(r.submit(1, "r1", "m", "alice")) == [dispatch("r1", "a")]
    assert ev(r.submit(1, "r2", "m", "bob")) == [dispatch("r2", "b")]
    assert ev(r.complete(2, "r1", ok=False)) == [fail("r1", "a")]
    assert ev(r.submit(3, "r3", "m", "erin")) == [dispatch("r3", "a")]
    assert ev(r.complete(4, "r3", ok=False)) == [fail("r3", "a")]
    assert ev(r.complete(5, "r2", ok=False)) == [fail("r2", "b")]
    assert ev(r.submit(5, "r4", "m", "grace")) == [dispatch("r4", "b")]
    assert ev(r.complete(6, "r4", ok=False)) == [fail("r4", "b")]
    assert ev(r.submit(8, "r5", "m", "alice")) == [dispatch("r5", "a")]
    assert ev(r.submit(8, "r6", "m", "bob")) == [dispatch("r6", "b")]
    assert ev(r.complete(9, "r6")) == [done("r6", "b")]
    assert ev(r.complete(9, "r5", ok=False)) == [retry("r5", "b")]
    assert ev(r.complete(10, "r5")) == [done("r5", "b")]
    assert r.start_rollout(10, "m", "v2", [(50, 30)], max_error_percent=70, window_s=4,
                           min_requests=2) == []
    assert ev(r.submit(10, "s1", "m", "carol")) == [dispatch("s1", "c")]
    assert ev(r.submit(10, "s2", "m", "dave")) == [dispatch("s2", "c")]
    assert ev(r.complete(11, "s2")) == [done("s2", "c")]
    assert ev(r.submit(11, "s3", "m", "frank")) == [dispatch("s3", "c")]
    assert ev(r.submit(12, "s4", "m", "judy")) == [queue("s4")]
    assert ev(r.complete(14, "s3", ok=False)) == [fail("s3", "c"), dispatch("s4", "c")]
    assert ev(r.submit(14, "s5", "m", "carol")) == [queue("s5")]
    assert ev(r.complete(15, "s4", ok=False)) == [retry("s4", "b")]
    assert ev(r.complete(16, "s1")) == [done("s1", "c"), removed("c")]
    assert ev(r.tick(17)) == [dispatch("s5", "a")]
    assert ev(r.complete(18, "s5")) == [done("s5", "a")]
    assert ev(r.complete(18, "s4")) == [done("s4", "b")]


def pool(impl, n=2, capacity=1, **settings):
    """Replicas a, b, ... of capacity `capacity` in m/v1; ejection after 2 failures."""
    settings = {"consecutive_failures": 2, "base_ejection_s": 4, "max_ejection_s": 100,
                "max_ejection_percent": 100, **settings}
    return router(impl, [("abcdefgh"[i], "v1", capacity) for i in range(n)], **settings)


def run_on(r, now, rid, ok, rep, key=KEY[0]):
    """Submit `rid` (it must go to `rep`) and complete it at once with `ok`."""
    assert ev(r.submit(now, rid, "m", key)) == [dispatch(rid, rep)]
    return ev(r.complete(now, rid, ok=ok))


def states(r, reps="ab"):
    return [r.replica_state(x) for x in reps]


@grade("a success must reset the count of consecutive failures", "ejection", timeout=5)
def test_success_resets_the_count(impl):
    r = pool(impl, n=1)
    run_on(r, 1, "x", False, "a")
    run_on(r, 2, "y", True, "a")
    run_on(r, 3, "z", False, "a")
    assert states(r, "a") == ["healthy"]
    run_on(r, 4, "w", False, "a")
    assert states(r, "a") == ["ejected"]


def ejected_at(impl, n: int):
    """A pool ejecting at n consecutive failures: healthy after n - 1 of them, ejected at n."""
    r = pool(impl, n=1, consecutive_failures=n)
    for i in range(n - 1):
        run_on(r, 1, f"x{i}", False, "a")
    assert states(r, "a") == ["healthy"]
    run_on(r, 1, f"x{n - 1}", False, "a")
    assert states(r, "a") == ["ejected"]
    return r


@grade("a replica must be ejected when its consecutive failures reach N", "ejection", timeout=5)
def test_ejected_at_n(impl):
    r = ejected_at(impl, 3)
    assert ev(r.submit(1, "y", "m", KEY[0])) == [reject("y")]


@grade("consecutive_failures of 300 must eject at the 300th failure", "ejection", timeout=10)
def test_large_n(impl):
    ejected_at(impl, 300)  # past 256, CPython's ints are not shared: the check must compare values


@grade("without consecutive_failures no replica must ever be ejected", "ejection", timeout=5)
def test_no_ejection_by_default(impl):
    r = router(impl, [("a", "v1", 1)])
    for i in range(20):
        run_on(r, i, f"x{i}", False, "a")
    assert r.replica_state("a") == "healthy"


@grade("failures completing on an ejected replica must not count", "ejection", timeout=5)
def test_outcomes_on_an_ejected_replica(impl):
    r = pool(impl, n=1, capacity=3)
    fill(r, 1, "m", ["x", "y", "z"])
    r.complete(1, "x", ok=False)
    r.complete(1, "y", ok=False)  # a ejected until 5
    r.complete(2, "z", ok=False)  # on an ejected replica: not counted
    assert run_on(r, 5, "p", True, "a") == [done("p", "a")]  # the probe: healthy again
    run_on(r, 6, "q", False, "a")
    assert states(r, "a") == ["healthy"]  # one failure since


@grade("failures completing on a probing replica, other than its probe's, must not count",
       "ejection", timeout=5)
def test_outcomes_on_a_probing_replica(impl):
    r = pool(impl, n=2, capacity=2, consecutive_failures=1)
    fill(r, 0, "m", ["x", "y", "z", "w"])  # x a, y b, z a, w b
    r.complete(0, "x", ok=False)  # a ejected until 4; z still runs on it
    r.tick(4)
    # Counted, z's failure would eject a again: (1 + 1) * 100 <= 100 * 2.
    assert ev(r.complete(4, "z", ok=False)) == [fail("z", "a")]
    assert states(r) == ["probing", "healthy"]
    assert fill(r, 5, "m", ["p"]) == [dispatch("p", "a")]  # the probe
    assert ev(r.complete(5, "p")) == [done("p", "a")] and states(r, "a") == ["healthy"]


@grade("the cap must refuse to eject 1 of 3 members at 33 percent", "ejection", timeout=5)
def test_cap_just_below(impl):
    r = pool(impl, n=3, max_ejection_percent=33)  # (0 + 1) * 100 > 33 * 3 = 99
    run_on(r, 1, "x", False, "a")
    run_on(r, 1, "y", False, "a")
    assert states(r, "abc") == ["healthy", "healthy", "healthy"]


@grade("base_ejection_s, max_ejection_s and max_ejection_percent must default to 30, 300 and 10",
       "ejection", timeout=10)
def test_l3_defaults(impl):
    # 10 members at 10 %: one may be out ((0 + 1) * 100 <= 100), a second may not.
    r = router(impl, [(f"r{i}", "v1", 1) for i in range(10)], consecutive_failures=1)
    run_on(r, 0, "x", False, "r0")
    run_on(r, 0, "y", False, "r1")
    assert states(r, ["r0", "r1"]) == ["ejected", "healthy"]
    t = 0
    for j in range(1, 12):  # 30, 60, ..., 300, then capped at 300
        d = min(30 * j, 300)
        r.tick(t + d - 0.5)
        assert states(r, ["r0"]) == ["ejected"], j
        r.tick(t + d)
        assert states(r, ["r0"]) == ["probing"], j
        t += d
        run_on(r, t, f"p{j}", False, "r0")  # the probe fails: j + 1
    # 19 members at 10 %: a second may not be out (200 > 190).
    r = router(impl, [(f"r{i}", "v1", 1) for i in range(19)], consecutive_failures=1)
    run_on(r, 0, "x", False, "r0")
    run_on(r, 0, "y", False, "r1")
    assert states(r, ["r0", "r1"]) == ["ejected", "healthy"]


@grade("the cap must allow (E + 1) * 100 == max_ejection_percent * members exactly", "ejection",
       timeout=5)
def test_cap_boundary(impl):
    # 4 members, 50 %: two may be out; the third is refused and its count starts again.
    r = pool(impl, n=4, max_ejection_percent=50)
    for rep in "abc":
        run_on(r, 1, f"{rep}1", False, rep)
        run_on(r, 1, f"{rep}2", False, rep)
    assert states(r, "abcd") == ["ejected", "ejected", "healthy", "healthy"]
    r2 = pool(impl, n=2, max_ejection_percent=49)
    run_on(r2, 1, "x", False, "a")
    run_on(r2, 1, "y", False, "a")
    assert states(r2, "a") == ["healthy"]


@grade("the count must go back to 0 when the cap refuses an ejection", "ejection", timeout=5)
def test_count_resets_when_refused(impl):
    r = pool(impl, n=2, max_ejection_percent=50)
    run_on(r, 1, "a1", False, "a")
    run_on(r, 1, "a2", False, "a")  # a ejected until 5
    run_on(r, 1, "b1", False, "b")
    run_on(r, 1, "b2", False, "b")  # refused: b healthy, count 0
    assert run_on(r, 5, "p", True, "a") == [done("p", "a")]  # a's probe: a healthy, E = 0
    fill(r, 6, "m", ["hold"])  # keeps a busy, so that b takes the next ones
    run_on(r, 6, "b3", False, "b")  # one failure since the refusal
    assert states(r) == ["healthy", "healthy"]
    run_on(r, 6, "b4", False, "b")
    assert states(r) == ["healthy", "ejected"]


@grade("draining replicas must not count as members of the cap", "ejection", timeout=5)
def test_cap_members_exclude_draining(impl):
    # 3 replicas at 34 %: one of 3 may go (102 >= 100); with c draining, 2 members: 68 < 100.
    r = pool(impl, n=3, max_ejection_percent=34)
    fill(r, 1, "m", ["x0", "y0", "z0"])  # one on each of a, b, c
    r.complete(1, "x0")
    r.complete(1, "y0")
    assert ev(r.drain(1, "c")) == [] and states(r, "c") == ["draining"]
    run_on(r, 1, "x", False, "a")
    run_on(r, 1, "y", False, "a")
    assert states(r, "a") == ["healthy"]


@grade("always_eject_one must eject one replica whatever the cap, and only one", "ejection",
       timeout=5)
def test_always_eject_one(impl):
    r = pool(impl, n=2, max_ejection_percent=0, always_eject_one=True)
    run_on(r, 1, "a1", False, "a")
    run_on(r, 1, "a2", False, "a")
    run_on(r, 1, "b1", False, "b")
    run_on(r, 1, "b2", False, "b")
    assert states(r) == ["ejected", "healthy"]
    r0 = pool(impl, n=2, max_ejection_percent=0)
    run_on(r0, 1, "a1", False, "a")
    run_on(r0, 1, "a2", False, "a")
    assert states(r0) == ["healthy", "healthy"]


def eject_cycle(r, now, tag):
    """Eject a (2 failures at `now`) and return how long until it is probing, in halves."""
    run_on(r, now, f"{tag}1", False, "a")
    run_on(r, now, f"{tag}2", False, "a")
    t = now
    while r.replica_state("a") == "ejected":
        t += 0.5
        r.tick(t)
    return t - now


@grade("the j-th ejection in a row must last j * base_ejection_s, capped at max_ejection_s",
       "ejection", timeout=5)
def test_linear_durations(impl):
    r = pool(impl, n=1, base_ejection_s=1, max_ejection_s=3.5)
    durations = [eject_cycle(r, 0, "x")]
    for j in range(4):
        t = 100 * (j + 1)
        r.tick(t)
        # the probe fails: ejected again with j + 1, at once
        out = ev(r.submit(t, f"p{j}", "m", KEY[0])) + ev(r.complete(t, f"p{j}", ok=False))
        assert out == [dispatch(f"p{j}", "a"), fail(f"p{j}", "a")]
        s = t
        while r.replica_state("a") == "ejected":
            s += 0.5
            r.tick(s)
        durations.append(s - t)
    assert durations == [1, 2, 3, 3.5, 3.5]


@grade("a successful probe must reset the ejection duration to base_ejection_s", "probe",
       timeout=5)
def test_probe_success_resets_j(impl):
    r = pool(impl, n=1, base_ejection_s=1)
    eject_cycle(r, 0, "x")
    r.tick(10)
    run_on(r, 10, "p", False, "a")  # j = 2: until 12
    r.tick(12)
    assert run_on(r, 12, "q", True, "a") == [done("q", "a")]
    assert eject_cycle(r, 20, "z") == 1


@grade("an ejection must be over at exactly ejected_at + duration", "ejection", timeout=5)
def test_ejection_ends_exactly(impl):
    r = pool(impl, n=1)
    run_on(r, 1, "x", False, "a")
    run_on(r, 1.5, "y", False, "a")  # until 5.5
    assert ev(r.tick(5.25)) == [] and states(r, "a") == ["ejected"]
    assert ev(r.submit(5.5, "z", "m", KEY[0])) == [dispatch("z", "a")]  # the probe


@grade("an ejection must be over at the first call after its end", "ejection", timeout=5)
def test_ejection_ends_at_a_later_call(impl):
    r = pool(impl, n=1)
    run_on(r, 1, "x", False, "a")
    run_on(r, 1, "y", False, "a")  # until 5
    assert ev(r.submit(7.5, "z", "m", KEY[0])) == [dispatch("z", "a")]  # the probe
    assert states(r, "a") == ["probing"]


@grade("a probing replica must be preferred over healthy ones, the earliest added first",
       "probe", timeout=5)
def test_probe_preferred(impl):
    r = pool(impl, n=3, capacity=4, consecutive_failures=1)
    run_on(r, 0, "x", False, "a")  # a ejected until 4
    run_on(r, 0, "y", False, "b")  # b ejected until 4
    fill(r, 1, "m", ["c1", "c2"])  # both on c
    assert ev(r.tick(4)) == [] and states(r, "abc") == ["probing", "probing", "healthy"]
    assert fill(r, 4, "m", ["p1", "p2", "p3"]) == [dispatch("p1", "a"), dispatch("p2", "b"),
                                                  dispatch("p3", "c")]
    # A healthy replica added earlier, and as idle, still comes after the probing one.
    r2 = router(impl, [("h", "v1", 4), ("p", "v1", 4)], consecutive_failures=1,
                max_ejection_percent=100, base_ejection_s=4)
    assert fill(r2, 0, "m", ["f1", "f2"]) == [dispatch("f1", "h"), dispatch("f2", "p")]
    r2.complete(0, "f1")
    r2.complete(0, "f2", ok=False)  # p ejected until 4
    assert fill(r2, 4, "m", ["g"]) == [dispatch("g", "p")]


@grade("a probing replica must take nothing else while its probe runs", "probe", timeout=5)
def test_probe_runs_alone(impl):
    r = pool(impl, n=2, capacity=4)
    run_on(r, 0, "x1", False, "a")
    run_on(r, 0, "x2", False, "a")  # a ejected until 4
    assert fill(r, 4, "m", ["p", "q", "s"]) == [dispatch("p", "a"), dispatch("q", "b"),
                                               dispatch("s", "b")]
    assert [r.in_flight("a"), r.in_flight("b")] == [1, 2]
    assert ev(r.complete(5, "p")) == [done("p", "a")]
    assert fill(r, 5, "m", ["t"]) == [dispatch("t", "a")]  # healthy: a 0/4 < b 2/4


@grade("a retry of any priority may be the probe", "probe", timeout=5)
def test_retry_as_probe(impl):
    r = pool(impl, n=2, max_attempts=2, max_ejection_percent=50, consecutive_failures=1)
    assert run_on(r, 0, "x", False, "a") == [retry("x", "b")]  # a ejected until 4
    r.complete(0, "x")
    assert fill(r, 3, "m", ["y"], priority=3) == [dispatch("y", "b")]
    r.tick(4)
    # b's failure meets the cap (a counts as out), and the retry is a's probe
    assert ev(r.complete(4, "y", ok=False)) == [retry("y", "a")]
    assert fill(r, 4, "m", ["z"]) == [dispatch("z", "b")]  # a takes nothing else
    assert ev(r.complete(5, "y")) == [done("y", "a")]
    assert states(r) == ["healthy", "healthy"]


@grade("a failed probe must eject the replica again without asking the cap", "probe", timeout=5)
def test_failed_probe_ejects_again(impl):
    r = pool(impl, n=2, max_ejection_percent=50)
    run_on(r, 0, "x1", False, "a")
    run_on(r, 0, "x2", False, "a")  # a ejected until 4: the cap is now full
    r.tick(4)
    assert run_on(r, 4, "p", False, "a") == [fail("p", "a")]
    assert states(r) == ["ejected", "healthy"]
    r.tick(11.5)
    assert states(r) == ["ejected", "healthy"]  # j = 2: until 12
    r.tick(12)
    assert states(r) == ["probing", "healthy"]
    # Even when the cap, a itself left out, would refuse: a and b out of a, b, d (c draining).
    r2 = pool(impl, n=4, max_ejection_percent=50, consecutive_failures=1)
    run_on(r2, 0, "x", False, "a")  # a ejected until 4
    run_on(r2, 1, "y", False, "b")  # b ejected until 5
    assert fill(r2, 2, "m", ["z"]) == [dispatch("z", "c")]
    r2.drain(3, "c")
    assert run_on(r2, 4, "p", False, "a") == [fail("p", "a")]  # the probe fails
    assert states(r2, "abcd") == ["ejected", "ejected", "draining", "healthy"]


@grade("attempts running on an ejected replica must complete normally", "ejection", timeout=5)
def test_running_on_ejected_complete(impl):
    r = pool(impl, n=1, capacity=3)
    fill(r, 1, "m", ["x", "y", "z"])
    r.complete(1, "x", ok=False)
    assert ev(r.complete(1, "y", ok=False)) == [fail("y", "a")]
    assert states(r, "a") == ["ejected"] and r.in_flight("a") == 1
    assert ev(r.complete(2, "z")) == [done("z", "a")]
    assert r.in_flight("a") == 0
    assert fill(r, 2, "m", ["w"]) == [reject("w")]


# ---- draining ----

@grade("draining an idle replica must remove it at once", "drain", timeout=5)
def test_drain_idle(impl):
    r = router(impl, [("a", "v1", 1), ("b", "v1", 1)])
    assert ev(r.drain(1, "a")) == [removed("a")]
    assert r.replica_state("a") == "removed"
    assert fill(r, 2, "m", ["x", "y"]) == [dispatch("x", "b"), reject("y")]


@grade("a busy replica must drain: no new work, removed after its last outcome", "drain",
       timeout=5)
def test_drain_busy(impl):
    r = router(impl, [("a", "v1", 2), ("b", "v1", 1)], queue_limit=2)
    fill(r, 1, "m", ["x", "y", "z"])  # x a, y b, z a
    assert ev(r.drain(2, "a")) == []
    assert r.replica_state("a") == "draining"
    assert fill(r, 2, "m", ["w"]) == [queue("w")]
    assert ev(r.complete(3, "x")) == [done("x", "a")]
    assert ev(r.complete(4, "z", ok=False)) == [fail("z", "a"), removed("a")]
    assert ev(r.complete(5, "y")) == [done("y", "b"), dispatch("w", "b")]


@grade("draining must drop a replica's ejection, and a drained probe must not count",
       "drain", timeout=5)
def test_drain_drops_ejection(impl):
    r = pool(impl, n=2, capacity=2)
    fill(r, 0, "m", ["x1"])
    r.complete(0, "x1", ok=False)
    run_on(r, 0, "x2", False, "a")  # a ejected until 4
    r.tick(4)
    fill(r, 4, "m", ["p"])  # a's probe
    assert ev(r.drain(5, "a")) == []
    assert r.replica_state("a") == "draining"
    assert ev(r.complete(6, "p", ok=False)) == [fail("p", "a"), removed("a")]
    assert r.replica_state("a") == "removed"


@grade("a replica drained while ejected must stay out when its ejection ends", "drain",
       timeout=5)
def test_drain_while_ejected(impl):
    r = pool(impl, n=2, capacity=2, consecutive_failures=1)
    fill(r, 0, "m", ["x", "y", "z"])  # x a, y b, z a
    r.complete(0, "x", ok=False)  # a ejected until 4, z still runs on it
    r.complete(0, "y", ok=False)  # b ejected until 4, idle
    assert ev(r.drain(1, "a")) == []
    assert ev(r.drain(1, "b")) == [removed("b")]
    assert ev(r.tick(4)) == [] and states(r) == ["draining", "removed"]
    assert fill(r, 4, "m", ["w"]) == [reject("w")]
    assert ev(r.complete(5, "z")) == [done("z", "a"), removed("a")]


@pytest.mark.parametrize("rep", ["zz", "a", "b"])
@grade("draining an unknown, draining or removed replica must raise ValueError", "drain",
       timeout=5)
def test_bad_drain(impl, rep):
    r = router(impl, [("a", "v1", 1), ("b", "v1", 1), ("c", "v1", 1)])
    fill(r, 1, "m", ["x"])
    r.drain(2, "a")  # draining: x runs on it
    r.drain(2, "b")  # removed
    with pytest.raises(ValueError):
        r.drain(3, rep)
    assert ev(r.complete(2, "x")) == [done("x", "a"), removed("a")]  # the clock did not move


# ---- rollouts ----

def canary(impl, **settings):
    """m: stable v1 on a, b (capacity 1); canary v2 on c, d (capacity 1); split v1 100."""
    return router(impl, [("a", "v1", 1), ("b", "v1", 1), ("c", "v2", 1), ("d", "v2", 1)],
                  **settings)


def start(r, now=0, steps=((50, 10),), model="m", version="v2", **kw):
    kw = {"max_error_percent": 50, "window_s": 10, "min_requests": 2, **kw}
    return ev(r.start_rollout(now, model, version, list(steps), **kw))


@grade("starting a rollout must set the first step's split and the status running", "rollout",
       timeout=5)
def test_start(impl):
    r = canary(impl)
    assert r.rollout_status("m") == "none"
    assert start(r, steps=[(10, 5), (60, 5)]) == []
    assert r.split("m") == [("v1", 90), ("v2", 10)] and r.rollout_status("m") == "running"
    assert r.version_for("m", KEY[89]) == "v1" and r.version_for("m", KEY[90]) == "v2"


@grade("start_rollout must accept the edges of its ranges", "rollout", timeout=5)
def test_rollout_edges(impl):
    for steps, kw in (([(1, 0.5), (100, 0.5)], {"max_error_percent": 0, "window_s": 0.5}),
                      ([(100, 1)], {"max_error_percent": 100, "window_s": 1})):
        r = canary(impl)
        assert ev(r.start_rollout(1, "m", "v2", steps, min_requests=1, **kw)) == []
        w0 = steps[0][0]
        assert r.rollout_status("m") == "running"
        assert r.split("m") == [("v1", 100 - w0), ("v2", w0)]


@grade("start_rollout for a model with replicas and no split must raise ValueError", "rollout",
       timeout=5)
def test_rollout_without_split(impl):
    r = impl.InferenceRouter()
    r.add_replica(0, "a", "m", "v1", 1)
    r.add_replica(0, "c", "m", "v2", 1)
    with pytest.raises(ValueError):
        start(r, now=1)
    assert r.rollout_status("m") == "none" and r.split("m") == []


@grade("a canary whose name sorts before the stable's must start and count only its own "
       "records", "rollout", timeout=5)
def test_canary_named_first(impl):
    r = router(impl, [("a", "v2", 1), ("c", "v1", 1)])  # stable v2
    assert start(r, version="v1", steps=[(50, 100)], max_error_percent=0, min_requests=1) == []
    assert r.split("m") == [("v2", 50), ("v1", 50)]
    run_on(r, 1, "s", False, "a")
    assert r.rollout_status("m") == "running"
    run_on(r, 2, "k", False, "c", KEY[99])
    assert r.rollout_status("m") == "rolled_back"


@grade("a version name built at run time must be the version it equals", "rollout", timeout=5)
def test_versions_compare_by_value(impl):
    r = canary(impl)
    with pytest.raises(ValueError):
        start(r, version="".join(["v", "1"]))  # the stable version, a new str object
    start(r, version="".join(["v", "2"]), steps=[(50, 100)], max_error_percent=0,
          min_requests=1)
    run_on(r, 1, "k", False, "c", KEY[99])
    assert r.rollout_status("m") == "rolled_back"


@grade("each step must last its own hold", "rollout", timeout=5)
def test_own_holds(impl):
    r = canary(impl)
    start(r, steps=[(10, 2), (40, 6), (70, 1)])
    want = [(1.5, 10), (2, 40), (7.5, 40), (8, 70), (8.5, 70)]
    for now, w in want:
        r.tick(now)
        assert r.split("m") == [("v1", 100 - w), ("v2", w)], now
    r.tick(9)
    assert r.rollout_status("m") == "promoted"


@grade("a rollout must step at scheduled times, not at the times of calls", "rollout",
       timeout=5)
def test_schedule(impl):
    r = canary(impl)
    start(r, now=1, steps=[(10, 4), (60, 4), (80, 4)])
    r.tick(4.5)
    assert r.split("m") == [("v1", 90), ("v2", 10)]
    r.tick(7)  # step 1 began at 5
    assert r.split("m") == [("v1", 40), ("v2", 60)]
    r.tick(9)  # step 2 began at 9, not at 7 + 4 = 11
    assert r.split("m") == [("v1", 20), ("v2", 80)]
    r.tick(12.5)
    assert r.rollout_status("m") == "running"
    r.tick(13)
    assert r.rollout_status("m") == "promoted" and r.split("m") == [("v2", 100)]


@grade("one clock step must advance through every step that is due", "rollout", timeout=5)
def test_skip_steps(impl):
    r = canary(impl)
    start(r, steps=[(10, 1), (20, 1), (30, 1)])
    r.tick(2)
    assert r.split("m") == [("v1", 70), ("v2", 30)]
    r.tick(50)
    assert r.rollout_status("m") == "promoted" and r.split("m") == [("v2", 100)]


@grade("promotion must retire the stable replicas and move the stable queue to the canary",
       "rollout", timeout=5)
def test_promotion(impl):
    r = canary(impl, queue_limit=3)
    start(r, steps=[(50, 10)])
    fill(r, 1, "m", ["s1", "s2"], key=KEY[0])  # a, b
    fill(r, 1, "m", ["s3"], key=KEY[0], priority=0)  # queued in v1
    fill(r, 1, "m", ["c1", "c2"], key=KEY[99])  # c, d
    fill(r, 2, "m", ["s4"], key=KEY[0], priority=2)  # queued in v1 (seq 6)
    fill(r, 2, "m", ["c3"], key=KEY[99], priority=2)  # queued in v2 (seq 7)
    assert ev(r.complete(10, "c1")) == [done("c1", "c"), dispatch("s3", "c")]
    assert r.rollout_status("m") == "promoted" and r.split("m") == [("v2", 100)]
    assert states(r, "abcd") == ["draining", "draining", "healthy", "healthy"]
    assert r.queued("m", "v2") == ["s4", "c3"] and r.queued("m", "v1") == []
    assert ev(r.complete(11, "s1")) == [done("s1", "a"), removed("a")]
    assert ev(r.complete(11, "c2")) == [done("c2", "d"), dispatch("s4", "d")]


@grade("rollouts of several models must advance in model order", "rollout", timeout=5)
def test_model_order(impl):
    r = impl.InferenceRouter()
    for model in ("z", "a"):
        r.add_replica(0, f"{model}-old", model, "v1", 1)
        r.add_replica(0, f"{model}-new", model, "v2", 1)
        r.set_split(0, model, {"v1": 100})
    start(r, model="a", steps=[(50, 5)])
    start(r, model="z", steps=[(50, 5)])
    assert ev(r.tick(5)) == [removed("z-old"), removed("a-old")]


@grade("queued requests of two pools must be dispatched in the order of the pools",
       "queue", timeout=5)
def test_pump_pool_order(impl):
    r = router(impl, [("z", "v9", 1), ("y", "v1", 1)], {"v9": 50, "v1": 50}, queue_limit=1,
               consecutive_failures=1, max_ejection_percent=100, base_ejection_s=4)
    for rep, key in (("z", KEY[0]), ("y", KEY[99])):
        assert fill(r, 0, "m", [f"{rep}f"], key=key) == [dispatch(f"{rep}f", rep)]
        r.complete(0, f"{rep}f", ok=False)  # ejected until 4
    fill(r, 1, "m", ["q1"], key=KEY[99])
    fill(r, 1, "m", ["q9"], key=KEY[0])
    assert ev(r.tick(4)) == [dispatch("q9", "z"), dispatch("q1", "y")]


@grade("the canary's errors over the window must roll the rollout back", "rollout", timeout=5)
def test_rollback(impl):
    r = canary(impl)
    start(r, steps=[(50, 100)], max_error_percent=50, min_requests=3)
    # 1 of 2 failed is not enough (min_requests 3); 2 of 3 is 200 > 150.
    assert run_on(r, 1, "x", False, "c", KEY[99]) == [fail("x", "c")]
    assert run_on(r, 2, "y", True, "c", KEY[99]) == [done("y", "c")]
    assert r.rollout_status("m") == "running"
    assert run_on(r, 3, "z", False, "c", KEY[99]) == [removed("d"), fail("z", "c"), removed("c")]
    assert r.rollout_status("m") == "rolled_back" and r.split("m") == [("v1", 100)]
    assert states(r, "abcd") == ["healthy", "healthy", "removed", "removed"]


@grade("an error rate exactly at max_error_percent must not roll back", "rollout", timeout=5)
def test_rollback_strict(impl):
    r = canary(impl)
    start(r, steps=[(50, 100)], max_error_percent=50, min_requests=2)
    for t, rid, ok in ((1, "x", False), (2, "y", True), (3, "z", True), (4, "w", False)):
        run_on(r, t, rid, ok, "c", KEY[99])  # at w: 2 of 4, and 200 > 200 is false
    assert r.rollout_status("m") == "running"


@grade("the window must drop a record exactly window_s old", "rollout", timeout=5)
def test_window_bounds(impl):
    r = canary(impl)
    start(r, steps=[(50, 100)], max_error_percent=50, window_s=4, min_requests=2)
    run_on(r, 1, "x", False, "c", KEY[99])
    run_on(r, 5, "y", False, "c", KEY[99])  # window (1, 5]: y alone, n = 1 < 2
    assert r.rollout_status("m") == "running"
    run_on(r, 6, "z", False, "c", KEY[99])  # window (2, 6]: y and z failed
    assert r.rollout_status("m") == "rolled_back"


@grade("the window must drop every record older than window_s", "rollout", timeout=5)
def test_window_drops_old_records(impl):
    r = canary(impl)
    start(r, steps=[(50, 100)], max_error_percent=50, window_s=4, min_requests=2)
    for i in range(5):
        run_on(r, 1, f"ok{i}", True, "c", KEY[99])
    run_on(r, 10, "x", False, "c", KEY[99])  # window (6, 10]: x alone, n = 1 < 2
    assert r.rollout_status("m") == "running"
    run_on(r, 10, "y", False, "c", KEY[99])  # 2 of 2 failed
    assert r.rollout_status("m") == "rolled_back"


@grade("a failure that left the window must no longer count", "rollout", timeout=5)
def test_window_forgets_failures(impl):
    r = canary(impl)
    start(r, steps=[(50, 100)], max_error_percent=50, window_s=4, min_requests=2)
    run_on(r, 1, "x", False, "c", KEY[99])
    run_on(r, 6, "y", True, "c", KEY[99])  # x left the window
    run_on(r, 6, "z", True, "c", KEY[99])
    run_on(r, 6, "w", False, "c", KEY[99])  # 1 of 3: 100 > 150 is false
    assert r.rollout_status("m") == "running"


@grade("the rollout must roll back when the window holds more than min_requests records",
       "rollout", timeout=5)
def test_rollback_above_min_requests(impl):
    r = canary(impl)
    start(r, steps=[(50, 100)], max_error_percent=0, min_requests=1)
    run_on(r, 1, "x", True, "c", KEY[99])
    assert r.rollout_status("m") == "running"
    run_on(r, 2, "y", False, "c", KEY[99])  # n = 2 > 1, f = 1
    assert r.rollout_status("m") == "rolled_back"


@grade("an error rate just above max_error_percent must roll back", "rollout", timeout=5)
def test_rollback_just_above(impl):
    r = canary(impl)
    start(r, steps=[(50, 100)], max_error_percent=33, min_requests=3)
    run_on(r, 1, "x", True, "c", KEY[99])
    run_on(r, 2, "y", True, "c", KEY[99])
    run_on(r, 3, "z", False, "c", KEY[99])  # 1 of 3: 100 > 99
    assert r.rollout_status("m") == "rolled_back"


@grade("only attempts on canary replicas must count for the rollout", "rollout", timeout=5)
def test_only_canary_records(impl):
    r = canary(impl)
    start(r, steps=[(50, 100)], max_error_percent=0, min_requests=1)
    for i in range(3):
        run_on(r, 1, f"s{i}", False, "a")
    assert r.rollout_status("m") == "running"
    run_on(r, 2, "c0", False, "c", KEY[99])
    assert r.rollout_status("m") == "rolled_back"


@grade("a rollback must come before the retry decision and move the canary queue to the "
       "stable pool", "rollout", timeout=5)
def test_rollback_migrates(impl):
    r = canary(impl, queue_limit=1, max_attempts=2, queue_timeout_s=8)
    start(r, steps=[(50, 100)], max_error_percent=0, min_requests=1)
    fill(r, 1, "m", ["s1", "s2"], key=KEY[0])  # a, b
    fill(r, 1, "m", ["s3"], key=KEY[0], priority=2)  # queued in v1 (seq 3)
    fill(r, 2, "m", ["c1", "c2"], key=KEY[99])  # c, d
    fill(r, 3, "m", ["c3"], key=KEY[99], priority=1)  # queued in v2 (seq 6)
    # c1 fails: roll back, d (busy) drains, c3 moves to v1 ahead of s3 (priority 1 < 2);
    # c1's retry is routed to v1, where nothing is free: it fails.
    assert ev(r.complete(4, "c1", ok=False)) == [fail("c1", "c"), removed("c")]
    assert r.queued("m", "v1") == ["c3", "s3"] and r.queued("m", "v2") == []
    # Both keep their enqueue times: s3 (1) times out at 9, the migrated c3 (3) at 11.
    assert ev(r.tick(9)) == [timeout("s3")]
    assert ev(r.tick(10.5)) == []
    assert ev(r.tick(11)) == [timeout("c3")]


@grade("a migration must keep every request, even beyond queue_limit", "rollout", timeout=5)
def test_migration_keeps_all(impl):
    r = canary(impl, queue_limit=1, retry_after_s=1)
    start(r, steps=[(50, 5)])
    fill(r, 1, "m", ["s1", "s2"], key=KEY[0])
    fill(r, 1, "m", ["s3"], key=KEY[0], priority=3)
    fill(r, 1, "m", ["c1", "c2"], key=KEY[99])
    fill(r, 1, "m", ["c3"], key=KEY[99], priority=3)
    r.tick(5)  # promoted: s3 joins c3 in v2, two queued with a limit of 1
    assert r.queued("m", "v2") == ["s3", "c3"]
    assert fill(r, 6, "m", ["n1"], key=KEY[0], priority=3) == [reject("n1", 1)]
    assert fill(r, 6, "m", ["n2"], key=KEY[0], priority=0) == [
        ("shed", "c3", None, 1), queue("n2")]
    assert r.queued("m", "v2") == ["n2", "s3"]


@grade("complete must emit rollback removals, then the outcome, then the completing replica's "
       "removal, then dispatches", "rollout", timeout=5)
def test_complete_order(impl):
    r = router(impl, [("a", "v1", 1), ("c", "v2", 1), ("d", "v2", 1), ("e", "v2", 2)],
               queue_limit=2)
    start(r, steps=[(50, 100)], max_error_percent=0, min_requests=1)
    fill(r, 1, "m", ["s1"], key=KEY[0])  # a
    fill(r, 1, "m", ["s2"], key=KEY[0])  # queued in v1
    fill(r, 1, "m", ["c1"], key=KEY[99])  # c
    # d and e are idle: the rollback removes them first, then the outcome, then c.
    assert ev(r.complete(2, "c1", ok=False)) == [removed("d"), removed("e"), fail("c1", "c"),
                                                 removed("c")]
    assert ev(r.complete(3, "s1")) == [done("s1", "a"), dispatch("s2", "a")]


@grade("set_split must raise while a rollout runs, and work again after it ends", "rollout",
       timeout=5)
def test_split_locked(impl):
    r = canary(impl)
    start(r, steps=[(50, 5)])
    with pytest.raises(ValueError):
        r.set_split(1, "m", {"v1": 100})
    with pytest.raises(ValueError):
        r.set_split(5, "m", {"v1": 100})  # checks see the state before the clock step
    assert r.rollout_status("m") == "running"
    r.tick(5)
    assert r.set_split(6, "m", {"v2": 100}) == []


@grade("a drain of a replica that the same call's clock step retires must add nothing",
       "drain", timeout=5)
def test_drain_retired_in_the_clock_step(impl):
    r = canary(impl)
    start(r, steps=[(50, 5)])
    fill(r, 1, "m", ["s1"], key=KEY[0])  # a
    assert ev(r.drain(5, "a")) == [removed("b")]
    assert ev(r.drain(5, "c")) == [removed("c")]
    assert ev(r.complete(6, "s1")) == [done("s1", "a"), removed("a")]


@grade("the clock step must expire timeouts before it dispatches to an un-ejected replica",
       "ejection", timeout=5)
def test_clock_step_order(impl):
    r = pool(impl, n=1, queue_limit=2, queue_timeout_s=3)
    run_on(r, 0, "x1", False, "a")
    run_on(r, 1, "x2", False, "a")  # a ejected until 5
    fill(r, 2, "m", ["old"])  # times out at 5
    fill(r, 3, "m", ["new"])
    assert ev(r.tick(5)) == [timeout("old"), dispatch("new", "a")]


def bad_rollout_cases():
    ok = {"max_error_percent": 50, "window_s": 10, "min_requests": 2}
    return [
        ("the stable version", ("v1", [(50, 10)], ok)),
        ("an unknown version", ("v9", [(50, 10)], ok)),
        ("no steps", ("v2", [], ok)),
        ("a step that is a list", ("v2", [[50, 10]], ok)),
        ("weights not increasing", ("v2", [(50, 10), (50, 10)], ok)),
        ("weights decreasing", ("v2", [(50, 10), (30, 10)], ok)),
        ("a weight of 0", ("v2", [(0, 10)], ok)),
        ("a weight of 101", ("v2", [(101, 10)], ok)),
        ("a float weight", ("v2", [(50.0, 10)], ok)),
        ("a hold of 0", ("v2", [(50, 0)], ok)),
        ("a negative hold", ("v2", [(50, -10)], ok)),
        ("an infinite hold", ("v2", [(50, math.inf)], ok)),
        ("max_error_percent 101", ("v2", [(50, 10)], {**ok, "max_error_percent": 101})),
        ("max_error_percent -1", ("v2", [(50, 10)], {**ok, "max_error_percent": -1})),
        ("a window of 0", ("v2", [(50, 10)], {**ok, "window_s": 0})),
        ("a negative window", ("v2", [(50, 10)], {**ok, "window_s": -4})),
        ("min_requests 0", ("v2", [(50, 10)], {**ok, "min_requests": 0})),
        ("min_requests True", ("v2", [(50, 10)], {**ok, "min_requests": True})),
    ]


@pytest.mark.parametrize("name, args", [
    pytest.param(name, args, id=name, marks=pytest.mark.grade(
        level=3, title=f"start_rollout with {name} must raise ValueError and change nothing",
        hint="rollout")) for name, args in bad_rollout_cases()])
def test_bad_rollout(impl, name, args):
    r = canary(impl)
    version, steps, kw = args
    with pytest.raises(ValueError):
        r.start_rollout(1, "m", version, steps, **kw)
    assert r.rollout_status("m") == "none" and r.split("m") == [("v1", 100)]
    assert start(r, now=0) == []  # the clock did not move


@grade("start_rollout must need a split of exactly one version at 100 and no rollout running",
       "rollout", timeout=5)
def test_rollout_needs_a_plain_split(impl):
    r = canary(impl)
    r.set_split(1, "m", {"v1": 100, "v2": 0})
    with pytest.raises(ValueError):
        start(r, now=1)
    r.set_split(1, "m", {"v1": 100})
    start(r, now=1)
    with pytest.raises(ValueError):
        start(r, now=1)
    r2 = canary(impl)
    r2.drain(1, "c")
    r2.drain(1, "d")
    with pytest.raises(ValueError):
        start(r2, now=1)  # v2 has no non-draining replica


BAD_L3_SETTINGS = [
    {"consecutive_failures": 0}, {"consecutive_failures": 2.0},
    {"base_ejection_s": 0}, {"base_ejection_s": -1}, {"base_ejection_s": math.inf},
    {"max_ejection_s": 29}, {"base_ejection_s": 5, "max_ejection_s": math.nan},
    {"max_ejection_percent": 101}, {"max_ejection_percent": -1},
    {"always_eject_one": 1}, {"always_eject_one": None},
]


@pytest.mark.parametrize("settings", [
    pytest.param(s, id=str(s), marks=pytest.mark.grade(
        level=3, title=f"the setting {s} must raise ValueError", hint="errors"))
    for s in BAD_L3_SETTINGS])
def test_bad_l3_setting(impl, settings):
    with pytest.raises(ValueError):
        impl.InferenceRouter(**settings)


@grade("the Level 3 settings at the edges of their ranges must be accepted", "errors",
       timeout=5)
def test_l3_edge_settings(impl):
    impl.InferenceRouter(consecutive_failures=1, base_ejection_s=0.5, max_ejection_s=0.5,
                         max_ejection_percent=0, always_eject_one=True)
    impl.InferenceRouter(consecutive_failures=None, max_ejection_percent=100)
