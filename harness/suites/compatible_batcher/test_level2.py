"""Level 2: dynamic batching, one FIFO queue per key, on a simulated clock."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from harness.marks import level

from . import oracle
from .fakes import one_set_engine, run_all, solo
from .helpers import boundaries, fields, ids, request, request_lists

grade = level(2)


def batcher(impl, size=4, wait=10, **kw):
    return impl.DynamicBatcher(max_batch_size=size, max_wait_ms=wait, **kw)


@grade("a lone request must leave exactly when it has waited max_wait_ms", "timeout")
def test_lone_request(impl):
    b = batcher(impl, size=4, wait=10)
    b.add(request(impl, "a", arrival_ms=0))
    assert b.poll(0) == [] and b.poll(9) == []
    assert len(b) == 1
    assert ids(b.poll(10)) == [["a"]]
    assert len(b) == 0 and b.poll(30) == []


@grade("max_wait_ms=0 must send a request at the poll of its arrival", "timeout")
def test_zero_wait(impl):
    b = batcher(impl, size=4, wait=0)
    b.add(request(impl, "a", arrival_ms=3))
    assert ids(b.poll(3)) == [["a"]]


@grade("a full queue must leave at once, whatever the clock", "full")
def test_full_leaves_at_once(impl):
    b = batcher(impl, size=2, wait=1000)
    b.add(request(impl, "a", arrival_ms=0))
    assert b.poll(0) == []
    b.add(request(impl, "b", arrival_ms=1))
    assert ids(b.poll(1)) == [["a", "b"]]
    for i in range(5):  # not polled in between: 5 queued, two full batches now, one stays
        b.add(request(impl, i, arrival_ms=2 + i))
    assert ids(b.poll(6)) == [[0, 1], [2, 3]]
    assert len(b) == 1
    assert b.poll(1005) == []  # 4 arrived at 6: due at 1006
    assert ids(b.poll(1006)) == [[4]]


def a_then_b(impl):
    """a at 0 and b at 8 in one key (size 8, wait 10), polled at each arrival."""
    b = batcher(impl, size=8, wait=10)
    b.add(request(impl, "a", arrival_ms=0))
    assert b.poll(0) == []
    b.add(request(impl, "b", arrival_ms=8))
    assert b.poll(8) == []
    return b


@grade("the wait must count from the oldest queued request of the key", "timeout")
def test_wait_from_oldest(impl):
    assert any("a" in batch for batch in ids(a_then_b(impl).poll(10)))  # a is due at 10


@grade("a due key must send its younger requests along with its oldest", "timeout")
def test_due_takes_younger(impl):
    assert ids(a_then_b(impl).poll(10)) == [["a", "b"]]  # b rides along, not due until 18


@grade("a key's queue must serve its oldest requests first", "queues")
def test_fifo(impl):
    b = batcher(impl, size=2, wait=100)
    for i in range(3):
        b.add(request(impl, i, arrival_ms=i))
    assert ids(b.poll(2)) == [[0, 1]]
    assert ids(b.poll(102)) == [[2]]


@grade("a key's requests must not wait behind another key's", "queues")
def test_no_head_of_line_blocking(impl):
    # size 2, wait 10: A0@0, B0@1, A1@2. A is full at 2 while B0 waits for its own deadline 11.
    b = batcher(impl, size=2, wait=10)
    reqs = [request(impl, "A0", arrival_ms=0), request(impl, "B0", model="qwen", arrival_ms=1),
            request(impl, "A1", arrival_ms=2)]
    got = []
    for r in reqs:
        b.add(r)
        got.append(ids(b.poll(r.arrival_ms)))
    assert got == [[], [], [["A0", "A1"]]]
    assert len(b) == 1
    assert b.poll(10) == []
    assert ids(b.poll(11)) == [["B0"]]


def short_and_long(impl, **kw):
    """A request of length 5 and one of length 50 at temperature 1.0, queued in one batcher."""
    b = batcher(impl, size=4, wait=10, **kw)
    b.add(request(impl, 0, length=5))
    b.add(request(impl, 1, length=50, temperature=1.0))
    return b


@grade("the batcher must key its queues with its own length_buckets", "queues")
def test_batcher_buckets_shape_keys(impl):
    assert ids(short_and_long(impl, per_row_sampling=True).poll(10)) == [[0, 1]]
    assert ids(short_and_long(impl, per_row_sampling=True, length_buckets=(32,)).poll(10)) == [
        [0], [1]]


@grade("the batcher must key its queues with its own per_row_sampling", "queues")
def test_batcher_per_row_shapes_keys(impl):
    assert ids(short_and_long(impl).poll(10)) == [[0], [1]]
    assert ids(short_and_long(impl, per_row_sampling=True).poll(10)) == [[0, 1]]


@grade("add must queue a request equal to one already queued", "queues")
def test_add_queues_equal_requests(impl):
    b = batcher(impl, size=4, wait=10)
    r = request(impl, "a", arrival_ms=0)
    b.add(r)
    b.add(r)
    assert len(b) == 2
    assert ids(b.poll(10)) == [["a", "a"]]


QWEN = {"model": "qwen"}


@grade("one poll must return every batch ready at its time", "order")
def test_poll_returns_every_ready_batch(impl):
    # size 2, wait 10, polled at 16: A holds five (two full batches, then A4 due at 16), B0 is
    # due, C is full.
    b = batcher(impl, size=2, wait=10)
    for t, (rid, kw) in enumerate([("A0", {}), ("B0", QWEN), ("A1", {}), ("C0", {"dtype": "bf16"}),
                                   ("A2", {}), ("A3", {}), ("A4", {}), ("C1", {"dtype": "bf16"})]):
        b.add(request(impl, rid, arrival_ms=t, **kw))
    got = sorted(ids(b.poll(16)))
    assert got == [["A0", "A1"], ["A2", "A3"], ["A4"], ["B0"], ["C0", "C1"]]
    assert len(b) == 0


@grade("one poll must return every key's ready batches sorted by their first request's arrival",
       "order")
def test_poll_order(impl):
    qwen = QWEN
    # B0@0 A0@1 B1@2, poll(11): B is full (first arrival 0), A0 is due (1 + 10): B first.
    b = batcher(impl, size=2, wait=10)
    for r in [request(impl, "B0", arrival_ms=0, **qwen), request(impl, "A0", arrival_ms=1),
              request(impl, "B1", arrival_ms=2, **qwen)]:
        b.add(r)
    assert ids(b.poll(11)) == [["B0", "B1"], ["A0"]]
    # A0@0 B0@1 B1@2, poll(10): A0 is due, B is full: A first.
    b = batcher(impl, size=2, wait=10)
    for r in [request(impl, "A0", arrival_ms=0), request(impl, "B0", arrival_ms=1, **qwen),
              request(impl, "B1", arrival_ms=2, **qwen)]:
        b.add(r)
    assert ids(b.poll(10)) == [["A0"], ["B0", "B1"]]
    # A0@0 A1@1 B0@2 A2@5, poll(20): A's full batch (0), B0 due (2), A2 due (5): the batches of
    # one key are interleaved with another's, not listed key by key.
    b = batcher(impl, size=2, wait=10)
    for r in [request(impl, "A0", arrival_ms=0), request(impl, "A1", arrival_ms=1),
              request(impl, "B0", arrival_ms=2, **qwen), request(impl, "A2", arrival_ms=5)]:
        b.add(r)
    assert ids(b.poll(20)) == [["A0", "A1"], ["B0"], ["A2"]]


@grade("batches whose first requests arrived together must come in the order those requests "
       "were added", "order")
def test_poll_ties(impl):
    qwen = QWEN
    for first, second in [("llama", "qwen"), ("qwen", "llama")]:
        b = batcher(impl, size=4, wait=0)
        b.add(request(impl, first, model=first, arrival_ms=5))
        b.add(request(impl, second, model=second, arrival_ms=5))
        assert ids(b.poll(5)) == [[first], [second]]
    # Equal first arrivals: the first requests' order of add decides, not the last ones'.
    b = batcher(impl, size=2, wait=10)
    for r in [request(impl, "A0", arrival_ms=5), request(impl, "B0", arrival_ms=5, **qwen),
              request(impl, "B1", arrival_ms=5, **qwen), request(impl, "A1", arrival_ms=5)]:
        b.add(r)
    assert ids(b.poll(5)) == [["A0", "A1"], ["B0", "B1"]]
    # A's queue is older than B's, yet B0 was added before A2, the head of A's due batch.
    b = batcher(impl, size=2, wait=0)
    for r in [request(impl, "A0", arrival_ms=0), request(impl, "A1", arrival_ms=5),
              request(impl, "B0", arrival_ms=5, **qwen), request(impl, "A2", arrival_ms=5)]:
        b.add(r)
    assert ids(b.poll(5)) == [["A0", "A1"], ["B0"], ["A2"]]
    # A's queue emptied at 0 and fills again after B's.
    b = batcher(impl, size=4, wait=0)
    b.add(request(impl, "A0", arrival_ms=0))
    assert ids(b.poll(0)) == [["A0"]]
    b.add(request(impl, "B0", arrival_ms=5, **qwen))
    b.add(request(impl, "A1", arrival_ms=5))
    assert ids(b.poll(5)) == [["B0"], ["A1"]]


@grade("next_deadline must be the earliest arrival_ms + max_wait_ms over queued requests",
       "deadline")
def test_next_deadline(impl):
    b = batcher(impl, size=4, wait=10)
    b.add(request(impl, "a", arrival_ms=0))
    b.add(request(impl, "c", model="qwen", arrival_ms=3))
    b.add(request(impl, "b", arrival_ms=5))
    assert b.next_deadline() == 10  # a's, not b's 15 nor c's 13
    assert ids(b.poll(10)) == [["a", "b"]]
    assert b.next_deadline() == 13


@grade("next_deadline must be None when nothing is queued", "deadline")
def test_next_deadline_none(impl):
    b = batcher(impl, size=4, wait=10)
    assert b.next_deadline() is None
    b.add(request(impl, "a", arrival_ms=0))
    assert ids(b.poll(10)) == [["a"]]
    assert b.next_deadline() is None
    b.add(request(impl, "b", arrival_ms=10))
    b.flush()
    assert b.next_deadline() is None


@grade("next_deadline must ignore whether a queue is full", "deadline")
def test_next_deadline_full_queue(impl):
    b = batcher(impl, size=2, wait=10)
    b.add(request(impl, "a", arrival_ms=0))
    b.add(request(impl, "b", arrival_ms=4))
    assert b.next_deadline() == 10
    assert len(b) == 2


@grade("add must reject an arrival earlier than the last added request's", "clock")
def test_add_earlier_than_last_add(impl):
    b = batcher(impl, size=4, wait=10)
    b.add(request(impl, "a", arrival_ms=5))
    with pytest.raises(ValueError):
        b.add(request(impl, "early", arrival_ms=4))


@grade("add must reject an arrival earlier than the last poll", "clock")
def test_add_earlier_than_last_poll(impl):
    b = batcher(impl, size=4, wait=10)
    assert b.poll(10) == []
    with pytest.raises(ValueError):
        b.add(request(impl, "early", arrival_ms=9))


@grade("add must accept an arrival equal to the last add's or the last poll's", "clock")
def test_equal_arrival_accepted(impl):
    b = batcher(impl, size=4, wait=10)
    b.add(request(impl, "a", arrival_ms=5))
    b.add(request(impl, "b", arrival_ms=5))
    assert b.poll(12) == []
    b.add(request(impl, "c", arrival_ms=12))
    assert ids(b.poll(15)) == [["a", "b", "c"]]


@grade("poll must reject a time earlier than the last poll", "clock")
def test_poll_goes_back(impl):
    b = batcher(impl, size=4, wait=5)
    b.add(request(impl, "a", arrival_ms=0))
    assert b.poll(3) == []
    with pytest.raises(ValueError):
        b.poll(2)


@grade("a rejected poll must change nothing", "clock")
def test_rejected_poll_changes_nothing(impl):
    # A full batch would leave at any time, so a poll that fails late would already have taken it.
    b = batcher(impl, size=2, wait=5)
    b.add(request(impl, "a", arrival_ms=0))
    assert b.poll(3) == []
    b.add(request(impl, "b", arrival_ms=3))
    with pytest.raises(ValueError):
        b.poll(2)
    assert len(b) == 2 and b.next_deadline() == 5
    assert ids(b.poll(4)) == [["a", "b"]]


@grade("a rejected add must queue nothing", "clock")
def test_rejected_add_queues_nothing(impl):
    b = batcher(impl, size=4, wait=10)
    b.add(request(impl, "a", arrival_ms=5))
    assert b.poll(8) == []
    for bad in [request(impl, "early", arrival_ms=4), request(impl, "before poll", arrival_ms=7),
                request(impl, "x", length=-1, arrival_ms=9),
                request(impl, "y", top_p=math.nan, arrival_ms=9)]:
        with pytest.raises(ValueError):
            b.add(bad)
        assert len(b) == 1
    assert ids(b.poll(15)) == [["a"]]
    assert b.next_deadline() is None


@grade("a rejected add must not move the clock", "clock")
def test_rejected_add_moves_no_clock(impl):
    b = batcher(impl, size=4, wait=10)
    for bad in [request(impl, "x", length=-1, arrival_ms=100),
                request(impl, "y", temperature=math.nan, arrival_ms=100)]:
        with pytest.raises(ValueError):
            b.add(bad)
    b.add(request(impl, "a", arrival_ms=50))
    assert ids(b.poll(60)) == [["a"]]


@grade("both clocks must survive flush", "clock")
def test_clocks_survive_flush(impl):
    b = batcher(impl, size=4, wait=10)
    b.add(request(impl, "a", arrival_ms=10))
    b.flush()
    with pytest.raises(ValueError):
        b.add(request(impl, "b", arrival_ms=9))
    b.poll(20)
    b.flush()
    with pytest.raises(ValueError):
        b.add(request(impl, "c", arrival_ms=15))
    with pytest.raises(ValueError):
        b.poll(19)


def queued_for_flush(impl):
    b = batcher(impl, size=2, wait=100)
    order = ["A0", "B0", "A1", "A2", "B1"]  # never polled: A holds three
    for t, rid in enumerate(order):
        b.add(request(impl, rid, model="llama" if rid[0] == "A" else "qwen", arrival_ms=t))
    return b


@grade("flush must return everything queued, cut as form_batches would in order of add",
       "flush")
def test_flush(impl):
    b = queued_for_flush(impl)
    assert len(b) == 5
    assert ids(b.flush()) == [["A0", "A1"], ["B0", "B1"], ["A2"]]


@grade("flush must empty the queues", "flush")
def test_flush_empties(impl):
    b = queued_for_flush(impl)
    b.flush()
    assert len(b) == 0 and b.next_deadline() is None
    assert b.flush() == [] and b.poll(1000) == []


@grade("flush must cut by the batcher's own length_buckets", "flush")
def test_flush_uses_buckets(impl):
    b = batcher(impl, size=4, wait=100, length_buckets=(32,))
    for i, length in enumerate([5, 50, 6, 60]):
        b.add(request(impl, i, length=length, arrival_ms=i))
    assert ids(b.flush()) == [[0, 2], [1, 3]]


@grade("flush must cut by the batcher's own per_row_sampling", "flush")
def test_flush_uses_per_row_sampling(impl):
    b = batcher(impl, size=4, wait=100, per_row_sampling=True)
    for i, temperature in enumerate([0.0, 0.7, 1.0]):
        b.add(request(impl, i, temperature=temperature, arrival_ms=i))
    assert ids(b.flush()) == [[0, 1, 2]]


@grade("len must count the queued requests", "flush")
def test_len(impl):
    b = batcher(impl, size=3, wait=10)
    assert len(b) == 0
    for i in range(4):
        b.add(request(impl, i, model=["llama", "qwen"][i % 2], arrival_ms=i))
    assert len(b) == 4
    b.poll(10)  # the llama queue (0, 2) is due
    assert len(b) == 2


@pytest.mark.parametrize("wait", [-1, -0.5, math.nan, math.inf, -math.inf])
@grade("max_wait_ms must be a finite number of at least 0", "validation")
def test_bad_wait(impl, wait):
    with pytest.raises(ValueError):
        batcher(impl, size=4, wait=wait)


@pytest.mark.parametrize("kw", [{"size": 0}, {"size": True}, {"size": 1.5},
                                {"length_buckets": (0,)}, {"length_buckets": (8, 8)},
                                {"length_buckets": (2.0,)}])
@grade("the constructor must reject bad batch settings", "validation")
def test_bad_settings(impl, kw):
    with pytest.raises(ValueError):
        batcher(impl, **kw)


@pytest.mark.parametrize("bad", [{"length": -1}, {"length": 1.0}, {"top_p": math.nan}])
@grade("add must reject a bad request", "validation")
def test_add_bad_request(impl, bad):
    with pytest.raises(ValueError):
        batcher(impl).add(request(impl, "bad", **bad))


def machine(impl):
    class Machine(RuleBasedStateMachine):
        @initialize(size=st.integers(1, 4), wait=st.integers(0, 20), bounds=boundaries,
                    per_row=st.booleans())
        def start(self, size, wait, bounds, per_row):
            self.real = impl.DynamicBatcher(max_batch_size=size, max_wait_ms=wait,
                                            length_buckets=bounds, per_row_sampling=per_row)
            self.model = oracle.Batcher(size, wait, bounds, per_row)
            self.clock, self.next_id = 0, 0
            assert self.real.poll(0) == []  # the clock starts at 0

        @rule(f=fields(), gap=st.integers(0, 8))
        def add(self, f, gap):
            r = request(impl, self.next_id, arrival_ms=self.clock + gap, **f)
            self.next_id += 1
            self.real.add(r)
            self.model.add(r)
            self.clock = r.arrival_ms

        @rule(f=fields(), back=st.integers(1, 5))
        def add_late(self, f, back):
            with pytest.raises(ValueError):
                self.real.add(request(impl, "late", arrival_ms=self.clock - back, **f))

        @rule(gap=st.integers(0, 15))
        def poll(self, gap):
            self.clock += gap
            assert ids(self.real.poll(self.clock)) == ids(self.model.poll(self.clock))

        @rule()
        def flush(self):
            assert ids(self.real.flush()) == ids(self.model.flush())

        @invariant()
        def same_state(self):
            if hasattr(self, "real"):
                assert len(self.real) == len(self.model.queued)
                assert self.real.next_deadline() == self.model.next_deadline()

    return Machine


@grade("random adds, polls and flushes must give the batches the spec gives", "order",
       timeout=20)
def test_state_machine(impl):
    run_state_machine_as_test(machine(impl),
                              settings=settings(max_examples=60, stateful_step_count=30))


def serve(b, reqs):
    """Poll at every arrival and at next_deadline(); return [(time, batch)] as they leave."""
    left = []
    for r in reqs:
        while (d := b.next_deadline()) is not None and d <= r.arrival_ms:
            left += [(d, batch) for batch in b.poll(d)]
        b.add(r)
        left += [(r.arrival_ms, batch) for batch in b.poll(r.arrival_ms)]
    for _ in range(len(reqs) + 1):
        if (d := b.next_deadline()) is None:
            break
        left += [(d, batch) for batch in b.poll(d)]
    assert len(b) == 0, "requests still queued after polling at every next_deadline()"
    return left


@grade("polled at every arrival and at next_deadline(), every request must leave by "
       "arrival_ms + max_wait_ms", "deadline", timeout=20)
@given(st.data(), st.integers(1, 4), st.integers(0, 20), boundaries)
def test_served_by_the_deadline(impl, data, size, wait, bounds):
    reqs = data.draw(request_lists(impl))
    left = serve(batcher(impl, size=size, wait=wait, length_buckets=bounds), reqs)
    seen = sorted(r.request_id for _, batch in left for r in batch)
    assert seen == [r.request_id for r in reqs]
    for t, batch in left:
        assert all(r.arrival_ms <= t <= r.arrival_ms + wait for r in batch)
        assert 1 <= len(batch) <= size


@grade("batches from the batcher must give every request its solo output on an engine that "
       "applies one set of sampling parameters", "queues", timeout=20)
@given(st.data())
def test_batcher_outputs_are_solo(impl, data):
    reqs = data.draw(request_lists(impl))
    left = serve(batcher(impl, size=3, wait=5), reqs)
    assert run_all(one_set_engine, [batch for _, batch in left]) == {r.request_id: solo(r)
                                                                     for r in reqs}
