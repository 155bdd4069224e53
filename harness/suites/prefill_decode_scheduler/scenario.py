"""Small exact scenarios: build a scheduler, run steps, compare plans field by field.

Plans are compared as sets and dicts (oracle.Plan): the order inside decode, finished and
preempted, and the type of preempted, are left open by the spec.
"""

from __future__ import annotations

from .oracle import Plan, plan_of


def P(prefill: dict | None = None, decode=(), finished=(), preempted=()) -> Plan:  # noqa: N802
    return Plan(dict(prefill or {}), set(decode), set(finished), set(preempted))


EMPTY = P()


def make(impl, budget: int, requests=(), **kwargs):
    """A scheduler with `requests` ((id, prompt_len, max_new_tokens), ...) added in order."""
    sched = impl.Scheduler(budget, **kwargs)
    for rid, prompt_len, max_new_tokens in requests:
        sched.add_request(rid, prompt_len, max_new_tokens)
    return sched


def run(sched, steps: int) -> list[Plan]:
    return [plan_of(sched.step()) for _ in range(steps)]


def states(impl, sched, ids) -> dict:
    return {i: sched.state(i) for i in ids}
