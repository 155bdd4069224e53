"""Level 3: more models than fit on the GPU; the multiplexer picks the next batch."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.marks import level

from . import oracle
from .helpers import model_of, request, request_lists
from .server import serve

grade = level(3)

A, B, C, D = ("llama", "v1", "fp16"), ("qwen", "v1", "fp16"), ("mistral", "v1", "fp16"), (
    "phi", "v1", "fp16")


def batch(impl, model, arrival_ms, n=1, rid=None):
    name, version, dtype = model
    return [request(impl, rid or f"{name}@{arrival_ms}#{i}", model=name, version=version,
                    dtype=dtype, arrival_ms=arrival_ms, length=3 + i) for i in range(n)]


def mux(impl, capacity=2, starvation_ms=100, load=()):
    """A multiplexer that has loaded `load`, in that order, at time 0."""
    m = impl.ModelMultiplexer(capacity=capacity, starvation_ms=starvation_ms)
    for model in load:
        m.choose([batch(impl, model, 0)], 0)
    return m


@grade("an empty ready list must give None", "choice")
def test_empty_ready(impl):
    m = mux(impl)
    assert m.choose([], 0) is None
    assert m.resident() == []


@grade("the first choice must load its model without evicting", "residency")
def test_first_load(impl):
    m = mux(impl, capacity=2)
    assert m.resident() == []
    b = batch(impl, A, 0, n=2)
    got, evicted = m.choose([b], 0)
    assert got is b and evicted is None
    assert m.resident() == [A]


@grade("choose must return the batch object from ready", "choice")
def test_returns_element_of_ready(impl):
    m = mux(impl, capacity=2, load=[A])
    ready = [batch(impl, B, 1), batch(impl, A, 2, n=3)]
    got, _ = m.choose(ready, 5)
    assert got is ready[1]


@grade("choose must leave ready as it was", "choice")
def test_ready_unmodified(impl):
    m = mux(impl, capacity=2, load=[A])
    ready = [batch(impl, B, 1), batch(impl, A, 2, n=3)]
    snapshot = [list(b) for b in ready]
    m.choose(ready, 5)
    assert ready == snapshot and len(ready) == 2


@grade("choose must accept a now_ms earlier than the last call's", "choice")
def test_now_may_go_back(impl):
    m = mux(impl, capacity=2, starvation_ms=100)
    m.choose([batch(impl, A, 40)], 50)
    ready = [batch(impl, B, 0), batch(impl, A, 5)]
    assert m.choose(ready, 20)[0] is ready[1]


@grade("resident() and the evicted value must be (model, version, dtype) tuples", "residency")
def test_models_are_tuples(impl):
    m = mux(impl, capacity=1, load=[A])
    assert m.resident() == [A]
    assert m.choose([batch(impl, B, 1)], 1)[1] == A
    assert m.resident() == [B]


@grade("a resident model's batch must go before an older batch of a model not resident",
       "choice")
def test_prefers_resident(impl):
    m = mux(impl, capacity=2, starvation_ms=100, load=[A])
    ready = [batch(impl, B, 1), batch(impl, A, 5)]
    got, evicted = m.choose(ready, 6)
    assert got is ready[1] and evicted is None
    assert m.resident() == [A]


@grade("among resident models the earliest-arriving batch must go first, ties by position",
       "choice")
def test_earliest_resident(impl):
    m = mux(impl, capacity=3, starvation_ms=100, load=[A, B])
    ready = [batch(impl, B, 7), batch(impl, A, 3), batch(impl, C, 1)]
    assert m.choose(ready, 8)[0] is ready[1]
    m = mux(impl, capacity=3, starvation_ms=100, load=[A, B])
    ready = [batch(impl, C, 1), batch(impl, B, 4), batch(impl, A, 4)]
    assert m.choose(ready, 8)[0] is ready[1]


@grade("with no resident model among them, the oldest batch must go first, ties by position",
       "choice")
def test_oldest_when_cold(impl):
    m = mux(impl, capacity=2, starvation_ms=100, load=[A])
    ready = [batch(impl, B, 5), batch(impl, C, 3), batch(impl, D, 3)]
    got, evicted = m.choose(ready, 6)
    assert got is ready[1] and evicted is None
    assert m.resident() == [A, C]


@grade("once the oldest batch has waited starvation_ms it must go next", "starvation")
def test_starving_batch_goes_next(impl):
    def ready():
        return [batch(impl, B, 0), batch(impl, A, 5)]

    r = ready()
    assert mux(impl, load=[A], starvation_ms=100).choose(r, 99)[0] is r[1]  # waited 99 < 100
    r = ready()
    m = mux(impl, load=[A], starvation_ms=100)
    got, evicted = m.choose(r, 100)  # waited exactly 100
    assert got is r[0] and evicted is None
    assert m.resident() == [A, B]
    r = [batch(impl, A, 50), batch(impl, B, 0), batch(impl, C, 0)]  # ties: first in ready
    assert mux(impl, load=[A], starvation_ms=100).choose(r, 400)[0] is r[1]


@grade("a batch's wait must count from its first request", "starvation")
def test_starvation_counts_from_first_request(impl):
    # B's batch starts at 0 and ends with a request at 80: at 100 it has waited 100.
    ready = [batch(impl, A, 5), [*batch(impl, B, 0), *batch(impl, B, 80, rid="late")]]
    assert mux(impl, load=[A], starvation_ms=100).choose(ready, 100)[0] is ready[1]


@grade("starvation_ms=0 must serve strictly by arrival", "starvation")
def test_zero_starvation_is_fifo(impl):
    m = mux(impl, capacity=2, starvation_ms=0, load=[A])
    ready = [batch(impl, A, 9), batch(impl, B, 2), batch(impl, C, 4)]
    assert m.choose(ready, 9)[0] is ready[1]


@grade("a load into a full GPU must evict the least recently used model", "lru")
def test_evicts_lru(impl):
    m = mux(impl, capacity=2, load=[A, B, A])  # A was used last: B is the least recent
    got = m.choose([batch(impl, C, 1)], 1)
    assert got[1] == B
    assert m.resident() == [A, C]


@grade("a hit must make its model the most recently used", "lru")
def test_hit_refreshes(impl):
    m = mux(impl, capacity=3, load=[A, B, C])
    assert m.resident() == [A, B, C]
    _, evicted = m.choose([batch(impl, A, 1)], 1)
    assert evicted is None
    assert m.resident() == [B, C, A]


@grade("a hit must not evict anything", "residency")
def test_hit_does_not_evict(impl):
    m = mux(impl, capacity=2, load=[A, B])
    for model, want in [(A, [B, A]), (B, [A, B]), (B, [A, B])]:
        _, evicted = m.choose([batch(impl, model, 1)], 1)
        assert evicted is None
        assert m.resident() == want


@grade("a load with room to spare must not evict", "residency")
def test_load_with_room(impl):
    m = mux(impl, capacity=3)
    for i, model in enumerate([A, B, C]):
        assert m.choose([batch(impl, model, i)], i)[1] is None
    assert m.resident() == [A, B, C]


@grade("a GPU of more than 256 models must evict only once it is full", "lru")
def test_large_capacity(impl):
    m = impl.ModelMultiplexer(capacity=300, starvation_ms=100)
    models = [(f"m{i}", "v1", "fp16") for i in range(301)]
    evicted = [m.choose([batch(impl, model, i)], i)[1] for i, model in enumerate(models)]
    assert evicted == [None] * 300 + [models[0]]
    assert len(m.resident()) == 300


@grade("a model must be identified by model, version and dtype together", "residency")
def test_model_identity(impl):
    m = mux(impl, capacity=1, load=[A])
    v2, bf16 = ("llama", "v2", "fp16"), ("llama", "v2", "bf16")
    assert m.choose([batch(impl, v2, 1)], 1)[1] == A
    assert m.choose([batch(impl, bf16, 2)], 2)[1] == v2
    assert m.resident() == [bf16]


@grade("a batch whose requests differ only in length or sampling must be accepted", "validation")
def test_mixed_lengths_accepted(impl):
    b = [request(impl, 0, length=3), request(impl, 1, length=300, temperature=1.0)]
    assert mux(impl).choose([b], 0)[0] is b


@pytest.mark.parametrize("capacity", [0, -1, True, 1.5, None])
@grade("capacity must be an int of at least 1", "validation")
def test_bad_capacity(impl, capacity):
    with pytest.raises(ValueError):
        impl.ModelMultiplexer(capacity=capacity, starvation_ms=10)


@pytest.mark.parametrize("starvation", [-1, -0.1, math.nan, math.inf])
@grade("starvation_ms must be a finite number of at least 0", "validation")
def test_bad_starvation(impl, starvation):
    with pytest.raises(ValueError):
        impl.ModelMultiplexer(capacity=2, starvation_ms=starvation)


@pytest.mark.parametrize("where", [0, 1])
@grade("an empty batch in ready must be rejected", "validation")
def test_empty_batch(impl, where):
    ready = [batch(impl, A, 0)]
    ready.insert(where, [])
    with pytest.raises(ValueError):
        mux(impl).choose(ready, 0)


@pytest.mark.parametrize("other", [("qwen", "v1", "fp16"), ("llama", "v2", "fp16"),
                                   ("llama", "v1", "bf16")])
@pytest.mark.parametrize("where", [0, 1])
@grade("a batch that mixes models, versions or dtypes must be rejected", "validation")
def test_mixed_batch(impl, other, where):
    mixed = batch(impl, A, 0) + batch(impl, other, 0, rid="odd")
    ready = [batch(impl, A, 0)]
    ready.insert(where, mixed)
    with pytest.raises(ValueError):
        mux(impl).choose(ready, 0)


workloads = st.tuples(st.integers(1, 3), st.integers(0, 200), st.integers(0, 60),
                      st.integers(1, 4), st.integers(0, 30))


def run(impl, data, workload):
    capacity, starvation, swap, size, wait = workload
    reqs = data.draw(request_lists(impl, max_size=30))
    _, starts = serve(impl, reqs, max_batch_size=size, max_wait_ms=wait, capacity=capacity,
                      starvation_ms=starvation, swap_ms=swap, run_ms=lambda b: 5 + 2 * len(b))
    assert sorted(r.request_id for s in starts for r in s.batch) == [r.request_id for r in reqs]
    return capacity, starvation, starts


SIM = settings(max_examples=80)


@grade("on a simulated server, resident models must never exceed capacity", "residency",
       timeout=20)
@SIM
@given(st.data(), workloads)
def test_sim_capacity(impl, data, workload):
    capacity, _, starts = run(impl, data, workload)
    for s in starts:
        assert len(s.resident_after) <= capacity
        assert len(set(s.resident_after)) == len(s.resident_after)


@grade("on a simulated server, a load must happen only for a model not resident, and evict "
       "only the least recently used from a full GPU", "lru", timeout=20)
@SIM
@given(st.data(), workloads)
def test_sim_loads_and_evictions(impl, data, workload):
    capacity, _, starts = run(impl, data, workload)
    lru: list = []  # the spec's LRU, least recent first
    for s in starts:
        assert s.resident_before == lru
        evicted = None
        if s.model in lru:
            lru.remove(s.model)
        elif len(lru) == capacity:
            evicted = lru.pop(0)
        lru.append(s.model)
        assert s.evicted == evicted
        assert s.resident_after == lru


@grade("on a simulated server, once the oldest ready batch has waited starvation_ms it must be "
       "the next to start", "starvation", timeout=20)
@SIM
@given(st.data(), workloads)
def test_sim_starvation(impl, data, workload):
    _, starvation, starts = run(impl, data, workload)
    for s in starts:
        oldest = min(s.ready, key=lambda b: b[0].arrival_ms)
        if s.at_ms >= oldest[0].arrival_ms + starvation:
            assert s.batch is oldest


@grade("on a simulated server, every choice must follow the policy", "choice", timeout=20)
@SIM
@given(st.data(), workloads)
def test_sim_choices(impl, data, workload):
    _, starvation, starts = run(impl, data, workload)
    for s in starts:
        assert s.batch is oracle.choose(s.ready, s.at_ms, s.resident_before, starvation)
        assert model_of(s.batch[0]) == s.resident_after[-1]
