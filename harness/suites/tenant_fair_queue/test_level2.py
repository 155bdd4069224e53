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
    q = impl.VirtualTokenCounter({"B": 2}, input_price=0.5, output_price=4)
    q.push("A", "a1", 6)
    assert q.pop() == ("A", "a1")           # A: 6 * 0.5 = 3
    q.charge("A", 3)                        # A: 3 + 3 * 4 = 15
    q.push("B", "b1", 8)                    # lifted to A's 15: nobody else is backlogged
    assert q.counter("A") == 15 and q.counter("B") == 15
    assert q.pop() == ("B", "b1")           # B: 15 + 8 * 0.5 / 2 = 17
    q.charge("B", 1)                        # B: 17 + 1 * 4 / 2 = 19
    q.charge("A", 0)
    assert q.counter("A") == 15 and q.counter("B") == 19


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


@grade("with nobody else backlogged the lift must use the last served tenant's counter",
       "lift", timeout=5)
def test_lift_to_last_served(impl):
    q = vtc(impl, [("A", "a1", 3)])
    assert q.pop() == ("A", "a1")
    q.charge("A", 1)                 # A: 3 + 2 = 5, charges count
    q.push("B", "b1", 1)
    assert q.counter("B") == 5
    assert q.pop() == ("B", "b1")    # B: 6
    q.charge("B", 15)                # B: 36, nothing queued: allowed
    q.push("A", "a2", 1)             # last served is B: A lifted from 5 to 36
    assert q.counter("A") == 36
    assert q.pop() == ("A", "a2")    # A: 37


@grade("the lift must never lower a counter", "lift", timeout=5)
def test_lift_never_lowers(impl):
    q = vtc(impl, [("A", "a1", 2), ("A", "a2", 2), ("B", "b1", 1)])
    assert q.pop() == ("A", "a1")    # A 2
    assert q.pop() == ("B", "b1")    # B 1, now idle
    q.charge("B", 10)                # B 21
    q.push("B", "b2", 1)             # others backlogged: A at 2; B keeps 21
    assert q.counter("B") == 21
    assert drain(q) == ["a2", "b2"]


@grade("ties must go to the tenant whose first push came first", "virtual_counter", timeout=5)
def test_ties_by_first_push(impl):
    q = vtc(impl, [("Z", "z1", 1), ("A", "a1", 1)])
    assert drain(q) == ["z1", "a1"]  # both 1 now, both idle
    q.push("A", "a2", 1)             # A becomes backlogged first this time ...
    q.push("Z", "z2", 1)             # ... but Z was seen first ever
    assert q.counter("A") == q.counter("Z") == 1
    assert drain(q) == ["z2", "a2"]


@grade("pop must return None on an empty queue and len must count queued requests",
       "virtual_counter", timeout=5)
def test_empty_and_len(impl):
    q = impl.VirtualTokenCounter()
    assert q.pop() is None and len(q) == 0
    q.push("A", 1, 0)                # zero prompt tokens are allowed
    q.push("B", 2, 3)
    assert len(q) == 2
    assert sorted(drain(q)) == [1, 2] and len(q) == 0 and q.pop() is None
    q.push("B", 1, 1)                # a served id may be used again
    assert len(q) == 1


def weights_and_prices():
    w = st.dictionaries(st.sampled_from(TENANTS), st.sampled_from(POW2), max_size=4)
    return st.tuples(w, st.sampled_from(POW2), st.sampled_from(POW2))


def vtc_ops():
    push = st.tuples(st.just("push"), st.sampled_from(TENANTS), st.integers(0, 9))
    charge = st.tuples(st.just("charge"), st.sampled_from(TENANTS), st.integers(0, 9))
    return st.lists(st.one_of(push, push, charge, st.just(("pop",)), st.just(("pop",))),
                    max_size=60)


