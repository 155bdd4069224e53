"""Visible examples. `pytest katas/prefill_decode_scheduler` also runs the hidden suite.

Plans are compared as sets: the order of ids inside decode, finished and preempted is yours.
"""

import pytest


def plans(sched, steps):
    out = []
    for _ in range(steps):
        p = sched.step()
        out.append((dict(p.prefill), set(p.decode), set(p.finished), set(p.preempted)))
    return out


def test_example_from_the_prompt(impl):
    sched = impl.Scheduler(4)
    sched.add_request("a", 3, 2)
    sched.add_request("b", 2, 1)
    assert plans(sched, 3) == [
        ({"a": 3}, set(), set(), set()),  # b's 2 tokens do not fit in the 1 left
        ({"b": 2}, {"a"}, set(), set()),  # a's decode is charged first: 3 left, b fits
        ({}, {"a", "b"}, {"a", "b"}, set()),
    ]
    assert not sched.has_unfinished()


def test_states(impl):
    S = impl.State
    sched = impl.Scheduler(8)
    sched.add_request(7, 2, 1)
    assert sched.state(7) == S.WAITING
    sched.step()
    assert sched.state(7) == S.DECODE  # prefilled: its first token comes next step
    sched.step()
    assert sched.state(7) == S.FINISHED


def test_chunked_prefill(impl):
    sched = impl.Scheduler(4, chunked_prefill=True)
    sched.add_request("long", 10, 1)
    assert [p[0] for p in plans(sched, 3)] == [{"long": 4}, {"long": 4}, {"long": 2}]
    assert sched.state("long") == impl.State.DECODE


def test_preemption(impl):
    sched = impl.Scheduler(8, num_kv_blocks=2, block_size=1)
    sched.add_request("old", 1, 1)
    sched.add_request("new", 1, 1)
    assert plans(sched, 4) == [
        ({"old": 1, "new": 1}, set(), set(), set()),  # both blocks in use
        ({}, {"old"}, {"old"}, {"new"}),  # old's token needs a block: the newest is preempted
        ({"new": 1}, set(), set(), set()),
        ({}, {"new"}, {"new"}, set()),
    ]
    assert sched.free_blocks == 2


def test_bad_budget(impl):
    with pytest.raises(ValueError):
        impl.Scheduler(0)
