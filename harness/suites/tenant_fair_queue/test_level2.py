"""Level 2: weighted virtual token counters — lowest counter first, charges, the lift, bad input."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.marks import level

from .helpers import POW2, TENANTS, Ledger, drain

grade = level(2)


def vtc(impl, pushes, weights=None, **prices):
    q = impl.VirtualTokenCounter(weights, **prices)
    for tenant, rid, tokens in pushes:
        q.push(tenant, rid, tokens)
    return q


@grade("a heavier weight must make a tenant's tokens count for less", "virtual_counter",
       timeout=5)
def test_golden_weights(impl):
    # A has weight 4: a 4-token prompt adds 1 to A's counter and 4 to B's.
    # tie 0/0 -> a1 (A 1); b1 (B 4); a2, a3, a4 (A 2, 3, 4; a4 at A 3 < 4); b2, b3, b4.
    pushes = [("A", f"a{i}", 4) for i in range(1, 5)] + [("B", f"b{i}", 4) for i in range(1, 5)]
    q = vtc(impl, pushes, {"A": 4})
    assert drain(q) == ["a1", "b1", "a2", "a3", "a4", "b2", "b3", "b4"]
    assert q.counter("A") == 4 and q.counter("B") == 16


@grade("serving must charge a request's prompt tokens, not a count of requests",
       "virtual_counter", timeout=5)
def test_golden_tokens(impl):
    # a1 (10 tokens) puts A at 10: B's three 1-token requests all go before a2.
    q = vtc(impl, [("A", "a1", 10), ("A", "a2", 10), ("B", "b1", 1), ("B", "b2", 1),
                   ("B", "b3", 1)])
    assert drain(q) == ["a1", "b1", "b2", "b3", "a2"]
    assert q.counter("A") == 20 and q.counter("B") == 3


@grade("charged output tokens must raise the counter at the output price", "charges",
       timeout=5)
def test_golden_charges(impl):
    # a1 -> A 1; charge(A, 2) -> A 1 + 2 * 2 = 5; b1, b2 (B 1, 2) go before a2.
    q = vtc(impl, [("A", "a1", 1), ("A", "a2", 1), ("B", "b1", 1), ("B", "b2", 1)])
    assert q.pop() == ("A", "a1")
    q.charge("A", 2)
    assert q.counter("A") == 5
    assert drain(q) == ["b1", "b2", "a2"]
    assert q.counter("A") == 6 and q.counter("B") == 2


@grade("prices and weights must scale the counters exactly as specified", "charges", timeout=5)
def test_golden_prices(impl):
    q = vtc(impl, [("A", "a1", 6), ("B", "b1", 8)], {"B": 2}, input_price=0.5, output_price=4)
    assert q.pop() == ("A", "a1")           # tie at 0, A seen first. A: 6 * 0.5 = 3
    q.charge("A", 3)                        # A: 3 + 3 * 4 = 15
    assert q.pop() == ("B", "b1")           # B: 8 * 0.5 / 2 = 2
    q.charge("B", 1)                        # B: 2 + 1 * 4 / 2 = 4
    q.charge("A", 0)
    assert q.counter("A") == 15 and q.counter("B") == 4


@grade("a tenant that becomes backlogged must be lifted to the lowest backlogged counter",
       "lift", timeout=5)
def test_golden_lift(impl):
    # a1, a2 served: A 10. B's first push lifts it to 10; the tie goes to A (seen first).
    q = vtc(impl, [("A", "a1", 5), ("A", "a2", 5), ("A", "a3", 5)])
    assert [q.pop(), q.pop()] == [("A", "a1"), ("A", "a2")]
    q.push("B", "b1", 5)
    q.push("B", "b2", 5)
    assert q.counter("B") == 10
    assert drain(q) == ["a3", "b1", "b2"]


@grade("the lift must use the lowest of the other backlogged counters", "lift", timeout=5)
def test_lift_to_minimum(impl):
    # A: 4-token requests, B: 2-token ones. a1 (A 4), b1 (B 2), b2 (B 4), a2 (tie: A 8),
    # b3 (B 6). C arrives: min(A 8, B 6) = 6. Then b4 (tie 6/6: B seen first), c1, a3.
    q = vtc(impl, [*[("A", f"a{i}", 4) for i in (1, 2, 3)],
                   *[("B", f"b{i}", 2) for i in (1, 2, 3, 4)]])
    assert [q.pop()[1] for _ in range(5)] == ["a1", "b1", "b2", "a2", "b3"]
    q.push("C", "c1", 1)
    assert q.counter("C") == 6
    assert drain(q) == ["b4", "c1", "a3"]


@grade("a tenant's counter must start at 0 when it is first seen", "lift", timeout=5)
def test_counter_starts_at_zero(impl):
    # a1 served: A 8, idle. B, backlogged since before, stays at 0, so C's first push is lifted
    # to max(0, 0): the counters of idle tenants play no part.
    q = vtc(impl, [("A", "a1", 8), ("B", "b1", 1), ("B", "b2", 1)])
    assert q.counter("A") == 0
    assert q.pop() == ("A", "a1")
    q.push("C", "c1", 1)
    assert q.counter("C") == 0


@grade("with nobody else backlogged the lift must use the last served tenant's counter",
       "lift", timeout=5)
def test_lift_to_last_served(impl):
    q = vtc(impl, [("A", "a1", 3)])
    assert q.pop() == ("A", "a1")    # A: 3, idle
    q.push("B", "b1", 2)             # lifted to A's 3
    assert q.counter("B") == 3
    assert q.pop() == ("B", "b1")    # B: 5, the last served
    q.push("A", "a2", 1)             # A lifted from 3 to 5
    assert q.counter("A") == 5


@grade("the lift to the last served tenant's counter must include its charges", "lift",
       timeout=5)
def test_lift_counts_charges(impl):
    q = vtc(impl, [("A", "a1", 3)])
    assert q.pop() == ("A", "a1")    # A: 3
    q.charge("A", 1)                 # A: 3 + 2 = 5
    q.push("B", "b1", 1)
    assert q.counter("B") == 5


@grade("a tenant that was itself served last must keep its counter when it pushes again",
       "lift", timeout=5)
def test_lift_self_keeps(impl):
    q = vtc(impl, [("B", "b1", 1)])
    assert q.pop() == ("B", "b1")    # B: 1
    q.push("A", "a1", 1)             # lifted to B's 1
    assert q.pop() == ("A", "a1")    # A: 2, served last
    q.charge("B", 10)                # B: 21, idle
    q.push("A", "a2", 1)             # nobody else backlogged, A served last: A keeps 2
    assert q.counter("A") == 2


@grade("the lift must never lower a counter", "lift", timeout=5)
def test_lift_never_lowers(impl):
    q = vtc(impl, [("A", "a1", 2), ("A", "a2", 2), ("B", "b1", 1)])
    assert q.pop() == ("A", "a1")    # A 2
    assert q.pop() == ("B", "b1")    # B 1, now idle
    q.charge("B", 10)                # B 21
    q.push("B", "b2", 1)             # others backlogged: A at 2; B keeps 21
    assert q.counter("B") == 21
    assert drain(q) == ["a2", "b2"]


@grade("with nobody else backlogged the lift must never lower a counter", "lift", timeout=5)
def test_lift_to_last_served_never_lowers(impl):
    q = vtc(impl, [("A", "a1", 1)])
    assert q.pop() == ("A", "a1")    # A: 1
    q.push("B", "b1", 1)             # lifted to A's 1
    assert q.pop() == ("B", "b1")    # B: 2, served last
    q.charge("A", 10)                # A: 21, idle
    q.push("A", "a2", 1)             # nobody else backlogged: max(21, B's 2) = 21
    assert q.counter("A") == 21


@grade("ties must go to the tenant whose first push came first", "virtual_counter", timeout=5)
def test_ties_by_first_push(impl):
    q = vtc(impl, [("Z", "z1", 1), ("A", "a1", 1)])
    assert drain(q) == ["z1", "a1"]  # both 1 now, both idle
    q.push("A", "a2", 1)             # A becomes backlogged first this time ...
    q.push("Z", "z2", 1)             # ... but Z was seen first ever
    assert q.counter("A") == q.counter("Z") == 1
    assert drain(q) == ["z2", "a2"]


@grade("pop must return None when nothing is queued", "virtual_counter", timeout=5)
def test_pop_empty(impl):
    q = impl.VirtualTokenCounter()
    assert q.pop() is None
    q.push("A", "a1", 3)
    assert q.pop() == ("A", "a1")
    assert q.pop() is None


@grade("len must count queued requests", "virtual_counter", timeout=5)
def test_len(impl):
    q = vtc(impl, [("A", 1, 1), ("A", 2, 3), ("B", 3, 3)])
    assert len(q) == 3
    q.pop()
    assert len(q) == 2
    drain(q)
    assert len(q) == 0


@grade("zero prompt tokens must be accepted", "errors", timeout=5)
def test_zero_prompt_tokens(impl):
    q = vtc(impl, [("A", "a1", 0), ("B", "b1", 2)])
    assert q.pop() == ("A", "a1") and q.counter("A") == 0


@grade("zero output tokens must be accepted", "errors", timeout=5)
def test_zero_output_tokens(impl):
    q = vtc(impl, [("A", "a1", 2)])
    q.charge("A", 0)
    assert q.counter("A") == 0 and len(q) == 1


@grade("a served request id may be pushed again", "errors", timeout=5)
def test_served_id_reused(impl):
    q = vtc(impl, [("A", 1, 1)])
    assert q.pop() == ("A", 1)
    q.push("B", 1, 1)
    assert q.pop() == ("B", 1)


def weights_and_prices():
    w = st.dictionaries(st.sampled_from(TENANTS), st.sampled_from(POW2), max_size=4)
    return st.tuples(w, st.sampled_from(POW2), st.sampled_from(POW2))


def vtc_ops():
    push = st.tuples(st.just("push"), st.sampled_from(TENANTS), st.integers(0, 9))
    charge = st.tuples(st.just("charge"), st.sampled_from(TENANTS), st.integers(0, 9))
    return st.lists(st.one_of(push, push, charge, st.just(("pop",)), st.just(("pop",))),
                    max_size=60)


class Run:
    """Replays drawn operations on the implementation, checking only what `checks` names:
    "pick" (a pop serves the lowest backlogged counter), "fifo", "serve" and "charge" (the
    counter grows by the priced tokens), "lift" (a push that makes a tenant backlogged),
    "steady" (a push to a backlogged tenant changes nothing) and "len"."""

    def __init__(self, impl, config, *checks: str):
        weights, self.ip, self.op = config
        self.w = lambda t: weights.get(t, 1.0)
        self.q, self.ledger = impl.VirtualTokenCounter(weights, input_price=self.ip,
                                                       output_price=self.op), Ledger()
        self.checks = set(checks)
        self.rank: dict = {}
        self.last = None

    def step(self, op) -> None:
        q, ledger, check = self.q, self.ledger, self.checks.__contains__
        if op[0] == "push":
            tenant = op[1]
            own = q.counter(tenant) if tenant in self.rank else 0
            others = [q.counter(t) for t in ledger.backlogged() if t != tenant]
            self.rank.setdefault(tenant, len(self.rank))
            _, idle = ledger.push(q, tenant, op[2])
            if idle and check("lift"):
                floor = min(others) if others else (
                    q.counter(self.last) if self.last is not None else own)
                assert q.counter(tenant) == max(own, floor), f"{tenant!r} lifted wrong"
            if not idle and check("steady"):
                assert q.counter(tenant) == own, f"a push to backlogged {tenant!r} moved it"
        elif op[0] == "charge":
            if op[1] in self.rank:
                before = q.counter(op[1])
                q.charge(op[1], op[2])
                if check("charge"):
                    assert q.counter(op[1]) == before + op[2] * self.op / self.w(op[1])
        else:
            backlogged = ledger.backlogged()
            counters = {t: q.counter(t) for t in backlogged}
            got = q.pop()
            if check("pick"):
                ledger.check_conserving(got)
            if check("fifo"):
                ledger.check_fifo(got)
            tenant, tokens = ledger.take(got)
            if tenant is None:
                return
            if check("pick"):
                best = min(backlogged, key=lambda t: (counters[t], self.rank[t]))
                assert tenant == best, f"served {tenant!r} at {counters[tenant]}, not {best!r}"
            if check("serve"):
                assert q.counter(tenant) == counters[tenant] + tokens * self.ip / self.w(tenant)
            self.last = tenant
        if check("len"):
            assert len(q) == ledger.total()


def run_ops(impl, config, script, *checks: str) -> None:
    run = Run(impl, config, *checks)
    for op in [*script, *[("pop",)] * 40]:
        run.step(op)


@grade("every pop must serve a backlogged tenant with the lowest counter", "virtual_counter",
       timeout=10)
@settings(max_examples=60)
@given(weights_and_prices(), vtc_ops())
def test_lowest_counter_property(impl, config, script):
    run_ops(impl, config, script, "pick")


@grade("a tenant's requests must be served in the order they were pushed", "virtual_counter",
       timeout=10)
@settings(max_examples=60)
@given(weights_and_prices(), vtc_ops())
def test_fifo_property(impl, config, script):
    run_ops(impl, config, script, "fifo")


@grade("every serve must add the priced prompt tokens over the weight to the counter",
       "virtual_counter", timeout=10)
@settings(max_examples=60)
@given(weights_and_prices(), vtc_ops())
def test_serve_price_property(impl, config, script):
    run_ops(impl, config, script, "serve")


@grade("every charge must add the priced output tokens over the weight to the counter",
       "charges", timeout=10)
@settings(max_examples=60)
@given(weights_and_prices(), vtc_ops())
def test_charge_price_property(impl, config, script):
    run_ops(impl, config, script, "charge")


@grade("len must count queued requests after any pushes and pops", "virtual_counter",
       timeout=10)
@settings(max_examples=60)
@given(weights_and_prices(), vtc_ops())
def test_len_property(impl, config, script):
    run_ops(impl, config, script, "len")


def bursts():
    """A tenant pushes n requests, then some pops follow, each with a charge to whoever was
    served: tenants keep going idle and coming back."""
    return st.lists(st.tuples(st.sampled_from(TENANTS[:3]), st.integers(1, 4),
                              st.integers(0, 5), st.integers(0, 6)), min_size=1, max_size=30)


def run_bursts(impl, config, script, check: str) -> None:
    run = Run(impl, config, check)
    for tenant, n, pops, out in script:
        for _ in range(n):
            run.step(("push", tenant, 1 + out))
        for _ in range(pops):
            run.step(("pop",))
            if run.last is not None:
                run.step(("charge", run.last, out))


@grade("a tenant that becomes backlogged must be lifted to max(own, the lift's floor)", "lift",
       timeout=10)
@settings(max_examples=60)
@given(weights_and_prices(), bursts())
def test_lift_property(impl, config, script):
    run_bursts(impl, config, script, "lift")


@grade("a push to a tenant already backlogged must not change its counter", "lift",
       timeout=10)
@settings(max_examples=60)
@given(weights_and_prices(), bursts())
def test_no_lift_when_backlogged(impl, config, script):
    run_bursts(impl, config, script, "steady")


@pytest.mark.parametrize("seed", [0, 1, 2])
@grade("priced service of backlogged tenants must converge to shares proportional to weights",
       "virtual_counter", timeout=10)
def test_weighted_shares_converge(impl, seed):
    rng = random.Random(seed)
    weights = {"A": 1, "B": 2, "C": 4}
    q = impl.VirtualTokenCounter(weights, input_price=1.0, output_price=2.0)
    jobs = {}
    for i in range(500):  # C (4/7 of 700 pops) never runs out: all stay backlogged
        for t in weights:
            rid = f"{t}{i}"
            jobs[rid] = (rng.randint(1, 8), rng.randint(1, 8))
            q.push(t, rid, jobs[rid][0])
    service = dict.fromkeys(weights, 0.0)
    largest = 0.0
    for _ in range(700):
        tenant, rid = q.pop()
        prompt, out = jobs[rid]
        q.charge(tenant, out)
        service[tenant] += prompt * 1.0 + out * 2.0
        largest = max(largest, (prompt + 2 * out) / weights[tenant])
    normalised = {t: service[t] / weights[t] for t in weights}
    # Service over weight differs by at most one request's increment ...
    assert max(normalised.values()) - min(normalised.values()) <= largest + 1e-9
    # ... so over 700 requests the shares are within a few percent of 1/7, 2/7, 4/7.
    total = sum(service.values())
    for t, w in weights.items():
        assert math.isclose(service[t] / total, w / 7, rel_tol=0.05), (t, service)


BAD_NUMBERS = [0, -1, -0.5, math.nan, math.inf, True, "1", None]


@pytest.mark.parametrize("weight", BAD_NUMBERS)
@grade("a weight that is not a finite positive number must raise ValueError", "errors",
       timeout=5)
def test_bad_weight(impl, weight):
    with pytest.raises(ValueError):
        impl.VirtualTokenCounter({"A": 1, "B": weight})


@pytest.mark.parametrize("name", ["input_price", "output_price"])
@pytest.mark.parametrize("price", BAD_NUMBERS)
@grade("a price that is not a finite positive number must raise ValueError", "errors",
       timeout=5)
def test_bad_price(impl, name, price):
    with pytest.raises(ValueError):
        impl.VirtualTokenCounter({"A": 2}, **{name: price})


@grade("integer weights and prices must be accepted", "errors", timeout=5)
def test_good_numbers(impl):
    q = vtc(impl, [("A", "a", 3), ("B", "b", 1), ("C", "c", 0)], {"A": 3, "B": 0.25},
            input_price=2, output_price=1)
    assert len(q) == 3


@pytest.mark.parametrize("weights", [None, {}])
@grade("without weights every tenant must weigh 1", "virtual_counter", timeout=5)
def test_no_weights(impl, weights):
    q = vtc(impl, [("A", "a", 3), ("B", "b", 1)], weights)
    assert drain(q) == ["a", "b"] and q.counter("A") == 3 and q.counter("B") == 1


@pytest.mark.parametrize("tokens", [-1, 1.0, 2.5, True, "2", None])
@grade("prompt tokens that are not an int of at least 0 must raise ValueError", "errors",
       timeout=5)
def test_bad_prompt_tokens(impl, tokens):
    q = impl.VirtualTokenCounter()
    with pytest.raises(ValueError):
        q.push("Z", "z", tokens)


@pytest.mark.parametrize("tokens", [-1, 2.5])
@grade("a push rejected for its token count must leave no trace", "errors", timeout=5)
def test_bad_prompt_tokens_no_trace(impl, tokens):
    q = impl.VirtualTokenCounter()
    with pytest.raises(ValueError):
        q.push("Z", "z", tokens)
    assert len(q) == 0 and q.pop() is None
    with pytest.raises(KeyError):
        q.counter("Z")  # never pushed: the rejected push did not count as Z's first
    q.push("A", "a", 1)
    q.push("Z", "z", 1)
    assert drain(q) == ["a", "z"]  # tie: A was seen first


@pytest.mark.parametrize("tokens", [-1, 1.0, False, "2", None])
@grade("output tokens that are not an int of at least 0 must raise ValueError", "errors",
       timeout=5)
def test_bad_output_tokens(impl, tokens):
    q = vtc(impl, [("A", "a", 2)])
    with pytest.raises(ValueError):
        q.charge("A", tokens)


@pytest.mark.parametrize("tokens", [-1, 1.0])
@grade("a rejected charge must change no counter", "errors", timeout=5)
def test_bad_output_tokens_no_trace(impl, tokens):
    q = vtc(impl, [("A", "a", 2)])
    with pytest.raises(ValueError):
        q.charge("A", tokens)
    assert q.counter("A") == 0 and len(q) == 1


@grade("a request id already queued, in any tenant, must raise ValueError", "errors", timeout=5)
def test_duplicate_id(impl):
    q = vtc(impl, [("A", "r", 1)])
    for tenant in ("A", "B"):
        with pytest.raises(ValueError):
            q.push(tenant, "r", 1)


@grade("a push rejected as a duplicate must leave no trace", "errors", timeout=5)
def test_duplicate_id_no_trace(impl):
    q = vtc(impl, [("A", "r", 1)])
    with pytest.raises(ValueError):
        q.push("B", "r", 1)
    with pytest.raises(KeyError):
        q.counter("B")  # the rejected push did not make B seen
    assert len(q) == 1 and drain(q) == ["r"]


@grade("charge of a tenant never pushed must raise KeyError", "errors", timeout=5)
def test_charge_unknown_tenant(impl):
    q = vtc(impl, [("A", "a", 1)])
    with pytest.raises(KeyError):
        q.charge("B", 1)


@grade("counter of a tenant never pushed must raise KeyError", "errors", timeout=5)
def test_counter_unknown_tenant(impl):
    q = vtc(impl, [("A", "a", 1)])
    with pytest.raises(KeyError):
        q.counter("B")


@grade("charging a tenant with nothing queued must be allowed", "charges", timeout=5)
def test_charge_idle_tenant(impl):
    q = vtc(impl, [("A", "a", 1)])
    assert q.pop() == ("A", "a")
    q.charge("A", 1)  # nothing queued: its requests may still be generating
    assert q.counter("A") == 3


@grade("VirtualTokenCounter's settings must work by name", "charges", timeout=5)
def test_vtc_settings_by_name(impl):
    q = impl.VirtualTokenCounter(weights={"a": 2}, input_price=1.0, output_price=2.0)
    q.push("a", "a1", 4)
    assert q.pop() == ("a", "a1")
    assert math.isclose(q.counter("a"), 4 * 1.0 / 2)
