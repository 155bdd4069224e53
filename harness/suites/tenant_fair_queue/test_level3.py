"""Level 3: guaranteed shares, borrowing and reclaiming, admission control, a batching run."""

import itertools
import math
import statistics

import pytest

from harness.marks import level

from .engine import Fifo, Job, flood, simulate, waits
from .machine import run_machine

grade = level(3)


def sched(impl, capacity, weights, max_queued=10, **prices):
    return impl.FairScheduler(capacity, weights, max_queued=max_queued, **prices)


def push_all(s, pushes):
    for tenant, rid, tokens in pushes:
        s.push(tenant, rid, tokens)


@grade("each tenant's guaranteed share must be floor(capacity * weight / total weight)",
       "shares", timeout=5)
def test_guaranteed_shares(impl):
    s = sched(impl, 5, {"A": 1, "B": 1, "C": 2})       # 5/4, 5/4, 10/4
    assert [s.guaranteed(t) for t in "ABC"] == [1, 1, 2]
    s = sched(impl, 7, {"A": 1, "B": 6})
    assert [s.guaranteed(t) for t in "AB"] == [1, 6]
    s = sched(impl, 2, {"A": 1, "B": 1, "C": 1})       # 2/3 each: shares of 0
    assert [s.guaranteed(t) for t in "ABC"] == [0, 0, 0]
    for capacity, n in itertools.product(range(1, 7), range(1, 5)):
        for ws in itertools.product(range(1, 5), repeat=n):
            names = "ABCD"[:n]
            s = sched(impl, capacity, dict(zip(names, ws, strict=True)))
            assert [s.guaranteed(t) for t in names] == [capacity * w // sum(ws) for w in ws]


@grade("guaranteed shares must divide by the sum of all weights, idle tenants' included",
       "shares", timeout=5)
def test_shares_count_idle_weights(impl):
    # Shares 1, 1 and 2; C stays idle. a1 (A 10) and b1 (B 1) fill A's and B's shares, then B's
    # lower counter borrows C's two slots. Shares over the busy tenants' weights alone (2 and 2)
    # would give A's second request the last slot.
    s = sched(impl, 4, {"A": 1, "B": 1, "C": 2})
    push_all(s, [*[("A", f"a{i}", 10) for i in (1, 2, 3)], *[("B", f"b{i}", 1) for i in (1, 2, 3)]])
    assert s.admit() == [("A", "a1"), ("B", "b1"), ("B", "b2"), ("B", "b3")]


@grade("running must count the tenant's running requests", "shares", timeout=5)
def test_running(impl):
    s = sched(impl, 2, {"A": 1, "B": 1})
    assert [s.running(t) for t in "AB"] == [0, 0]
    push_all(s, [("A", "a1", 1), ("A", "a2", 1), ("A", "a3", 1)])
    s.admit()
    assert s.running("A") == 2 and s.running("B") == 0  # a3 waits: it does not run
    s.complete("a1")
    assert s.running("A") == 1


@grade("an idle tenant's share must be lent to a tenant with queued work", "borrowing",
       timeout=5)
def test_idle_share_is_lent(impl):
    s = sched(impl, 4, {"A": 1, "B": 1})
    push_all(s, [("A", f"a{i}", 1) for i in range(1, 7)])
    assert s.admit() == [("A", f"a{i}") for i in range(1, 5)]
    assert s.running("A") == 4 and s.running("B") == 0
    assert s.admit() == []  # full: nothing more until a slot frees


@grade("tenants with a share of 0 must still be admitted by borrowing, lowest counter first",
       "borrowing", timeout=5)
def test_zero_shares_borrow(impl):
    # All shares are 0. Counters all 0 (lifts to 0): ties by first push, C then A.
    s = sched(impl, 2, {"A": 1, "B": 1, "C": 1})
    push_all(s, [("C", "c1", 1), ("A", "a1", 1), ("B", "b1", 1), ("A", "a2", 1)])
    assert s.admit() == [("C", "c1"), ("A", "a1")]
    s.complete("c1")
    assert s.admit() == [("B", "b1")]  # B at 0 before A at 1


@grade("a slot that frees must go to a returning tenant below its share", "borrowing",
       timeout=5)
def test_lent_share_comes_back(impl):
    # The prompt's example. A borrows all 4 slots (A at 4). B returns, lifted to A's 4. A tie at
    # 4 would go to A (seen first), but B is below its share of 2.
    s = sched(impl, 4, {"A": 1, "B": 1})
    push_all(s, [("A", f"a{i}", 1) for i in range(1, 7)])
    assert len(s.admit()) == 4
    push_all(s, [("B", "b1", 1), ("B", "b2", 1)])
    s.complete("a1")
    assert s.admit() == [("B", "b1")]


@grade("a returning tenant must not preempt a borrower", "borrowing", timeout=5)
def test_no_preemption(impl):
    s = sched(impl, 4, {"A": 1, "B": 1})
    push_all(s, [("A", f"a{i}", 1) for i in range(1, 7)])
    s.admit()
    s.push("B", "b1", 1)
    assert s.admit() == [] and s.running("A") == 4 and s.running("B") == 0


@grade("among tenants below their share the lowest counter must win", "borrowing", timeout=5)
def test_lowest_counter_below_share(impl):
    # Shares 1 and 3. The first admit gives a1 (A 1), b1 (B 1), then a2 (A 2) by borrowing.
    # b2 is lifted to A's 2 (admitted last), a3 to B's 2, then a charge puts B at 8. Once a1 and
    # a2 complete, A runs 0 of 1 and B 1 of 3: both below, and A's 2 beats B's 8, though B is
    # further below its share.
    s = sched(impl, 4, {"A": 1, "B": 3})
    push_all(s, [("A", "a1", 1), ("A", "a2", 1), ("B", "b1", 1)])
    s.admit()
    push_all(s, [("B", "b2", 1), ("A", "a3", 1)])
    s.charge("B", 3)
    s.complete("a1")
    s.complete("a2")
    assert s.admit() == [("A", "a3"), ("B", "b2")]


@grade("admit must recount who is below its share after each admission", "shares", timeout=5)
def test_recount_after_each_admission(impl):
    # Shares 1 and 3. A's prompts are free, so A's counter stays 0 and would win every slot; but
    # once a1 runs, A has its share and B, below its own, takes the three other slots.
    s = sched(impl, 4, {"A": 1, "B": 3})
    push_all(s, [*[("A", f"a{i}", 0) for i in (1, 2, 3)], *[("B", f"b{i}", 1) for i in (1, 2, 3)]])
    assert s.admit() == [("A", "a1"), ("B", "b1"), ("B", "b2"), ("B", "b3")]


@grade("a tenant below its share must get the slot even with a higher counter", "borrowing",
       timeout=5)
def test_share_beats_counter(impl):
    # Shares 1 and 1. a1 (A 1), b1 (B 100). B returns at 100 (A waits at 1): B is below its share.
    s = sched(impl, 2, {"A": 1, "B": 1})
    push_all(s, [("A", "a1", 1), ("A", "a2", 1), ("B", "b1", 100)])
    assert s.admit() == [("A", "a1"), ("B", "b1")]
    s.complete("b1")
    s.push("B", "b2", 1)
    assert s.admit() == [("B", "b2")]


@grade("admissions must follow the virtual counters, charges included", "shares", timeout=5)
def test_counters_order_admissions(impl):
    # Capacity 1, shares 0. a1 (A 1); charge(A, 5) -> A 11; then B's two go first.
    s = sched(impl, 1, {"A": 1, "B": 1})
    push_all(s, [("A", "a1", 1), ("A", "a2", 1), ("B", "b1", 1), ("B", "b2", 1)])
    order = s.admit()
    s.charge("A", 5)
    for _ in range(3):  # one slot: complete the request admitted last, admit the next
        s.complete(order[-1][1])
        order += s.admit()
    assert order == [("A", "a1"), ("B", "b1"), ("B", "b2"), ("A", "a2")]


@grade("a tenant that becomes backlogged must be lifted, counting admissions as service",
       "shares", timeout=5)
def test_lift_at_level3(impl):
    # a1 admitted (A 4), charge(A, 2) -> A 8. B arrives with nobody else waiting: lifted to 8.
    # A's a2 finds B waiting at 8: A stays 8. The tie goes to A, seen first.
    s = sched(impl, 1, {"A": 1, "B": 1})
    s.push("A", "a1", 4)
    assert s.admit() == [("A", "a1")]
    s.charge("A", 2)
    s.push("B", "b1", 1)
    s.push("A", "a2", 1)
    s.complete("a1")
    assert s.admit() == [("A", "a2")]
    s.complete("a2")
    assert s.admit() == [("B", "b1")]


@grade("with nobody waiting the lift must use the tenant admitted last, not completed last",
       "shares", timeout=5)
def test_lift_to_last_admitted(impl):
    # Shares of 0. a1 (A 1) then b1 (B 4) are admitted; a1 completes last. C arrives with nobody
    # waiting: lifted to B's 4, the counter of the tenant admitted last. b2 finds C waiting at 4:
    # B stays at 4, and the tie goes to B, seen before C.
    s = sched(impl, 2, {"A": 1, "B": 1, "C": 1})
    push_all(s, [("A", "a1", 1), ("B", "b1", 4)])
    assert s.admit() == [("A", "a1"), ("B", "b1")]
    s.complete("b1")
    s.complete("a1")
    push_all(s, [("C", "c1", 1), ("B", "b2", 1)])
    assert s.admit() == [("B", "b2"), ("C", "c1")]


@grade("a tenant whose requests all run must be lifted when it pushes again", "shares",
       timeout=5)
def test_running_tenant_is_lifted(impl):
    # One slot, shares of 0. a1 (A 1), then b1 (B 1) runs while a2 waits; a charge puts A at 5.
    # B has nothing queued, so b2 makes it backlogged: lifted to A's 5. The tie goes to A.
    s = sched(impl, 1, {"A": 1, "B": 1})
    push_all(s, [("A", "a1", 1), ("A", "a2", 1), ("B", "b1", 1)])
    assert s.admit() == [("A", "a1")]
    s.complete("a1")
    assert s.admit() == [("B", "b1")]
    s.charge("A", 2)
    s.push("B", "b2", 1)
    s.complete("b1")
    assert s.admit() == [("A", "a2")]


@grade("the lift must ignore tenants that have requests running but none queued", "shares",
       timeout=5)
def test_lift_ignores_running_tenants(impl):
    # Shares of 0. a1 (A 1) and b1 (B 8) run, nothing waits: C is lifted to B's 8, the tenant
    # admitted last, not to A's 1. b2 then finds C waiting at 8; the tie goes to B.
    s = sched(impl, 2, {"A": 1, "B": 1, "C": 1})
    push_all(s, [("A", "a1", 1), ("B", "b1", 8)])
    assert s.admit() == [("A", "a1"), ("B", "b1")]
    push_all(s, [("C", "c1", 1), ("B", "b2", 1)])
    s.complete("a1")
    s.complete("b1")
    assert s.admit() == [("B", "b2"), ("C", "c1")]


@grade("complete must not admit anything by itself", "shares", timeout=5)
def test_complete_admits_nothing(impl):
    s = sched(impl, 1, {"A": 1})
    push_all(s, [("A", "a1", 1), ("A", "a2", 1)])
    s.admit()
    s.complete("a1")
    assert s.running("A") == 0


@grade("complete must free the slot of a running request", "shares", timeout=5)
def test_complete_frees_slot(impl):
    s = sched(impl, 1, {"A": 1})
    push_all(s, [("A", "a1", 1), ("A", "a2", 1)])
    assert s.admit() == [("A", "a1")]
    s.complete("a1")
    assert s.admit() == [("A", "a2")] and s.running("A") == 1


@grade("a completed request id may be pushed again", "errors", timeout=5)
def test_completed_id_reused(impl):
    s = sched(impl, 1, {"A": 1})
    s.push("A", "a1", 1)
    s.admit()
    s.complete("a1")
    s.push("A", "a1", 1)
    assert s.admit() == [("A", "a1")]


@grade("complete of an id never pushed must raise KeyError", "errors", timeout=5)
def test_complete_never_pushed(impl):
    s = sched(impl, 1, {"A": 1})
    s.push("A", "a1", 1)
    s.admit()
    with pytest.raises(KeyError):
        s.complete("nobody")


@grade("complete of a request still queued must raise KeyError", "errors", timeout=5)
def test_complete_queued(impl):
    s = sched(impl, 1, {"A": 1})
    push_all(s, [("A", "a1", 1), ("A", "a2", 1)])
    s.admit()
    with pytest.raises(KeyError):
        s.complete("a2")


@grade("complete of a request already completed must raise KeyError", "errors", timeout=5)
def test_complete_twice(impl):
    s = sched(impl, 1, {"A": 1})
    s.push("A", "a1", 1)
    s.admit()
    s.complete("a1")
    with pytest.raises(KeyError):
        s.complete("a1")


@grade("push must raise QueueFull when the tenant has max_queued requests waiting",
       "backpressure", timeout=5)
def test_queue_full(impl):
    s = sched(impl, 1, {"A": 1, "B": 1}, max_queued=2)
    push_all(s, [("A", "a1", 1), ("A", "a2", 1)])
    with pytest.raises(impl.QueueFull):
        s.push("A", "a3", 1)


@grade("QueueFull must not affect other tenants", "backpressure", timeout=5)
def test_queue_full_other_tenants(impl):
    s = sched(impl, 1, {"A": 1, "B": 1}, max_queued=2)
    push_all(s, [("A", "a1", 1), ("A", "a2", 1), ("B", "b1", 1), ("B", "b2", 1)])


@grade("running requests must not count toward max_queued", "backpressure", timeout=5)
def test_queue_full_ignores_running(impl):
    s = sched(impl, 1, {"A": 1}, max_queued=2)
    push_all(s, [("A", "a1", 1), ("A", "a2", 1)])
    s.admit()
    s.push("A", "a3", 1)  # a1 runs: a2 alone waits


@grade("QueueFull must not lose the requests already queued", "backpressure", timeout=5)
def test_queue_full_keeps_queue(impl):
    s = sched(impl, 1, {"A": 1}, max_queued=2)
    push_all(s, [("A", "a1", 1), ("A", "a2", 1)])
    with pytest.raises(impl.QueueFull):
        s.push("A", "a3", 1)
    order = []
    for _ in range(3):  # one slot: admit one, complete it, again
        for _, rid in s.admit():
            order.append(rid)
            s.complete(rid)
    assert order == ["a1", "a2"]


@grade("a push rejected with QueueFull must leave no trace", "backpressure", timeout=5)
def test_queue_full_no_trace(impl):
    s = sched(impl, 2, {"A": 1, "B": 1}, max_queued=1)
    s.push("A", "a1", 1)
    with pytest.raises(impl.QueueFull):
        s.push("A", "x", 1)
    s.push("B", "x", 1)  # the rejected id is free
    assert sorted(s.admit()) == [("A", "a1"), ("B", "x")]
    assert issubclass(impl.QueueFull, Exception)


@grade("admit must never fill more than capacity slots", "shares", timeout=20)
def test_random_runs_capacity(impl):
    run_machine(impl, "capacity")


@grade("a tenant below its share must be admitted before any borrower", "borrowing",
       timeout=20)
def test_random_runs_shares(impl):
    run_machine(impl, "shares")


@grade("admit must leave no slot free while requests wait", "borrowing", timeout=20)
def test_random_runs_lending(impl):
    run_machine(impl, "lending")


@grade("admissions must keep each tenant's requests in push order", "shares", timeout=20)
def test_random_runs_fifo(impl):
    run_machine(impl, "fifo")


@grade("push must raise QueueFull exactly when that tenant has max_queued waiting",
       "backpressure", timeout=20)
def test_random_runs_queue_full(impl):
    run_machine(impl, "queue_full")


@grade("running must count each tenant's running requests in any run", "shares", timeout=20)
def test_random_runs_running(impl):
    run_machine(impl, "running")


# The flood run: capacity 8, weights 1 and 1 (shares 4 and 4), default prices 1 and 2. The heavy
# tenant bursts 200 requests at step 0; the light tenant sends 20, one every 10 steps. Tokens,
# weights and prices are integers or powers of two, so every counter is exact and the spec
# fixes the whole schedule. The figures below come from running the spec's rules on it: the
# light tenant is below its share whenever it waits, so it takes the next slot that frees
# (mean wait 37 / 20 = 1.85 steps), where FIFO makes it wait behind the burst (6309 / 20).
LIGHT_WAITS_SUM, FIFO_LIGHT_WAITS_SUM = 37, 6309


@grade("in a batching run with a flooding tenant the light tenant must wait as the spec implies",
       "borrowing", timeout=20)
def test_flood_run(impl):
    jobs = flood()
    fair = simulate(sched(impl, 8, {"heavy": 1, "light": 1}, max_queued=1000), jobs)
    fifo = simulate(Fifo(8), jobs)
    light, light_fifo = waits(fair, jobs, "light"), waits(fifo, jobs, "light")
    assert sum(light_fifo) == FIFO_LIGHT_WAITS_SUM  # the baseline itself, for the record
    assert statistics.mean(light) <= 0.05 * statistics.mean(light_fifo)
    assert max(light) <= 8  # under its share, light takes one of the next slots that free
    assert sum(light) == LIGHT_WAITS_SUM
    assert len(fair.start) == len(jobs)


BAD_COUNTS = [0, -1, 1.5, True, "2", None]


@pytest.mark.parametrize("capacity", BAD_COUNTS)
@grade("a capacity that is not an int of at least 1 must raise ValueError", "errors", timeout=5)
def test_bad_capacity(impl, capacity):
    with pytest.raises(ValueError):
        impl.FairScheduler(capacity, {"A": 1}, max_queued=1)


@pytest.mark.parametrize("max_queued", BAD_COUNTS)
@grade("a max_queued that is not an int of at least 1 must raise ValueError", "errors",
       timeout=5)
def test_bad_max_queued(impl, max_queued):
    with pytest.raises(ValueError):
        impl.FairScheduler(2, {"A": 1}, max_queued=max_queued)


@pytest.mark.parametrize("weights", [{}, {"A": 1, "B": 0}, {"A": -2}, {"A": math.inf},
                                     {"A": math.nan}, {"A": True}, {"A": "1"}])
@grade("empty or bad weights must raise ValueError", "errors", timeout=5)
def test_bad_weights(impl, weights):
    with pytest.raises(ValueError):
        impl.FairScheduler(2, weights, max_queued=1)


@pytest.mark.parametrize("name", ["input_price", "output_price"])
@pytest.mark.parametrize("price", [0, -1, math.inf, math.nan, True, "1"])
@grade("a bad price must raise ValueError", "errors", timeout=5)
def test_bad_price(impl, name, price):
    with pytest.raises(ValueError):
        impl.FairScheduler(2, {"A": 1}, max_queued=1, **{name: price})


BAD_TOKENS = [-1, 2.0, True, "1", None]


@pytest.mark.parametrize("tokens", BAD_TOKENS)
@grade("bad prompt token counts must raise ValueError", "errors", timeout=5)
def test_bad_prompt_tokens(impl, tokens):
    s = sched(impl, 1, {"A": 1}, max_queued=1)
    with pytest.raises(ValueError):
        s.push("A", "a", tokens)


@pytest.mark.parametrize("tokens", [-1, 2.0])
@grade("a push rejected for its token count must take no queue slot and no id", "errors",
       timeout=5)
def test_bad_prompt_tokens_no_trace(impl, tokens):
    s = sched(impl, 1, {"A": 1}, max_queued=1)
    with pytest.raises(ValueError):
        s.push("A", "a", tokens)
    s.push("A", "a", 0)
    assert s.admit() == [("A", "a")]


@pytest.mark.parametrize("tokens", BAD_TOKENS)
@grade("bad output token counts must raise ValueError", "errors", timeout=5)
def test_bad_output_tokens(impl, tokens):
    s = sched(impl, 1, {"A": 1}, max_queued=1)
    s.push("A", "a", 1)
    with pytest.raises(ValueError):
        s.charge("A", tokens)


@grade("pushing an id that is still queued must raise ValueError", "errors", timeout=5)
def test_duplicate_queued_id(impl):
    s = sched(impl, 1, {"A": 1, "B": 1})
    push_all(s, [("A", "run", 1), ("A", "wait", 1)])
    s.admit()
    for tenant in ("A", "B"):
        with pytest.raises(ValueError):
            s.push(tenant, "wait", 1)


@grade("pushing an id that is running must raise ValueError", "errors", timeout=5)
def test_duplicate_running_id(impl):
    s = sched(impl, 1, {"A": 1, "B": 1})
    s.push("A", "run", 1)
    s.admit()
    for tenant in ("A", "B"):
        with pytest.raises(ValueError):
            s.push(tenant, "run", 1)


@grade("a push refused for a running id must leave no trace", "errors", timeout=5)
def test_duplicate_running_id_no_trace(impl):
    s = sched(impl, 1, {"A": 1, "B": 1})
    s.push("A", "run", 1)
    s.admit()
    with pytest.raises(ValueError):
        s.push("B", "run", 1)
    s.complete("run")
    assert s.admit() == [] and s.running("B") == 0


@grade("a tenant not named in weights must raise KeyError", "errors", timeout=5)
def test_unnamed_tenant(impl):
    s = sched(impl, 2, {"A": 1})
    with pytest.raises(KeyError):
        s.push("Z", "z", 1)
    for call in (s.running, s.guaranteed):
        with pytest.raises(KeyError):
            call("Z")
    with pytest.raises(KeyError):
        s.charge("Z", 1)
    assert s.admit() == []


@grade("FairScheduler's settings must work by name, prices defaulting to 1 and 2", "shares",
       timeout=10)
def test_settings_by_name_and_default_prices(impl):
    # One slot, shares of 0: every admission is by lowest counter, and the two tenants' costs
    # differ in kind (long prompts vs long outputs), so the order depends on both prices.
    jobs = [Job("p", f"p{i}", 0, 40, 2) for i in range(30)]
    jobs += [Job("o", f"o{i}", 0, 2, 30) for i in range(30)]
    weights = {"p": 1, "o": 1}
    by_name = impl.FairScheduler(capacity=1, weights=weights, max_queued=300)
    explicit = impl.FairScheduler(1, weights, max_queued=300, input_price=1.0, output_price=2.0)
    assert simulate(by_name, jobs).start == simulate(explicit, jobs).start


@grade("capacity and max_queued above 256 must count like small ones", "backpressure",
       timeout=10)
def test_large_capacity_and_queue(impl):
    s = sched(impl, 300, {"A": 1}, max_queued=300)
    push_all(s, [("A", i, 1) for i in range(300)])
    with pytest.raises(impl.QueueFull):
        s.push("A", 300, 1)
    assert len(s.admit()) == 300 and s.running("A") == 300
    push_all(s, [("A", "late", 1)])
    assert s.admit() == []