class Run:
    """Replays drawn operations on the implementation and checks every pop and every lift."""

    def __init__(self, impl, config):
        weights, self.ip, self.op = config
        self.w = lambda t: weights.get(t, 1.0)
        self.q, self.ledger = impl.VirtualTokenCounter(weights, input_price=self.ip,
                                                       output_price=self.op), Ledger()
        self.rank: dict = {}
        self.last = None

    def step(self, op) -> None:
        q, ledger = self.q, self.ledger
        if op[0] == "push":
            tenant = op[1]
            own = q.counter(tenant) if tenant in self.rank else 0
            others = [q.counter(t) for t in ledger.backlogged() if t != tenant]
            self.rank.setdefault(tenant, len(self.rank))
            _, idle = ledger.push(q, tenant, op[2])
            if idle:
                floor = min(others) if others else (
                    q.counter(self.last) if self.last is not None else own)
                assert q.counter(tenant) >= floor
                assert q.counter(tenant) == max(own, floor)
            else:
                assert q.counter(tenant) == own
        elif op[0] == "charge":
            if op[1] in self.rank:
                before = q.counter(op[1])
                q.charge(op[1], op[2])
                assert q.counter(op[1]) == before + op[2] * self.op / self.w(op[1])
        else:
            backlogged = ledger.backlogged()
            counters = {t: q.counter(t) for t in backlogged}
            got = q.pop()
            tenant, tokens = ledger.check_pop(got)
            if tenant is None:
                return
            best = min(backlogged, key=lambda t: (counters[t], self.rank[t]))
            assert tenant == best, f"served {tenant!r} at {counters[tenant]}, not {best!r}"
            assert q.counter(tenant) == counters[tenant] + tokens * self.ip / self.w(tenant)
            self.last = tenant
        assert len(q) == ledger.total()


@grade("every pop must serve a backlogged tenant with the lowest counter, in push order",
       "virtual_counter", timeout=10)
@settings(max_examples=60)
@given(weights_and_prices(), vtc_ops())
def test_lowest_counter_property(impl, config, script):
    run = Run(impl, config)
    for op in [*script, *[("pop",)] * 40]:
        run.step(op)


@grade("a returning tenant's counter must be lifted to no less than the others'", "lift",
       timeout=10)
@settings(max_examples=60)
@given(weights_and_prices(),
       st.lists(st.tuples(st.sampled_from(TENANTS[:3]), st.integers(1, 4), st.integers(0, 5),
                          st.integers(0, 6)), min_size=1, max_size=30))
def test_lift_property(impl, config, bursts):
    # Bursts: a tenant pushes n requests, some pops follow, with a charge to whoever was served.
    run = Run(impl, config)
    for tenant, n, pops, out in bursts:
        for _ in range(n):
            run.step(("push", tenant, 1 + out))
        for _ in range(pops):
            run.step(("pop",))
            if run.last is not None:
                run.step(("charge", run.last, out))


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


@grade("integer weights and prices, and no weights at all, must be accepted", "errors",
       timeout=5)
def test_good_numbers(impl):
    q = impl.VirtualTokenCounter({"A": 3, "B": 0.25}, input_price=2, output_price=1)
    q.push("A", "a", 3)
    q.push("B", "b", 1)
    q.push("C", "c", 0)
    assert len(q) == 3
    assert len(impl.VirtualTokenCounter(None)) == 0 and len(impl.VirtualTokenCounter({})) == 0


@pytest.mark.parametrize("tokens", [-1, 1.0, 2.5, True, "2", None])
@grade("prompt tokens that are not an int of at least 0 must raise ValueError and leave no trace",
       "errors", timeout=5)
def test_bad_prompt_tokens(impl, tokens):
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
@grade("output tokens that are not an int of at least 0 must raise ValueError and leave no trace",
       "errors", timeout=5)
def test_bad_output_tokens(impl, tokens):
    q = vtc(impl, [("A", "a", 2)])
    with pytest.raises(ValueError):
        q.charge("A", tokens)
    assert q.counter("A") == 0 and len(q) == 1


@grade("a request id already queued, in any tenant, must raise ValueError and leave no trace",
       "errors", timeout=5)
def test_duplicate_id(impl):
    q = vtc(impl, [("A", "r", 1)])
    with pytest.raises(ValueError):
        q.push("A", "r", 1)
    with pytest.raises(ValueError):
        q.push("B", "r", 1)
    with pytest.raises(KeyError):
        q.counter("B")
    assert len(q) == 1 and drain(q) == ["r"]


@grade("charge or counter of a tenant never pushed must raise KeyError", "errors", timeout=5)
def test_unknown_tenant(impl):
    q = vtc(impl, [("A", "a", 1)])
    with pytest.raises(KeyError):
        q.charge("B", 1)
    with pytest.raises(KeyError):
        q.counter("B")
    q.pop()
    q.charge("A", 1)  # nothing queued: allowed, its requests may still be generating
    assert q.counter("A") == 3


@grade("VirtualTokenCounter's settings must work by name", "charges", timeout=5)
def test_vtc_settings_by_name(impl):
    q = impl.VirtualTokenCounter(weights={"a": 2}, input_price=1.0, output_price=2.0)
    q.push("a", "a1", 4)
    assert q.pop() == ("a", "a1")
    assert math.isclose(q.counter("a"), 4 * 1.0 / 2)
