"""Level 1: deficit round robin — visits, credit, leaving and rejoining, FIFO, bad input."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.marks import level

from .helpers import Ledger, drain, ops, replay

grade = level(1)


def drr(impl, quantum, pushes):
    q = impl.DeficitRoundRobin(quantum)
    for tenant, rid, cost in pushes:
        q.push(tenant, rid, cost)
    return q


@grade("requests of unequal cost must be served in the deficit round-robin order", "deficit",
       timeout=5)
def test_golden_unequal_costs(impl):
    # quantum 4. pop 1: A's visit, deficit 4, a1 (3) fits -> 1 left.
    # pop 2: a2 (3) > 1: A to the back keeping 1; B gets 4, b1 (5) > 4: B to the back keeping 4;
    #        C gets 4, c1 (2) fits, C empties and leaves.
    # pop 3: A gets 1 + 4 = 5, a2 fits -> 2; pop 4: a3 (2) fits -> 0, A leaves.
    # pop 5: B gets 4 + 4 = 8, b1 fits -> 3; pop 6: b2 (1) fits, B leaves. pop 7: None.
    q = drr(impl, 4, [("A", "a1", 3), ("A", "a2", 3), ("A", "a3", 2),
                      ("B", "b1", 5), ("B", "b2", 1), ("C", "c1", 2)])
    assert drain(q) == ["a1", "c1", "a2", "a3", "b1", "b2"]


@grade("a tenant whose head does not fit must go to the back, behind every other tenant",
       "round_robin", timeout=5)
def test_no_fit_goes_to_the_back(impl):
    # quantum 1, round A B C. pop 1: A gets 1, a1 (2) does not fit: A to the back -> B C A;
    # B gets 1, b1 fits, B leaves. pop 2: C gets 1, c1 fits. pop 3: A gets 1 + 1, a1 fits.
    q = drr(impl, 1, [("A", "a1", 2), ("B", "b1", 1), ("C", "c1", 1)])
    assert drain(q) == ["b1", "c1", "a1"]


@grade("a visit must serve every request that fits its credit before moving on", "deficit",
       timeout=5)
def test_visit_serves_while_it_fits(impl):
    # quantum 10: A's one visit covers 2 + 3 + 4 = 9; B's covers 9 + 1; then A has 1 + 10.
    q = drr(impl, 10, [("A", "a1", 2), ("A", "a2", 3), ("A", "a3", 4), ("A", "a4", 5),
                       ("B", "b1", 9), ("B", "b2", 1)])
    assert drain(q) == ["a1", "a2", "a3", "b1", "b2", "a4"]


@grade("an exact fit of cost and deficit must be served", "deficit", timeout=5)
def test_exact_fit(impl):
    # quantum 3: a1 costs exactly 3 and is served in A's first visit, before B's two.
    q = drr(impl, 3, [("A", "a1", 3), ("B", "b1", 1), ("B", "b2", 1)])
    assert drain(q) == ["a1", "b1", "b2"]


@grade("credit must accumulate over rounds when the quantum is smaller than a cost", "deficit",
       timeout=5)
def test_small_quantum(impl):
    # quantum 1: A's a1 (3) needs three visits; B's b1 (1) fits its first, b2 (2) its third.
    # Visits: A 1, B 1 -> b1; A 2, B 1; A 3 -> a1 and A leaves; B 2 -> b2.
    q = drr(impl, 1, [("A", "a1", 3), ("B", "b1", 1), ("B", "b2", 2)])
    assert drain(q) == ["b1", "a1", "b2"]
    q = drr(impl, 2, [("A", "big", 1000)])
    assert drain(q) == ["big"]


@grade("a tenant whose head does not fit must keep its deficit at the back", "deficit",
       timeout=5)
def test_no_fit_keeps_deficit(impl):
    # quantum 4. pop 1: A gets 4, a1 (3) -> 1. pop 2: a2 (3) > 1: A to the back keeping 1; B gets
    # 4, b1 (4) -> 0. pop 3: b2 (4) > 0: B to the back; A gets 1 + 4 = 5, a2 -> 2. pop 4: a3 (2)
    # fits, A leaves. pop 5: B gets 4, b2. Had A dropped its 1, a3 would wait for A's next visit.
    q = drr(impl, 4, [("A", "a1", 3), ("A", "a2", 3), ("A", "a3", 2),
                      ("B", "b1", 4), ("B", "b2", 4)])
    assert drain(q) == ["a1", "b1", "a2", "a3", "b2"]


@grade("a tenant that empties must come back with no credit", "round_robin", timeout=5)
def test_leave_and_return(impl):
    # quantum 3. pop 1: A gets 3, a1 (2) -> 1 left; A empties and leaves (credit gone).
    # a2 (4) arrives: A rejoins behind B with deficit 0.
    # pop 2: B gets 3, b1 (3) -> 0. pop 3: b2 (3) > 0: B to the back; A gets 3, a2 (4) > 3:
    #        A to the back keeping 3; B gets 3, b2 fits, B leaves. pop 4: A gets 6, a2.
    # Had A kept its 1, a2 would fit at pop 3 (1 + 3 = 4).
    q = drr(impl, 3, [("A", "a1", 2), ("B", "b1", 3), ("B", "b2", 3)])
    assert q.pop() == ("A", "a1")
    q.push("A", "a2", 4)
    assert drain(q) == ["b1", "b2", "a2"]


@grade("a tenant backlogged between pops must join behind the visited one", "round_robin",
       timeout=5)
def test_join_behind_visited(impl):
    # quantum 10: A's visit is under way after a1, so the round is A C and B joins behind C.
    q = drr(impl, 10, [("A", "a1", 2), ("A", "a2", 2), ("C", "c1", 1)])
    assert q.pop() == ("A", "a1")
    q.push("B", "b1", 1)
    assert drain(q) == ["a2", "c1", "b1"]


@grade("a request pushed to the visited tenant must join the current visit", "deficit",
       timeout=5)
def test_push_joins_current_visit(impl):
    # quantum 10: after a1, A has 8 left and its visit goes on; a3 fits it, before B's turn.
    q = drr(impl, 10, [("A", "a1", 2), ("A", "a2", 2), ("B", "b1", 1)])
    assert q.pop() == ("A", "a1")
    q.push("A", "a3", 2)
    assert drain(q) == ["a2", "a3", "b1"]


@grade("a visit must not end before the next pop, even when the next head does not fit",
       "round_robin", timeout=5)
def test_visit_ends_only_in_pop(impl):
    # quantum 4. pop 1: A gets 4, a1 (3) -> 1; a2 (3) does not fit, but A's visit ends only in the
    # next pop, so B, pushed now, joins behind C: the round is A C B. pop 2: A to the back with 1;
    # C gets 4, c1, C leaves. pop 3: B gets 4, b1. pop 4: A gets 1 + 4, a2.
    q = drr(impl, 4, [("A", "a1", 3), ("A", "a2", 3), ("C", "c1", 1)])
    assert q.pop() == ("A", "a1")
    q.push("B", "b1", 1)
    assert drain(q) == ["c1", "b1", "a2"]


@grade("a tenant that leaves and returns at once must go to the back of the round",
       "round_robin", timeout=5)
def test_return_to_back(impl):
    # quantum 5. A is served a1 (1 left) and empties; B and C wait. A's new request goes behind
    # C: a tenant still at the front would spend its 1 on a2 at once.
    q = drr(impl, 5, [("A", "a1", 4), ("B", "b1", 5), ("C", "c1", 5)])
    assert q.pop() == ("A", "a1")
    q.push("A", "a2", 1)
    assert drain(q) == ["b1", "c1", "a2"]


@grade("credit must be added once per visit, not once per pop", "deficit", timeout=5)
def test_credit_once_per_visit(impl):
    # quantum 4: a1 (3) leaves 1; a2 (3) must wait for A's next visit, after B's.
    q = drr(impl, 4, [("A", "a1", 3), ("A", "a2", 3), ("B", "b1", 3), ("B", "b2", 3)])
    assert drain(q) == ["a1", "b1", "a2", "b2"]


@grade("only the visited tenant must receive credit", "deficit", timeout=5)
def test_only_visited_credited(impl):
    # quantum 2. pop 1: A gets 2, a1 (2) fits -> 0. pop 2: a2 (2) > 0: A to the back; B gets
    # 2 < 3: back; C gets 2 < 4: back; A gets 2, a2 fits, A leaves. pop 3: B has 4, b1.
    # pop 4: C has 4, c1. Credit given to B or C outside their own visits lets b1 in early.
    q = drr(impl, 2, [("A", "a1", 2), ("B", "b1", 3), ("C", "c1", 4), ("A", "a2", 2)])
    assert drain(q) == ["a1", "a2", "b1", "c1"]


@grade("an idle tenant must not gain credit while others are visited", "deficit", timeout=5)
def test_idle_tenant_not_credited(impl):
    # quantum 2. pop 1: A gets 2, a1 (2) -> 0, A leaves. pop 2: B gets 2, b1 -> 0. A, idle all
    # along, rejoins with 0 behind B. pop 3: b2 (2) > 0: B to the back; A gets 2 < 3: back;
    # B gets 2, b2. pop 4: b3 > 0: B to the back; A gets 4, a2. Credit earned while idle lets a2
    # in at pop 3.
    q = drr(impl, 2, [("A", "a1", 2), ("B", "b1", 2), ("B", "b2", 2), ("B", "b3", 2)])
    assert [q.pop(), q.pop()] == [("A", "a1"), ("B", "b1")]
    q.push("A", "a2", 3)
    assert drain(q) == ["b2", "a2", "b3"]


@grade("pop must return None when nothing is queued", "fifo", timeout=5)
def test_pop_empty(impl):
    q = impl.DeficitRoundRobin(3)
    assert q.pop() is None
    q.push("A", "a1", 5)
    assert q.pop() == ("A", "a1")
    assert q.pop() is None


@grade("len must count queued requests", "fifo", timeout=5)
def test_len(impl):
    q = impl.DeficitRoundRobin(3)
    assert len(q) == 0
    q.push("A", 1, 1)
    q.push("A", 2, 5)
    q.push(("tenant", 3), 3, 2)  # any hashable names a tenant
    assert len(q) == 3
    q.pop()
    assert len(q) == 2
    drain(q)
    assert len(q) == 0


@grade("a served request id may be pushed again", "errors", timeout=5)
def test_served_id_reused(impl):
    q = drr(impl, 3, [("A", 1, 1)])
    assert q.pop() == ("A", 1)
    q.push("B", 1, 1)
    assert q.pop() == ("B", 1)


@grade("pop must serve a request whenever one is queued", "fifo", timeout=10)
@settings(max_examples=60)
@given(st.integers(1, 6), ops(1, 8))
def test_work_conserving(impl, quantum, script):
    ledger = Ledger()
    for op, got in replay(impl.DeficitRoundRobin(quantum), ledger, script, tail=70):
        if op[0] == "pop":
            ledger.check_conserving(got)


@grade("a tenant's requests must be served in the order they were pushed", "fifo", timeout=10)
@settings(max_examples=60)
@given(st.integers(1, 6), ops(1, 8))
def test_fifo_per_tenant(impl, quantum, script):
    ledger = Ledger()
    for _, got in replay(impl.DeficitRoundRobin(quantum), ledger, script, tail=70):
        ledger.check_fifo(got)


@grade("len must count queued requests after any pushes and pops", "fifo", timeout=10)
@settings(max_examples=60)
@given(st.integers(1, 6), ops(1, 8))
def test_len_property(impl, quantum, script):
    q, ledger = impl.DeficitRoundRobin(quantum), Ledger()
    for op, got in replay(q, ledger, script, tail=70):
        assert len(q) == ledger.total() - (got is not None), f"after {op}"


@grade("two tenants backlogged over an interval must get service within the DRR bound",
       "deficit", timeout=10)
@settings(max_examples=60)
@given(st.integers(1, 6), st.lists(st.integers(1, 9), min_size=6, max_size=30),
       ops(1, 9, tenants=("A", "B", "C"), size=80))
def test_fairness_bound(impl, quantum, backlog, script):
    q, ledger = impl.DeficitRoundRobin(quantum), Ledger()
    served = {"A": 0, "B": 0, "C": 0}
    largest = {"A": 0, "B": 0, "C": 0}
    history = []  # after each operation: (backlogged set, served costs)
    # A deep backlog first, so that long intervals with two tenants backlogged occur.
    prefill = [("push", "ABC"[i % 3], cost) for i, cost in enumerate(backlog)]
    for op in [*prefill, *script]:
        if op[0] == "push":
            ledger.push(q, op[1], op[2])
            largest[op[1]] = max(largest[op[1]], op[2])
        else:
            tenant, cost = ledger.take(q.pop())
            if tenant is not None:
                served[tenant] += cost
        history.append((set(ledger.backlogged()), dict(served)))
    for x, y in (("A", "B"), ("A", "C"), ("B", "C")):
        bound = quantum + 2 * max(largest[x], largest[y])
        segment: list[int] = []
        for backlogged, s in [*history, (set(), {})]:
            if x in backlogged and y in backlogged:
                segment.append(s[x] - s[y])
                continue
            if segment:
                assert max(segment) - min(segment) <= bound, (x, y, segment)
            segment = []


@pytest.mark.parametrize("quantum", [0, -3, 2.0, True, "4", None])
@grade("a quantum that is not an int of at least 1 must raise ValueError", "errors", timeout=5)
def test_bad_quantum(impl, quantum):
    with pytest.raises(ValueError):
        impl.DeficitRoundRobin(quantum)


@pytest.mark.parametrize("cost", [0, -1, 1.0, 2.5, True, "3", None])
@grade("a cost that is not an int of at least 1 must raise ValueError", "errors", timeout=5)
def test_bad_cost(impl, cost):
    q = impl.DeficitRoundRobin(4)
    with pytest.raises(ValueError):
        q.push("B", "x", cost)


@pytest.mark.parametrize("cost", [0, 2.5])
@grade("a push rejected for its cost must leave no trace", "errors", timeout=5)
def test_bad_cost_no_trace(impl, cost):
    q = impl.DeficitRoundRobin(4)
    with pytest.raises(ValueError):
        q.push("B", "x", cost)
    assert len(q) == 0 and q.pop() is None
    q.push("A", "a1", 4)
    q.push("B", "b1", 4)
    q.push("B", "x", 1)  # the rejected id was never queued, and B joined the round after A
    assert drain(q) == ["a1", "b1", "x"]


@grade("a request id already queued must raise ValueError", "errors", timeout=5)
def test_duplicate_id(impl):
    q = drr(impl, 4, [("A", "r", 1)])
    with pytest.raises(ValueError):
        q.push("A", "r", 1)


@grade("a request id queued for another tenant must raise ValueError", "errors", timeout=5)
def test_duplicate_id_other_tenant(impl):
    q = drr(impl, 4, [("A", "r", 1)])
    with pytest.raises(ValueError):
        q.push("B", "r", 2)


@grade("a push rejected as a duplicate must leave no trace", "errors", timeout=5)
def test_duplicate_id_no_trace(impl):
    q = drr(impl, 4, [("A", "r", 1)])
    for tenant in ("A", "B"):
        with pytest.raises(ValueError):
            q.push(tenant, "r", 1)
    q.push("C", "c", 1)  # B must not have joined the round
    assert len(q) == 2 and drain(q) == ["r", "c"]
