"""Level 1: which requests may share a batch; form_batches and padding_waste."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.marks import level

from . import oracle
from .fakes import one_set_engine, per_row_engine, run_all, solo
from .helpers import FIELDS, boundaries, fields, ids, request, request_lists

grade = level(1)


def key(impl, r, **kw):
    return impl.batch_key(r, **kw)


@grade("requests alike in model, version, dtype, bucket and sampling must share a key", "key")
def test_alike_share_a_key(impl):
    a = request(impl, "a", length=5, arrival_ms=0, temperature=0.7, top_p=0.9, stop=("\n",))
    b = request(impl, "b", length=9, arrival_ms=50, temperature=0.7, top_p=0.9, stop=("\n",))
    for kw in ({}, {"length_buckets": (4, 16)}, {"per_row_sampling": True}):
        assert key(impl, a, **kw) == key(impl, b, **kw)
    hash(key(impl, a))


@pytest.mark.parametrize("field, other", [
    pytest.param("model", "qwen", marks=grade("requests of different models must not share a key",
                                              "key")),
    pytest.param("version", "v2", marks=grade(
        "requests of different versions must not share a key", "key")),
    pytest.param("dtype", "bf16", marks=grade("requests of different dtypes must not share a key",
                                              "key")),
])
def test_model_version_dtype_split(impl, field, other):
    a = request(impl, "a")
    b = request(impl, "b", **{field: other})
    for per_row in (False, True):
        assert key(impl, a, per_row_sampling=per_row) != key(impl, b, per_row_sampling=per_row)
    assert ids(impl.form_batches([a, b], max_batch_size=4)) == [["a"], ["b"]]


@grade("a length equal to a boundary must fall in the bucket above it", "buckets")
def test_boundary_opens_the_upper_bucket(impl):
    bounds = (128, 512)
    k = {n: key(impl, request(impl, n, length=n), length_buckets=bounds)
         for n in (127, 128, 511, 512, 513)}
    assert k[127] != k[128]
    assert k[128] == k[511]
    assert k[511] != k[512]
    assert k[512] == k[513]


@grade("lengths in one bucket must share a key and lengths in different buckets must not",
       "buckets")
def test_buckets(impl):
    bounds = (128, 512)
    groups = [[0, 1, 127], [128, 300, 511], [512, 4096, 10**6]]  # [0,128) [128,512) [512,inf)
    keys = [[key(impl, request(impl, n, length=n), length_buckets=bounds) for n in g]
            for g in groups]
    for g in keys:
        assert g[0] == g[1] == g[2]
    assert len({keys[0][0], keys[1][0], keys[2][0]}) == 3
    one = (1,)  # [0, 1) and [1, inf)
    assert key(impl, request(impl, 0, length=0), length_buckets=one) != key(
        impl, request(impl, 1, length=1), length_buckets=one)


@grade("without boundaries every length must share one bucket", "buckets")
def test_no_boundaries(impl):
    keys = {key(impl, request(impl, n, length=n)) for n in (0, 1, 127, 128, 10**6)}
    assert len(keys) == 1


@pytest.mark.parametrize("field, value", [("temperature", 0.7), ("top_p", 0.9), ("stop", ("\n",))])
@grade("with per_row_sampling=False, different sampling parameters must not share a key",
       "sampling")
def test_sampling_splits(impl, field, value):
    a = request(impl, "a")
    b = request(impl, "b", **{field: value})
    assert key(impl, a) != key(impl, b)
    assert ids(impl.form_batches([a, b], max_batch_size=4)) == [["a"], ["b"]]


@pytest.mark.parametrize("stop_a, stop_b", [(("a", "b"), ("b", "a")), (("a",), ("a", "a"))])
@grade("stop sequences must compare as tuples: order and repeats matter", "sampling")
def test_stop_is_a_tuple(impl, stop_a, stop_b):
    a = request(impl, "a", stop=stop_a)
    b = request(impl, "b", stop=stop_b)
    assert key(impl, a) != key(impl, b)


@grade("with per_row_sampling=True, requests differing only in sampling must share a key",
       "sampling")
def test_per_row_sampling_merges(impl):
    a = request(impl, "a")
    b = request(impl, "b", temperature=1.0, top_p=0.5, stop=("</s>",))
    assert key(impl, a, per_row_sampling=True) == key(impl, b, per_row_sampling=True)
    assert ids(impl.form_batches([a, b], max_batch_size=4, per_row_sampling=True)) == [["a", "b"]]


@st.composite
def pairs(draw):
    base = draw(fields())
    changed = draw(st.sets(st.sampled_from(sorted(FIELDS))))
    other = dict(base, **{f: draw(st.sampled_from(FIELDS[f])) for f in changed})
    return base, other, draw(boundaries), draw(st.booleans())


@grade("batch_key must be equal exactly when two random requests are compatible", "key")
@settings(max_examples=300)
@given(pairs())
def test_key_equality_is_compatibility(impl, pair):
    base, other, bounds, per_row = pair
    a = request(impl, "a", arrival_ms=0, **base)
    b = request(impl, "b", arrival_ms=7, **other)
    got = key(impl, a, length_buckets=bounds, per_row_sampling=per_row) == key(
        impl, b, length_buckets=bounds, per_row_sampling=per_row)
    assert got == oracle.compatible(a, b, bounds, per_row)


@grade("form_batches must cut each key greedily and list batches by their first request",
       "greedy")
def test_form_batches_scenario(impl):
    # Keys: A = llama (ids a*), B = qwen (ids b*). Input order a0 b0 a1 a2 b1 a3 a4, size 2:
    # A cuts into [a0 a1] [a2 a3] [a4], B into [b0 b1]; first positions 0, 1, 3, 6.
    order = ["a0", "b0", "a1", "a2", "b1", "a3", "a4"]
    reqs = [request(impl, rid, model="llama" if rid[0] == "a" else "qwen") for rid in order]
    got = impl.form_batches(reqs, max_batch_size=2)
    assert isinstance(got, list) and all(isinstance(b, list) for b in got)
    assert ids(got) == [["a0", "a1"], ["b0", "b1"], ["a2", "a3"], ["a4"]]
    assert ids(impl.form_batches(reqs, max_batch_size=1)) == [[r] for r in order]
    assert ids(impl.form_batches(reqs, max_batch_size=10)) == [["a0", "a1", "a2", "a3", "a4"],
                                                               ["b0", "b1"]]
    assert impl.form_batches([], max_batch_size=3) == []


settings_batches = st.tuples(st.integers(1, 5), boundaries, st.booleans())


def formed(impl, reqs, setting):
    size, bounds, per_row = setting
    return impl.form_batches(reqs, max_batch_size=size, length_buckets=bounds,
                             per_row_sampling=per_row)


@grade("form_batches must cut batches of more than 256 requests at max_batch_size", "greedy")
def test_large_batches(impl):
    reqs = [request(impl, i) for i in range(700)]
    assert [len(b) for b in impl.form_batches(reqs, max_batch_size=300)] == [300, 300, 100]


@grade("requests that leave sampling at its defaults must share a key with temperature 0.0, "
       "top_p 1.0 and no stop", "key")
def test_sampling_defaults(impl):
    plain = request(impl, "a")
    explicit = request(impl, "b", temperature=0.0, top_p=1.0, stop=())
    assert key(impl, plain) == key(impl, explicit)


@grade("form_batches must place every request in exactly one batch", "greedy")
@given(st.data(), settings_batches)
def test_nothing_lost_or_duplicated(impl, data, setting):
    reqs = data.draw(request_lists(impl))
    got = formed(impl, reqs, setting)
    assert sorted(r.request_id for b in got for r in b) == [r.request_id for r in reqs]


@grade("every batch must be compatible, non-empty and within max_batch_size", "key")
@given(st.data(), settings_batches)
def test_batches_compatible_and_bounded(impl, data, setting):
    size, bounds, per_row = setting
    for batch in formed(impl, data.draw(request_lists(impl)), setting):
        assert 1 <= len(batch) <= size
        assert all(oracle.compatible(batch[0], r, bounds, per_row) for r in batch)


@grade("form_batches must keep each key's order, in full batches except the last, listed by "
       "first position", "greedy")
@given(st.data(), settings_batches)
def test_matches_the_greedy_cut(impl, data, setting):
    size, bounds, per_row = setting
    reqs = data.draw(request_lists(impl))
    assert ids(formed(impl, reqs, setting)) == ids(oracle.form_batches(reqs, size, bounds, per_row))


@grade("with per_row_sampling=False every request must get its solo output from an engine "
       "that applies one set of sampling parameters per batch", "sampling")
@given(st.data())
def test_one_set_engine_is_correct(impl, data):
    reqs = data.draw(request_lists(impl))
    got = run_all(one_set_engine, impl.form_batches(reqs, max_batch_size=4))
    assert got == {r.request_id: solo(r) for r in reqs}


@grade("with per_row_sampling=True, sampling must not fragment the batches of a per-row engine",
       "sampling")
def test_per_row_engine(impl):
    # Six requests of one model that differ only in sampling: one batch of six; a per-row engine
    # gives every row its solo output, while a one-set engine on that batch would corrupt five.
    sampling = [(0.0, ()), (0.7, ()), (1.0, ()), (0.0, ("\n",)), (0.7, ("\n",)), (1.0, ("\n",))]
    reqs = [request(impl, i, temperature=t, stop=s) for i, (t, s) in enumerate(sampling)]
    batches = impl.form_batches(reqs, max_batch_size=8, per_row_sampling=True)
    assert ids(batches) == [[0, 1, 2, 3, 4, 5]]
    assert run_all(per_row_engine, batches) == {r.request_id: solo(r) for r in reqs}
    wrong = run_all(one_set_engine, batches)
    assert sum(wrong[r.request_id] != solo(r) for r in reqs) == 5
    assert len(impl.form_batches(reqs, max_batch_size=8)) == 6


@grade("padding_waste must count the tokens padded up to the longest request", "padding")
def test_padding_waste(impl):
    batch = [request(impl, i, length=n) for i, n in enumerate([3, 5, 10])]
    assert impl.padding_waste(batch) == 3 * 10 - 18
    assert impl.padding_waste([request(impl, 0, length=7)]) == 0
    assert impl.padding_waste([request(impl, 0, length=0), request(impl, 1, length=0)]) == 0
    assert impl.padding_waste((request(impl, 0, length=0), request(impl, 1, length=4))) == 4


@grade("padding_waste must reject an empty batch", "validation")
def test_padding_waste_empty(impl):
    with pytest.raises(ValueError):
        impl.padding_waste([])


@pytest.mark.parametrize("length", [-1, 2.5, True])
@grade("padding_waste must reject a length that is not an int of at least 0", "validation")
def test_padding_waste_bad_length(impl, length):
    with pytest.raises(ValueError):
        impl.padding_waste([request(impl, 0, length=4), request(impl, 1, length=length)])


@grade("Request itself must accept any values", "validation")
def test_request_validates_nothing(impl):
    r = request(impl, None, length=-3, arrival_ms=-1.0, temperature=math.nan)
    assert r.length == -3


@pytest.mark.parametrize("size", [0, -1, 2.0, True, None])
@grade("max_batch_size must be an int of at least 1, even with no requests", "validation")
def test_bad_max_batch_size(impl, size):
    with pytest.raises(ValueError):
        impl.form_batches([], max_batch_size=size)
    with pytest.raises(ValueError):
        impl.form_batches([request(impl, 0)], max_batch_size=size)


@pytest.mark.parametrize("bounds", [(0,), (-4,), (10, 10), (20, 10), (8, 4, 16), (1.5,), (8.0,),
                                    (True,), (4, True)])
@grade("boundaries must be strictly increasing positive ints, even with no requests",
       "validation")
def test_bad_boundaries(impl, bounds):
    with pytest.raises(ValueError):
        impl.batch_key(request(impl, 0), length_buckets=bounds)
    with pytest.raises(ValueError):
        impl.form_batches([], max_batch_size=2, length_buckets=bounds)
    with pytest.raises(ValueError):
        impl.form_batches([request(impl, 0)], max_batch_size=2, length_buckets=bounds)


@pytest.mark.parametrize("length", [-1, 3.0, True, "3"])
@grade("a length must be an int of at least 0", "validation")
def test_bad_length(impl, length):
    bad = request(impl, "bad", length=length)
    with pytest.raises(ValueError):
        impl.batch_key(bad)
    with pytest.raises(ValueError):
        impl.form_batches([request(impl, 0), bad], max_batch_size=2)


@pytest.mark.parametrize("field", ["temperature", "top_p"])
@grade("a NaN temperature or top_p must be rejected", "validation")
def test_nan_sampling(impl, field):
    bad = request(impl, "bad", **{field: math.nan})
    for per_row in (False, True):
        with pytest.raises(ValueError):
            impl.batch_key(bad, per_row_sampling=per_row)
    with pytest.raises(ValueError):
        impl.form_batches([request(impl, 0), bad], max_batch_size=2)


@grade("edge values in range must be accepted", "validation")
def test_edges_accepted(impl):
    r = request(impl, 0, length=0, temperature=0.0, top_p=0.0)
    impl.batch_key(r, length_buckets=(1,))
    impl.batch_key(r, length_buckets=[1, 2, 3])
    assert ids(impl.form_batches([r, r], max_batch_size=1, length_buckets=(1,))) == [[0], [0]]
