"""Level 1: deadline batching with a known cost — the budget, when a batch leaves, the clock,
and the bookkeeping of poll, complete and violations."""

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from harness.marks import level

from .helpers import LastRunCost, SpyCost, TableCost, batches, serve, workloads

grade = level(1)


def batcher(impl, *, slo=50, max_batch=8, cost=None):
    return impl.DeadlineBatcher(slo_ms=slo, max_batch=max_batch,
                                cost=cost or impl.LinearCost(10, 2))


def overdue(impl):
    """slo 50, cost 10 + 2b, max_batch 4: "a" runs from 38; b, c and d arrive while it runs,
    and it will finish late, at 95, with b (deadline 90) already past latest(3) = 74."""
    b = batcher(impl, max_batch=4)
    b.add("a", 0)
    assert batches(b.poll(38)) == [(0, ("a",), 38)]
    for rid, t in (("b", 40), ("c", 80), ("d", 81)):
        b.add(rid, t)
    return b


def a_full_batch_then_more(impl):
    """max_batch 2: a and b leave full at 1; c, d and e queue behind them."""
    b = batcher(impl, max_batch=2)
    for i, rid in enumerate("abcde"):
        b.add(rid, i)
    return b


@grade("the timer must move earlier as the batch grows", "budget", timeout=5)
def test_timer_moves_earlier(impl):
    b = batcher(impl)
    b.add("a", 0)
    assert b.next_dispatch_time() == 38  # 50 - (10 + 2)
    b.add("b", 5)
    assert b.next_dispatch_time() == 36  # the oldest's deadline, 50, minus 14
    b.add("c", 10)
    assert b.next_dispatch_time() == 34


@grade("requests must be sent in the order they were added", "bookkeeping", timeout=5)
def test_oldest_first(impl):
    b = batcher(impl)
    b.add("a", 0)
    b.add("b", 5)
    assert batches(b.poll(36)) == [(0, ("a", "b"), 36)]


@grade("a newcomer that would make the waiting requests late must be left out", "dispatch",
       timeout=5)
def test_newcomer_left_out(impl):
    b = batcher(impl)
    b.add("a", 0)
    b.add("b", 5)
    b.add("c", 35)  # latest(3) = 50 - 16 = 34 < 35
    assert batches(b.poll(35)) == [(0, ("a", "b"), 35)]
    assert len(b) == 1


@grade("a newcomer arriving exactly at the batch's latest moment must join it", "dispatch",
       timeout=5)
def test_newcomer_at_latest_joins(impl):
    b = batcher(impl)
    b.add("a", 0)
    b.add("b", 5)
    b.add("c", 34)  # latest(3) = 34: on time with c, so c joins and all three leave now
    assert batches(b.poll(34)) == [(0, ("a", "b", "c"), 34)]


@grade("a batch due at the current moment must be sent in the same call", "budget", timeout=5)
def test_due_now_is_sent_now(impl):
    b = batcher(impl, slo=12)
    b.add("a", 3)  # latest(1) = 15 - 12 = 3: due now, not a timer at 3
    assert b.next_dispatch_time() is None
    assert batches(b.poll(3)) == [(0, ("a",), 3)]
    b = batcher(impl)
    b.add("a", 0)
    b.add("b", 5)
    b.add("c", 34)  # latest(3) = 34 = now
    assert b.next_dispatch_time() is None


@grade("a full batch must be sent at once", "dispatch", timeout=5)
def test_full_batch(impl):
    b = batcher(impl, max_batch=3)
    for rid, t in (("a", 0), ("b", 5), ("c", 10)):
        b.add(rid, t)
    assert b.next_dispatch_time() is None  # in flight since the add
    assert batches(b.poll(10)) == [(0, ("a", "b", "c"), 10)]


@grade("a request that cannot meet the SLO even alone must be sent at once", "dispatch",
       timeout=5)
def test_lone_late_request(impl):
    b = batcher(impl, slo=10)  # run_ms(1) = 12 > 10
    b.add("a", 0)
    assert batches(b.poll(0)) == [(0, ("a",), 0)]
    b.complete(0, 12)
    assert b.violations == 1


@grade("nothing may be sent while a batch is in flight", "dispatch", timeout=5)
def test_nothing_while_busy(impl):
    b = overdue(impl)
    assert b.poll(94) == []
    assert b.next_dispatch_time() is None and len(b) == 3


@grade("a batch the busy worker made late must be sent whole", "dispatch", timeout=5)
def test_late_batch_goes_whole(impl):
    b = overdue(impl)
    b.complete(0, 95)
    assert batches(b.poll(95)) == [(1, ("b", "c", "d"), 95)]
    # Late for three (latest(3) = 74) yet on time for two (latest(2) = 76): still all three.
    b = batcher(impl, max_batch=4)
    b.add("a", 0)
    assert batches(b.poll(38)) == [(0, ("a",), 38)]
    for rid, t in (("b", 40), ("c", 41), ("d", 42)):
        b.add(rid, t)
    b.complete(0, 75)
    assert batches(b.poll(75)) == [(1, ("b", "c", "d"), 75)]


