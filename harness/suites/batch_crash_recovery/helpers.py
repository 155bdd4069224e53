"""Shared scaffolding: a client that records every on_done per submit, and runners built on
the fakes. Requests carry unique payloads ("p", i) so a worker call names its requests."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from hypothesis import strategies as st

from .fakes import Worker, at_random, either, on_calls, poison, result


@dataclass
class Client:
    """One on_done per submit call, each keyed by (request id, n-th submit of that id).
    `at[key]` is how many worker calls had been made when that on_done ran."""

    worker: Worker | None = None
    got: dict = field(default_factory=lambda: defaultdict(list))
    order: list = field(default_factory=list)  # (key, outcome) in call order
    at: dict = field(default_factory=dict)
    submits: int = 0

    def on_done(self, key):
        def on_done(outcome):
            self.got[key].append(outcome)
            self.order.append((key, outcome))
            self.at.setdefault(key, len(self.worker.calls) if self.worker else 0)

        return on_done

    def submit(self, runner, rid, payload, n: int = 0):
        self.submits += 1
        runner.submit(rid, payload, self.on_done((rid, n)))

    def only(self, key):
        calls = self.got.get(key, [])
        assert len(calls) == 1, f"on_done for submit {key!r} ran {len(calls)} times, not once"
        return calls[0]


def payload(i: int) -> tuple:
    return ("p", i)


def run_all(impl, worker, n: int, **kw) -> Client:
    """Submit requests 0..n-1 with payload(i), run, and return the client."""
    client = Client(worker)
    runner = impl.BatchRunner(worker, **kw)
    for i in range(n):
        client.submit(runner, i, payload(i))
    runner.run()
    return client


def check_outcome(o, rid, ok: bool, attempts: int, p=None) -> None:
    assert o.request_id == rid, f"outcome for {rid!r} names {o.request_id!r}"
    assert o.ok is ok, f"{rid!r}: ok is {o.ok}, expected {ok}"
    assert o.attempts == attempts, f"{rid!r}: attempts {o.attempts}, expected {attempts}"
    if ok:
        assert o.result == result(p), f"{rid!r}: result {o.result!r} is not its own"
    else:
        assert o.result is None, f"{rid!r} failed but carries result {o.result!r}"
        assert isinstance(o.error, str) and o.error, f"{rid!r} failed without an error string"


@st.composite
def workloads(draw, transient: bool = True):
    """(n requests, max_batch_size, max_attempts, crash policy, poisoned indices)."""
    n = draw(st.integers(0, 14))
    max_batch_size = draw(st.integers(1, 6))
    max_attempts = draw(st.integers(1, 4))
    bad = draw(st.sets(st.integers(0, n - 1), max_size=3)) if n else set()
    crash = poison(*(payload(i) for i in bad))
    kind = draw(st.sampled_from(["poison only", "calls", "random"])) if transient else ""
    if kind == "calls":
        crash = either(crash, on_calls(*draw(st.sets(st.integers(1, 25), max_size=6))))
    elif kind == "random":
        rate = draw(st.sampled_from([0.2, 0.5]))
        crash = either(crash, at_random(draw(st.integers(0, 99)), rate))
    return n, max_batch_size, max_attempts, crash, bad


def check_budget(client: Client, worker: Worker, n: int, max_attempts: int) -> None:
    """No request ran more than max_attempts times, nor reports more attempts than that."""
    runs = Counter(p for call in worker.calls for p in call)
    for i in range(n):
        assert runs[payload(i)] <= max_attempts, (
            f"request {i} ran {runs[payload(i)]} times with max_attempts={max_attempts}")
        attempts = client.only((i, 0)).attempts
        assert 1 <= attempts <= max_attempts, f"request {i}: attempts {attempts}"


def check_no_run_after_outcome(client: Client, worker: Worker, n: int) -> None:
    """No request ran in a call made after its on_done had run."""
    last = {p: c for c, call in enumerate(worker.calls, start=1) for p in call}
    for i in range(n):
        assert payload(i) in last, f"request {i} never ran"
        assert (i, 0) in client.at, f"request {i} never got its on_done"
        assert last[payload(i)] <= client.at[(i, 0)], (
            f"request {i} ran in call {last[payload(i)]}, after its outcome was known "
            f"(at call {client.at[(i, 0)]})")
