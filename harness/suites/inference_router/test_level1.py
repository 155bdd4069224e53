"""Level 1: the sticky weighted split (crc32 buckets, intervals in insertion order) and the
least-loaded replica of the key's pool, with no queue: dispatch or reject."""

import zlib
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from harness.marks import level

from .helpers import KEY, REPLICAS, dispatch, done, ev, fail, reject, router

grade = level(1)


@grade("the Level 1 example must give its events", "routing", timeout=5)
def test_level_1_example(impl):
    r = router(impl, [("a", "v1", 2), ("b", "v1", 1), ("c", "v2", 1)], {"v1": 90, "v2": 10})
    assert ev(r.submit(1, "r1", "m", "alice")) == [dispatch("r1", "a")]
    assert ev(r.submit(2, "r2", "m", "bob")) == [dispatch("r2", "b")]
    assert ev(r.submit(3, "r3", "m", "judy")) == [dispatch("r3", "c")]
    assert ev(r.submit(4, "r4", "m", "judy")) == [reject("r4")]
    assert ev(r.complete(5, "r3")) == [done("r3", "c")]


@grade("version_for must follow the crc32 bucket of the key", "split", timeout=10)
def test_bucket_is_crc32(impl):
    # One version per bucket: v<b> owns exactly bucket b.
    r = router(impl, [(f"r{b}", f"v{b}", 1) for b in range(100)], {f"v{b}": 1 for b in range(100)})
    for i in range(300):
        key = f"key-{i}-é"
        assert r.version_for("m", key) == f"v{zlib.crc32(key.encode('utf-8')) % 100}", key


@grade("the dict's insertion order must be the interval order", "split", timeout=5)
def test_insertion_order(impl):
    r = router(impl, [("a", "v1", 1), ("b", "v2", 1)], {"v2": 30, "v1": 70})
    assert r.split("m") == [("v2", 30), ("v1", 70)]
    assert r.version_for("m", KEY[0]) == "v2" and r.version_for("m", KEY[29]) == "v2"
    assert r.version_for("m", KEY[30]) == "v1" and r.version_for("m", KEY[99]) == "v1"


@grade("a bucket equal to a running sum must belong to the next version", "split", timeout=5)
def test_interval_boundaries(impl):
    r = router(impl, [("a", "v1", 1), ("b", "v2", 1), ("c", "v3", 1)],
               {"v1": 35, "v2": 40, "v3": 25})
    got = [r.version_for("m", KEY[b]) for b in (0, 34, 35, 74, 75, 99)]
    assert got == ["v1", "v1", "v2", "v2", "v3", "v3"]


@grade("a version of weight 0 must own no bucket", "split", timeout=5)
def test_weight_zero_owns_none(impl):
    r = router(impl, [("a", "v1", 1), ("b", "v2", 1), ("c", "v3", 1)], {"v1": 0, "v2": 100})
    assert r.split("m") == [("v1", 0), ("v2", 100)]
    assert {r.version_for("m", KEY[b]) for b in range(100)} == {"v2"}
    r.set_split(1, "m", {"v2": 50, "v1": 0, "v3": 50})
    assert [r.version_for("m", KEY[b]) for b in (0, 49, 50, 99)] == ["v2", "v2", "v3", "v3"]


@grade("set_split must replace the previous split, not merge into it", "split", timeout=5)
def test_split_replaces(impl):
    r = router(impl, [("a", "v1", 1), ("b", "v2", 1)], {"v1": 50, "v2": 50})
    assert r.set_split(1, "m", {"v2": 100}) == []
    assert r.split("m") == [("v2", 100)]
    assert {r.version_for("m", KEY[b]) for b in range(100)} == {"v2"}


@grade("split must be [] for a model with replicas and no split yet", "split", timeout=5)
def test_split_before_set_split(impl):
    r = impl.InferenceRouter()
    r.add_replica(0, "a", "m", "v1", 1)
    assert r.split("m") == []


@grade("a pool must hold only the replicas of its own model and version", "routing", timeout=5)
def test_pool_is_model_and_version(impl):
    r = impl.InferenceRouter()
    r.add_replica(0, "a", "m", "v1", 1)
    r.add_replica(0, "b", "n", "v1", 1)
    r.set_split(0, "m", {"v1": 100})
    r.set_split(0, "n", {"v1": 100})
    assert ev(r.submit(1, "x", "m", KEY[0])) == [dispatch("x", "a")]
    assert ev(r.submit(1, "y", "m", KEY[0])) == [reject("y")]  # b serves model n only
    assert ev(r.submit(1, "z", "n", KEY[0])) == [dispatch("z", "b")]


@grade("the least-loaded replica must be chosen by in_flight / capacity", "routing", timeout=5)
def test_least_loaded_by_ratio(impl):
    r = router(impl, [("a", "v1", 2), ("b", "v1", 4)])
    # a 0/2 = b 0/4 -> a; b 0/4 < a 1/2 -> b; b 1/4 < a 1/2 -> b (though both run one);
    # a 1/2 = b 2/4 -> a; then a is full -> b, b.
    got = [ev(r.submit(1, f"x{i}", "m", KEY[0]))[0][2] for i in range(6)]
    assert got == ["a", "b", "b", "a", "b", "b"]
    assert [r.in_flight("a"), r.in_flight("b")] == [2, 4]


@grade("a replica with fewer free slots but a lower load ratio must be preferred", "routing",
       timeout=5)