@grade("violations must count each request that finishes after its own deadline",
       "bookkeeping", timeout=5)
def test_violations_per_request(impl):
    b = overdue(impl)
    b.complete(0, 95)  # a: deadline 50
    assert b.violations == 1
    b.poll(95)
    b.complete(1, 111)  # b: deadline 90, late; c and d: 130 and 131, on time
    assert b.violations == 2


@grade("a request finishing exactly at its deadline must not count as a violation",
       "bookkeeping", timeout=5)
def test_deadline_is_on_time(impl):
    b = batcher(impl)
    b.add("a", 0)
    b.add("b", 5)
    b.add("c", 34)
    b.complete(0, 50)  # a's deadline is 50
    assert b.violations == 0


@grade("a timer must fire at its own time, not at the poll", "clock", timeout=5)
def test_timer_stamped_at_its_time(impl):
    b = batcher(impl)
    b.add("a", 0)
    assert batches(b.poll(45)) == [(0, ("a",), 38)]
    b.complete(0, 50)
    assert b.violations == 0


@grade("an add after a timer expired must first send the expired batch, stamped at the timer",
       "clock", timeout=5)
def test_add_after_expiry(impl):
    b = batcher(impl)
    b.add("a", 0)
    b.add("b", 45)
    assert batches(b.poll(45)) == [(0, ("a",), 38)]
    assert len(b) == 1


@grade("a request added at exactly the timer's moment must miss that batch", "clock",
       timeout=5)
def test_add_at_expiry_misses(impl):
    b = batcher(impl, cost=impl.LinearCost(10, 0))  # latest(2) = latest(1) = 40
    b.add("a", 0)
    b.add("b", 40)
    assert batches(b.poll(40)) == [(0, ("a",), 40)]
    assert len(b) == 1


@grade("a full queue after a completion must send max_batch requests and keep the rest",
       "dispatch", timeout=5)
def test_full_queue_after_completion(impl):
    b = a_full_batch_then_more(impl)
    b.complete(0, 15)  # run_ms(2) = 14 after dispatch at 1
    assert batches(b.poll(15))[-1] == (1, ("c", "d"), 15)
    assert len(b) == 1 and b.next_dispatch_time() is None


@grade("poll must return the batches sent in add and complete, in dispatch order",
       "bookkeeping", timeout=5)
def test_poll_returns_every_batch(impl):
    b = a_full_batch_then_more(impl)
    b.complete(0, 15)
    assert batches(b.poll(15)) == [(0, ("a", "b"), 1), (1, ("c", "d"), 15)]


@grade("poll must return each batch only once", "bookkeeping", timeout=5)
def test_poll_once(impl):
    b = a_full_batch_then_more(impl)
    b.complete(0, 15)
    b.poll(15)
    assert b.poll(16) == []
    b.complete(1, 29)  # e: deadline 54, latest(1) = 42
    assert b.poll(29) == []
    assert batches(b.poll(50)) == [(2, ("e",), 42)]


@grade("len must count the queued requests, not those in flight", "bookkeeping", timeout=5)
def test_len_counts_queued(impl):
    b = batcher(impl)
    b.add("a", 0)
    b.add("b", 5)
    assert len(b) == 2
    b.poll(36)
    assert len(b) == 0
    b.add("c", 37)
    assert len(b) == 1


@grade("a cost other than LinearCost must be used through run_ms", "budget", timeout=5)
def test_any_cost(impl):
    b = batcher(impl, cost=TableCost({1: 10, 2: 11, 3: 30, 4: 31, 5: 32, 6: 33, 7: 34, 8: 35}))
    b.add("a", 0)
    assert b.next_dispatch_time() == 40
    b.add("b", 1)
    assert b.next_dispatch_time() == 39
    b.add("c", 2)
    assert b.next_dispatch_time() == 20


@grade("complete must report the batch's size and measured run time to the cost, once",
       "bookkeeping", timeout=5)
def test_complete_observes(impl):
    cost = SpyCost(10, 2)
    b = batcher(impl, cost=cost)
    b.add("a", 0)
    b.add("b", 1)
    b.poll(37)  # sent at 50 - 14 = 36
    b.complete(0, 55)
    assert cost.observed == [(2, 19)]


@grade("the plan after a completion must use the cost that just observed it", "budget",
       timeout=5)
def test_plan_with_updated_cost(impl):
    b = batcher(impl, cost=LastRunCost(12, 0))
    b.add("a", 0)
    b.poll(38)
    b.add("b", 40)
    b.complete(0, 70)  # the run took 32: b (deadline 90) is already late, so it leaves now,
    assert len(b) == 0 and b.next_dispatch_time() is None  # in complete itself, not at the poll
    assert batches(b.poll(70)) == [(1, ("b",), 70)]


# Properties: a server drives the batcher through random workloads (integers and halves).

@grade("every added request must be sent once, in order, in batches of 1 to max_batch "
       "numbered from 0", "bookkeeping", timeout=20)
