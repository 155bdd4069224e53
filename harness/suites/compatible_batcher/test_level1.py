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


@grade("batch_key must return a hashable value", "key")
def test_key_is_hashable(impl):
    r = request(impl, "a", stop=("\n",))
    for kw in ({}, {"length_buckets": (4, 16)}, {"per_row_sampling": True}):
        queues = {key(impl, r, **kw): "queue"}
        assert queues[key(impl, r, **kw)] == "queue"


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


BUCKETS = (128, 512)
GROUPS = [[0, 1, 127], [128, 300, 511], [512, 4096, 10**6]]  # [0,128) [128,512) [512,inf)


def bucket_keys(impl) -> list[list]:
    return [[key(impl, request(impl, n, length=n), length_buckets=BUCKETS) for n in g]
            for g in GROUPS]


@grade("lengths in one bucket must share a key", "buckets")
def test_one_bucket_shares(impl):
    for g in bucket_keys(impl):
        assert g[0] == g[1] == g[2]


@grade("lengths in different buckets must not share a key", "buckets")
def test_buckets_split(impl):
    keys = bucket_keys(impl)
    for i, j in [(0, 1), (1, 2), (0, 2)]:
        assert keys[i][-1] != keys[j][0]
    one = (1,)  # [0, 1) and [1, inf)
    assert key(impl, request(impl, 0, length=0), length_buckets=one) != key(
        impl, request(impl, 1, length=1), length_buckets=one)


@grade("without boundaries every length must share one bucket", "buckets")
def test_no_boundaries(impl):
    keys = {key(impl, request(impl, n, length=n)) for n in (0, 1, 127, 128, 10**6)}
    assert len(keys) == 1


@pytest.mark.parametrize("field, value", [
    pytest.param("temperature", 0.7, marks=grade(
        "with per_row_sampling=False, a different temperature must not share a key", "sampling")),
    pytest.param("top_p", 0.9, marks=grade(
        "with per_row_sampling=False, a different top_p must not share a key", "sampling")),
    pytest.param("stop", ("\n",), marks=grade(
        "with per_row_sampling=False, a different stop must not share a key", "sampling")),
])
def test_sampling_splits(impl, field, value):
    a = request(impl, "a")
    b = request(impl, "b", **{field: value})
    assert key(impl, a) != key(impl, b)
    assert ids(impl.form_batches([a, b], max_batch_size=4)) == [["a"], ["b"]]


@pytest.mark.parametrize("stop_a, stop_b", [
    pytest.param(("a", "b"), ("b", "a"), marks=grade(
        "stop sequences in another order must not share a key", "sampling")),
    pytest.param(("a",), ("a", "a"), marks=grade(
        "stop sequences that differ in repeats must not share a key", "sampling")),
])
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


@grade("sampling values equal under == must share a key", "key")
def test_fields_compared_with_eq(impl):
    a = request(impl, "a", temperature=0.0, top_p=1.0)
    for temperature, top_p in [(0, 1), (-0.0, 1.0)]:
        b = request(impl, "b", temperature=temperature, top_p=top_p)
        assert key(impl, a) == key(impl, b)


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


# Keys: A = llama (ids a*), B = qwen (ids b*), in the prompt's example order.
EXAMPLE = ["a0", "b0", "a1", "a2", "b1", "a3", "a4"]


def two_keys(impl, order=EXAMPLE) -> list:
    return [request(impl, rid, model="llama" if rid[0] == "a" else "qwen") for rid in order]


@grade("form_batches must cut each key greedily into full batches and one smaller last",
       "greedy")
def test_greedy_cut(impl):
    def cut(reqs, size):  # the batches as a set: the order they are listed in is another test's
        return sorted(ids(impl.form_batches(reqs, max_batch_size=size)))

    reqs = two_keys(impl)
    assert cut(reqs, 2) == [["a0", "a1"], ["a2", "a3"], ["a4"], ["b0", "b1"]]
    assert cut(reqs, 1) == [[r] for r in sorted(EXAMPLE)]
    assert cut(reqs, 10) == [["a0", "a1", "a2", "a3", "a4"], ["b0", "b1"]]
    seven = [request(impl, i) for i in range(7)]
    assert cut(seven, 5) == [[0, 1, 2, 3, 4], [5, 6]]


@grade("form_batches must list batches by their first request's position", "greedy")
def test_listed_by_first_position(impl):
    for order in (EXAMPLE, ["b0", "a0", "a1", "b1", "b2", "a2", "b3"]):
        position = {rid: i for i, rid in enumerate(order)}
        for size in (1, 2, 3):
            firsts = [position[b[0]] for b in ids(impl.form_batches(two_keys(impl, order),
                                                                   max_batch_size=size))]
            assert firsts == sorted(firsts)


@grade("form_batches must return its batches as lists in a list", "greedy")
def test_batches_are_lists(impl):
    got = impl.form_batches(two_keys(impl), max_batch_size=2)
    assert isinstance(got, list) and all(isinstance(b, list) for b in got)


@grade("form_batches must keep the given order within a key", "greedy")
def test_order_within_key(impl):
    reqs = [request(impl, i, length=n) for i, n in enumerate([9, 5, 3, 7, 1])]
    assert ids(impl.form_batches(reqs, max_batch_size=2)) == [[0, 1], [2, 3], [4]]
    assert ids(impl.form_batches(reqs, max_batch_size=8)) == [[0, 1, 2, 3, 4]]


@grade("form_batches must put each input position, even a repeated request, in exactly one "
       "batch", "greedy")
def test_every_position_once(impl):
    r = request(impl, 0)
    assert ids(impl.form_batches([r, r], max_batch_size=1)) == [[0], [0]]
    assert ids(impl.form_batches([r, r], max_batch_size=2)) == [[0, 0]]
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


@grade("every batch must hold only compatible requests", "key")
@given(st.data(), settings_batches)
def test_batches_compatible(impl, data, setting):
    _, bounds, per_row = setting
    for batch in formed(impl, data.draw(request_lists(impl)), setting):
        assert all(oracle.compatible(batch[0], r, bounds, per_row) for r in batch)


@grade("every batch must hold between 1 and max_batch_size requests", "greedy")
@given(st.data(), settings_batches)
def test_batches_bounded(impl, data, setting):
    for batch in formed(impl, data.draw(request_lists(impl)), setting):
        assert 1 <= len(batch) <= setting[0]


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


@grade("padding_waste must check nothing but the lengths", "padding")
def test_padding_checks_only_lengths(impl):
    batch = [request(impl, 0, length=3, temperature=math.nan),
             request(impl, 1, length=5, top_p=math.nan),
             request(impl, 2, length=5, model="qwen", dtype="bf16")]
    assert impl.padding_waste(batch) == 2


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
    assert ids(impl.form_batches([r], max_batch_size=1, length_buckets=(1,))) == [[0]]