def test_ratio_not_free_slots(impl):
    r = router(impl, [("a", "v1", 2), ("b", "v1", 8)])
    got = [ev(r.submit(1, f"x{i}", "m", KEY[0]))[0][2] for i in range(4)]
    # a 0/2 (tie, earlier) -> a; a 1/2 vs b 0/8 -> b; a 1/2 vs b 1/8 -> b; b 2/8 < 1/2 -> b
    assert got == ["a", "b", "b", "b"]
    r.complete(2, "x0")
    r.complete(2, "x1")
    # a 0/2 vs b 2/8: a has the lower ratio although b has more free slots.
    assert ev(r.submit(3, "y", "m", KEY[0])) == [dispatch("y", "a")]


@grade("ties of load must go to the replica added earliest", "routing", timeout=5)
def test_ties_to_earliest(impl):
    r = router(impl, [("z", "v1", 2), ("y", "v1", 2), ("x", "v1", 2)])
    got = [ev(r.submit(1, f"q{i}", "m", KEY[0]))[0][2] for i in range(6)]
    assert got == ["z", "y", "x", "z", "y", "x"]


@grade("a replica must never run more attempts than its capacity", "routing", timeout=5)
def test_capacity_is_a_limit(impl):
    r = router(impl, [("a", "v1", 2)])
    assert ev(r.submit(1, "x", "m", KEY[0])) == [dispatch("x", "a")]
    assert ev(r.submit(1, "y", "m", KEY[0])) == [dispatch("y", "a")]
    assert ev(r.submit(1, "z", "m", KEY[0])) == [reject("z")]
    assert r.in_flight("a") == 2


@grade("a replica of capacity 300 must take 300 attempts and no more", "routing", timeout=5)
def test_large_capacity(impl):
    # Past 256, CPython's ints are no longer shared objects: the check must compare values.
    r = router(impl, [("a", "v1", 300)])
    out = [ev(r.submit(1, f"x{i}", "m", KEY[0]))[0] for i in range(301)]
    assert out == [dispatch(f"x{i}", "a") for i in range(300)] + [reject("x300")]
    assert r.in_flight("a") == 300


@grade("a full pool must not spill into another version's pool", "routing", timeout=5)
def test_no_spill(impl):
    r = router(impl, [("a", "v1", 1), ("c", "v2", 1)], {"v1": 50, "v2": 50})
    assert ev(r.submit(1, "x", "m", KEY[99])) == [dispatch("x", "c")]
    assert ev(r.submit(1, "y", "m", KEY[98])) == [reject("y")]  # the canary is full; a is free
    assert ev(r.submit(1, "z", "m", KEY[0])) == [dispatch("z", "a")]
    assert ev(r.submit(1, "w", "m", KEY[1])) == [reject("w")]  # the stable is full; c is busy
    assert [r.in_flight("a"), r.in_flight("c")] == [1, 1]


@grade("complete must free the slot after a success and after a failure", "routing", timeout=5)
def test_complete_frees_the_slot(impl):
    r = router(impl, [("a", "v1", 1)])
    r.submit(1, "x", "m", KEY[0])
    assert ev(r.complete(2, "x", ok=False)) == [fail("x", "a")]
    assert r.in_flight("a") == 0
    assert ev(r.submit(3, "y", "m", KEY[0])) == [dispatch("y", "a")]
    assert ev(r.complete(4, "y")) == [done("y", "a")]
    assert ev(r.submit(5, "x", "m", KEY[0])) == [dispatch("x", "a")]  # an id may come back


@grade("calls may pass the same now as the call before", "routing", timeout=5)
def test_equal_now(impl):
    r = router(impl, [("a", "v1", 1)])
    assert ev(r.submit(0, "x", "m", KEY[0])) == [dispatch("x", "a")]
    assert ev(r.complete(0, "x")) == [done("x", "a")]
    assert ev(r.submit(0, "x", "m", KEY[0])) == [dispatch("x", "a")]


def oracle_events(state, op, n):
    """The Level 1 rules, plainly: state = (split, in_flight, running)."""
    split, load, running = state
    if op[0] == "split":
        split[:] = [("v1", op[1]), ("v2", 100 - op[1])]
        return []
    if op[0] == "complete":
        if not running:
            return None
        rid = sorted(running)[op[1] % len(running)]
        rep = running.pop(rid)
        load[rep] -= 1
        return [("done" if op[2] else "fail", rid, rep, None)]
    b, total = op[1], 0
    version = next(v for v, w in split if b < (total := total + w))
    best = None
    for rep, v, cap in REPLICAS:
        if v == version and load[rep] < cap:
            if best is None or Fraction(load[rep], cap) < Fraction(load[best[0]], best[2]):
                best = (rep, v, cap)
    rid = f"q{n}"
    if best is None:
        return [("reject", rid, None, None)]
    load[best[0]] += 1
    running[rid] = best[0]
    return [("dispatch", rid, best[0], None)]


L1_OPS = st.lists(st.one_of(
    st.tuples(st.just("submit"), st.integers(0, 99)),
    st.tuples(st.just("complete"), st.integers(0, 20), st.booleans()),
    st.tuples(st.just("split"), st.sampled_from((0, 30, 50, 100)))), max_size=60)


@grade("random Level 1 traces must give the events of the rules", "routing", timeout=30)
@given(L1_OPS)
def test_random_traces(impl, ops):
    r = router(impl, list(REPLICAS), {"v1": 50, "v2": 50})
    state = ([("v1", 50), ("v2", 50)], {rep: 0 for rep, _, _ in REPLICAS}, {})
    for n, op in enumerate(ops):
        want = oracle_events(state, op, n)
        if want is None:
            continue
        if op[0] == "split":
            got = r.set_split(n, "m", {"v1": op[1], "v2": 100 - op[1]})
        elif op[0] == "complete":
            got = r.complete(n, want[0][1], ok=op[2])
        else:
            got = r.submit(n, f"q{n}", "m", KEY[op[1]])
        assert ev(got) == want, (n, op)
    for rep, _, _ in REPLICAS:
        assert r.in_flight(rep) == state[1][rep]
