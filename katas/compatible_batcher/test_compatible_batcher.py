"""Visible examples. `pytest katas/compatible_batcher` also runs the hidden suite on your file."""

import pytest


def req(impl, rid, model="llama", length=10, arrival_ms=0, **kw):
    return impl.Request(request_id=rid, model=model, version="v1", dtype="fp16", length=length,
                        arrival_ms=arrival_ms, **kw)


def ids(batches):
    return [[r.request_id for r in b] for b in batches]


def test_boundaries_make_half_open_buckets(impl):
    def key(n):
        return impl.batch_key(req(impl, n, length=n), length_buckets=(128, 512))

    assert key(127) != key(128)
    assert key(128) == key(511)


def test_sampling_splits_unless_per_row(impl):
    a, b = req(impl, "a"), req(impl, "b", temperature=0.7)
    assert impl.batch_key(a) != impl.batch_key(b)
    assert impl.batch_key(a, per_row_sampling=True) == impl.batch_key(b, per_row_sampling=True)


def test_form_batches_cuts_each_key_greedily(impl):
    order = ["a0", "b0", "a1", "a2", "b1", "a3", "a4"]
    reqs = [req(impl, r, model="llama" if r[0] == "a" else "qwen") for r in order]
    assert ids(impl.form_batches(reqs, max_batch_size=2)) == [
        ["a0", "a1"], ["b0", "b1"], ["a2", "a3"], ["a4"]]
    assert impl.padding_waste([req(impl, 0, length=3), req(impl, 1, length=5)]) == 2
    with pytest.raises(ValueError):
        impl.form_batches([], max_batch_size=0)


def test_dynamic_batcher_keeps_a_queue_per_key(impl):
    b = impl.DynamicBatcher(max_batch_size=2, max_wait_ms=10)
    got = []
    for r in [req(impl, "A0", arrival_ms=0), req(impl, "B0", model="qwen", arrival_ms=1),
              req(impl, "A1", arrival_ms=2)]:
        b.add(r)
        got.append(ids(b.poll(r.arrival_ms)))
    assert got == [[], [], [["A0", "A1"]]]  # A is full; B0 waits for its own deadline
    assert b.next_deadline() == 11
    assert ids(b.poll(11)) == [["B0"]]


def test_multiplexer_evicts_the_least_recently_used(impl):
    m = impl.ModelMultiplexer(capacity=2, starvation_ms=1000)
    for t, model in enumerate(["llama", "qwen", "llama"]):
        m.choose([[req(impl, t, model=model, arrival_ms=t)]], t)
    ready = [[req(impl, "c", model="mistral", arrival_ms=3)]]
    batch, evicted = m.choose(ready, 3)
    assert batch is ready[0]
    assert evicted == ("qwen", "v1", "fp16")
    assert m.resident() == [("llama", "v1", "fp16"), ("mistral", "v1", "fp16")]
