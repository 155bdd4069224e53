"""Our continuous-batching slot engine with a fake model, for the end-to-end run and the bench.

Every step: requests that arrive at this step are pushed, `admit()` fills the free slots, then the
fake model generates one token for every running request (`charge(tenant, 1)` each) and a request
that has all its output tokens is completed. Time is counted in steps, so nothing depends on the
wall clock. A wait is the number of steps between a request's arrival and its admission.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True)
class Job:
    tenant: str
    rid: str
    arrival: int
    prompt: int
    output: int  # tokens the fake model generates for it, one per step


@dataclass
class Trace:
    start: dict[str, int]          # rid -> step of admission
    tokens: list[tuple[int, str]]  # (step, tenant) of every generated token
    steps: int


def flood(heavy: int = 200, light: int = 20, every: int = 10) -> list[Job]:
    """A heavy tenant bursts `heavy` requests at step 0; a light one sends `light` requests, one
    every `every` steps (10x fewer). Prompts of 16 tokens, outputs of 8 to 24 tokens."""
    jobs = [Job("heavy", f"h{i}", 0, 16, 8 + (7 * i) % 17) for i in range(heavy)]
    jobs += [Job("light", f"l{i}", every * i, 16, 8 + (5 * i) % 17) for i in range(light)]
    return sorted(jobs, key=lambda j: j.arrival)  # stable: heavy's burst is pushed first


def simulate(scheduler, jobs: list[Job], *, max_steps: int = 100_000) -> Trace:
    """Run `jobs` through `scheduler` (push / admit / charge / complete) until all finish."""
    by_id = {j.rid: j for j in jobs}
    arrivals = deque(jobs)
    running: dict[str, int] = {}  # rid -> tokens still to generate, in admission order
    trace = Trace({}, [], 0)
    step = 0
    while arrivals or running or len(trace.start) < len(jobs):
        if step >= max_steps:
            raise AssertionError(f"not done after {max_steps} steps: is a request stuck?")
        while arrivals and arrivals[0].arrival == step:
            j = arrivals.popleft()
            scheduler.push(j.tenant, j.rid, j.prompt)
        for _, rid in scheduler.admit():
            trace.start[rid] = step
            running[rid] = by_id[rid].output
        for rid in list(running):
            tenant = by_id[rid].tenant
            scheduler.charge(tenant, 1)
            trace.tokens.append((step, tenant))
            running[rid] -= 1
            if running[rid] == 0:
                del running[rid]
                scheduler.complete(rid)
        step += 1
    trace.steps = step
    return trace


def waits(trace: Trace, jobs: list[Job], tenant: str) -> list[int]:
    return [trace.start[j.rid] - j.arrival for j in jobs if j.tenant == tenant]


class Fifo:
    """The baseline: one queue for everybody, first come first served."""

    def __init__(self, capacity: int):
        self.capacity, self.queue, self.running = capacity, deque(), set()

    def push(self, tenant, request_id, prompt_tokens: int) -> None:
        self.queue.append((tenant, request_id))

    def admit(self) -> list:
        out = []
        while self.queue and len(self.running) < self.capacity:
            out.append(self.queue.popleft())
            self.running.add(out[-1][1])
        return out

    def charge(self, tenant, output_tokens: int) -> None:
        pass

    def complete(self, request_id) -> None:
        self.running.remove(request_id)


class PopAdmission:
    """Slots filled from a pop()-based queue (DeficitRoundRobin or VirtualTokenCounter)."""

    def __init__(self, queue, capacity: int, cost=None, *, charges: bool = False):
        self.q, self.capacity, self.cost, self.charges = queue, capacity, cost, charges
        self.running: set = set()

    def push(self, tenant, request_id, prompt_tokens: int) -> None:
        cost = prompt_tokens if self.cost is None else self.cost(request_id)
        self.q.push(tenant, request_id, cost)

    def admit(self) -> list:
        out = []
        while len(self.running) < self.capacity and (got := self.q.pop()) is not None:
            out.append(got)
            self.running.add(got[1])
        return out

    def charge(self, tenant, output_tokens: int) -> None:
        if self.charges:
            self.q.charge(tenant, output_tokens)

    def complete(self, request_id) -> None:
        self.running.remove(request_id)