@settings(max_examples=60)
@given(workloads())
def test_batches_partition_the_requests(impl, w):
    _, server = serve(impl, w)
    sent = server.sent
    assert [rid for s in sent for rid in s.ids] == [rid for rid, _ in w["arrivals"]]
    assert all(1 <= len(s.ids) <= w["max_batch"] for s in sent)
    assert [s.batch_id for s in sent] == list(range(len(sent)))


@grade("a batch must not leave before the previous one completed or before its last request "
       "arrived", "dispatch", timeout=20)
@settings(max_examples=60)
@given(workloads())
def test_dispatch_after_completion_and_arrival(impl, w):
    _, server = serve(impl, w)
    arrival = dict(w["arrivals"])
    for prev, s in zip([None, *server.sent], server.sent, strict=False):
        assert prev is None or s.dispatch >= prev.end
        assert s.dispatch >= arrival[s.ids[-1]]


@grade("a batch sent when the worker comes free must take min(n, max_batch) requests",
       "dispatch", timeout=20)
@settings(max_examples=60)
@given(workloads())
def test_batch_at_completion_takes_min_n_max_batch(impl, w):
    _, server = serve(impl, w)
    for s in server.sent:
        if s.via == "complete":
            assert len(s.ids) == min(s.waiting, w["max_batch"])


@grade("a batch sent by a timer or an add must be on time", "dispatch", timeout=20)
@settings(max_examples=60)
@given(workloads())
def test_other_batches_on_time(impl, w):
    _, server = serve(impl, w)
    arrival, cost = dict(w["arrivals"]), SpyCost(w["fixed"], w["per_item"])
    for s in server.sent:
        hopeless = len(s.ids) == 1 and w["slo"] < cost.run_ms(1)
        if s.via != "complete" and not hopeless:
            assert s.dispatch <= arrival[s.ids[0]] + w["slo"] - cost.run_ms(len(s.ids))


def free_states(impl, w):
    """(state, expected timer) after every call that left the worker free with requests queued,
    and the states of a busy or empty batcher."""
    _, server = serve(impl, w)
    cost = SpyCost(w["fixed"], w["per_item"])
    for state in server.states:
        if state.busy or not state.queued:
            yield state, None
        else:
            m = min(len(state.queued), w["max_batch"])
            yield state, state.queued[0] + w["slo"] - cost.run_ms(m)


@grade("next_dispatch_time must be latest(m) while the worker is free, and None otherwise",
       "budget", timeout=20)
@settings(max_examples=60)
@given(workloads())
def test_next_dispatch_time_rule(impl, w):
    for state, timer in free_states(impl, w):
        assert state.timer == timer
        assert timer is None or timer > state.now


@grade("a free worker must never hold max_batch requests", "dispatch", timeout=20)
@settings(max_examples=60)
@given(workloads())
def test_free_worker_below_max_batch(impl, w):
    for state, timer in free_states(impl, w):
        assert timer is None or len(state.queued) < w["max_batch"]


@grade("late and extra polls must change nothing", "clock", timeout=20)
@settings(max_examples=60)
@given(workloads(), st.lists(st.integers(0, 200).map(lambda k: k / 2), max_size=8),
       st.sampled_from([0.5, 1]))
def test_polls_change_nothing(impl, w, polls, lateness):
    assume(w["fixed"] + w["per_item"] > lateness)  # the batch is still running when polled
    plain, server = serve(impl, w)
    late, other = serve(impl, w, lateness=lateness, polls=polls)
    assert [(s.ids, s.dispatch) for s in other.sent] == [(s.ids, s.dispatch) for s in server.sent]
    assert late.violations == plain.violations


@grade("violations must count the requests that finished after their deadlines",
       "bookkeeping", timeout=20)
@settings(max_examples=60)
@given(workloads())
def test_violations_match_the_ledger(impl, w):
    b, server = serve(impl, w)
    arrival = dict(w["arrivals"])
    late = sum(s.end > arrival[rid] + w["slo"] for s in server.sent for rid in s.ids)
    assert b.violations == late


@grade("with run times as estimated, only a batch sent at a completion may finish late",
       "dispatch", timeout=20)
@settings(max_examples=60)
@given(workloads(delays=False))
def test_exact_runs_are_late_only_after_a_busy_worker(impl, w):
    _, server = serve(impl, w)
    arrival, one = dict(w["arrivals"]), SpyCost(w["fixed"], w["per_item"]).run_ms(1)
    for s in server.sent:
        if s.via != "complete" and not (len(s.ids) == 1 and w["slo"] < one):
            assert all(s.end <= arrival[rid] + w["slo"] for rid in s.ids)


@grade("complete must observe each batch's size and run time once", "bookkeeping", timeout=20)
@settings(max_examples=60)
@given(workloads())
def test_every_completion_observed(impl, w):
    cost = SpyCost(w["fixed"], w["per_item"])
    _, server = serve(impl, w, cost=cost)
    assert cost.observed == [(len(s.ids), s.end - s.dispatch) for s in server.sent]
