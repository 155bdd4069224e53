"""Level 3: KV-cache blocks, and preemption by recompute when they run out."""

import pytest

from harness.marks import level

from .machine import ALL_CHECKS, configs, run_machine
from .scenario import P, make, run

grade = level(3)


def paged(impl, budget, requests, num_kv_blocks, block_size, **kw):
    return make(impl, budget, requests, num_kv_blocks=num_kv_blocks, block_size=block_size, **kw)


def free_after_each_step(sched, steps):
    free = [sched.free_blocks]
    for _ in range(steps):
        sched.step()
        free.append(sched.free_blocks)
    return free


# ---- block accounting --------------------------------------------------------------------------


@grade("free_blocks must count ceil(cached tokens / block_size) per running request", hint="blocks")
def test_free_blocks(impl):
    # 5 prompt tokens fill 2 blocks of 4; tokens 6..8 fit in the second block.
    sched = paged(impl, 16, [("a", 5, 3)], num_kv_blocks=4, block_size=4)
    assert free_after_each_step(sched, 4) == [4, 2, 2, 2, 4]


@grade("the smallest caches must be accepted: a single block, and blocks of one token",
       hint="errors")
@pytest.mark.parametrize("kwargs", [{"num_kv_blocks": 1}, {"num_kv_blocks": 8, "block_size": 1}],
                         ids=["one-block", "one-token-blocks"])
def test_smallest_caches(impl, kwargs):
    sched = impl.Scheduler(8, **kwargs)
    sched.add_request("a", 3, 2)  # 5 tokens: one block of 16, or five of 1
    for _ in range(3):
        sched.step()
    assert sched.state("a") == impl.State.FINISHED


@grade("block_size must default to 16 tokens", hint="blocks")
def test_default_block_size(impl):
    sched = impl.Scheduler(32, num_kv_blocks=4)
    sched.add_request("a", 16, 2)
    sched.step()
    assert sched.free_blocks == 3  # 16 prompt tokens fill one block of 16
    sched.step()
    assert sched.free_blocks == 2  # the 17th token opens a second block


@grade("a decode that crosses a block boundary must take a new block", hint="blocks")
def test_decode_takes_a_block(impl):
    sched = paged(impl, 16, [("a", 4, 2)], num_kv_blocks=4, block_size=4)
    assert free_after_each_step(sched, 3) == [4, 3, 2, 4]


@grade("a request part-way through its prefill must hold blocks for what it prefilled",
       hint="blocks")
def test_partial_prefill_holds_blocks(impl):
    sched = paged(impl, 4, [("a", 10, 1)], num_kv_blocks=8, block_size=2, chunked_prefill=True)
    assert free_after_each_step(sched, 2) == [8, 6, 4]


@grade("a decode that stays within its last block must not need a free block", hint="blocks")
def test_decode_within_block(impl):
    sched = paged(impl, 8, [("a", 1, 1)], num_kv_blocks=1, block_size=2)
    assert run(sched, 2) == [P({"a": 1}), P(decode=["a"], finished=["a"])]


@grade("a chunk that fits in the request's last, partly filled block must need no new block",
       hint="blocks")
def test_chunk_fills_partial_block(impl):
    sched = paged(impl, 1, [("a", 2, 1)], num_kv_blocks=1, block_size=3, chunked_prefill=True)
    assert run(sched, 3) == [P({"a": 1}), P({"a": 1}), P(decode=["a"], finished=["a"])]


@grade("the incomplete prefill's next chunk must wait for free blocks", hint="blocks")
def test_continuation_needs_blocks(impl):
    sched = paged(impl, 3, [("a", 1, 2), ("b", 5, 2)], num_kv_blocks=4, block_size=2,
                  chunked_prefill=True)
    assert run(sched, 4) == [
        P({"a": 1, "b": 2}),
        P({"b": 2}, decode=["a"]),
        P(decode=["a"], finished=["a"]),  # a's second token took the last free block
        P({"b": 1}),
    ]


@grade("a request must not be admitted without free blocks for its whole prompt", hint="blocks")
def test_admission_needs_blocks(impl):
    sched = paged(impl, 16, [("a", 4, 2), ("b", 4, 1), ("c", 1, 1)],
                  num_kv_blocks=3, block_size=2)
    # b needs 2 blocks, only 1 is free; c would fit but must not skip ahead of b.
    assert run(sched, 4) == [
        P({"a": 4}),
        P(decode=["a"]),
        P(decode=["a"], finished=["a"]),
        P({"b": 4, "c": 1}),
    ]


@grade("a finishing request must keep its blocks for its whole last step", hint="blocks")
def test_finishing_request_holds_its_blocks(impl):
    sched = paged(impl, 16, [("a", 3, 1), ("c", 1, 1)], num_kv_blocks=2, block_size=2)
    assert run(sched, 2) == [P({"a": 3}), P(decode=["a"], finished=["a"])]


@grade("a finished request's blocks must be free from the next step on", hint="blocks")
def test_finished_blocks_are_freed(impl):
    sched = paged(impl, 16, [("a", 3, 1), ("c", 1, 1)], num_kv_blocks=2, block_size=2)
    run(sched, 2)
    assert sched.free_blocks == 2
    assert run(sched, 2) == [P({"c": 1}), P(decode=["c"], finished=["c"])]
    assert sched.free_blocks == 2


@grade("a chunk must never be shrunk to fit the free blocks", hint="blocks")
def test_chunk_not_shrunk(impl):
    sched = paged(impl, 4, [("a", 1, 1), ("b", 3, 1)], num_kv_blocks=2, block_size=2,
                  chunked_prefill=True)
    assert run(sched, 4) == [
        P({"a": 1}),  # b's chunk of 3 needs 2 blocks, 1 is free
        P(decode=["a"], finished=["a"]),
        P({"b": 3}),
        P(decode=["b"], finished=["b"]),
    ]


# ---- preemption --------------------------------------------------------------------------------


@grade("a decode short of a block must preempt the most recently admitted request",
       hint="preemption")
def test_preempt_newest(impl):
    sched = paged(impl, 8, [("a", 1, 1), ("b", 1, 1)], num_kv_blocks=2, block_size=1)
    assert run(sched, 2) == [P({"a": 1, "b": 1}), P(decode=["a"], finished=["a"], preempted=["b"])]
    assert sched.state("b") == impl.State.WAITING
    assert run(sched, 2) == [P({"b": 1}), P(decode=["b"], finished=["b"])]


@grade("decodes must run oldest-admitted first: the newest one preempts itself", hint="preemption")
def test_oldest_decodes_first(impl):
    sched = paged(impl, 8, [("a", 1, 1), ("c", 1, 2)], num_kv_blocks=3, block_size=1)
    assert run(sched, 5) == [
        P({"a": 1, "c": 1}),
        P(decode=["a"], finished=["a"], preempted=["c"]),
        P({"c": 1}),
        P(decode=["c"]),
        P(decode=["c"], finished=["c"]),
    ]


@grade("no request may be admitted in a step that preempted", hint="preemption")
def test_no_admission_when_preempting(impl):
    sched = paged(impl, 8, [("a", 1, 1), ("c", 1, 1)], num_kv_blocks=3, block_size=1)
    assert run(sched, 2) == [P({"a": 1, "c": 1}), P(decode=["a"], finished=["a"], preempted=["c"])]
    assert sched.free_blocks == 3
    assert run(sched, 2) == [P({"c": 1}), P(decode=["c"], finished=["c"])]


@grade("a preempted request must go back to the front of the waiting queue", hint="preemption")
def test_preempted_to_front(impl):
    sched = paged(impl, 16, [("a", 2, 3), ("c", 2, 3), ("d", 1, 1)],
                  num_kv_blocks=6, block_size=1)
    assert run(sched, 7) == [
        P({"a": 2, "c": 2, "d": 1}),
        P(decode=["a", "c"], preempted=["d"]),
        P(decode=["a"], preempted=["c"]),
        P(decode=["a"], finished=["a"]),  # c (3 tokens to recompute) blocks d
        P({"c": 3, "d": 1}),
        P(decode=["c", "d"], finished=["d"]),
        P(decode=["c"], finished=["c"]),
    ]


@grade("several requests preempted in one step must keep their order at the front",
       hint="preemption")
def test_victims_keep_their_order(impl):
    sched = paged(impl, 3, [("a", 1, 1), ("b", 1, 1), ("e", 1, 1)],
                  num_kv_blocks=3, block_size=1)
    assert run(sched, 6) == [
        P({"a": 1, "b": 1, "e": 1}),
        P(decode=["a"], finished=["a"], preempted=["b", "e"]),
        P({"b": 1, "e": 1}),
        P(decode=["b"], finished=["b"], preempted=["e"]),  # b was admitted first: b decodes
        P({"e": 1}),
        P(decode=["e"], finished=["e"]),
    ]


@grade("a preempted request must free all its blocks", hint="preemption")
def test_preempted_frees_blocks(impl):
    sched = paged(impl, 8, [("a", 1, 2), ("c", 2, 1)], num_kv_blocks=3, block_size=1)
    assert run(sched, 2) == [P({"a": 1, "c": 2}), P(decode=["a"], preempted=["c"])]
    assert sched.free_blocks == 1  # c's two blocks came back; a's second token took one


@grade("an incomplete prefill must be the first victim", hint="preemption")
def test_incomplete_prefill_first_victim(impl):
    sched = paged(impl, 3, [("b", 2, 1), ("c", 2, 1)], num_kv_blocks=2, block_size=2,
                  chunked_prefill=True)
    assert run(sched, 2) == [P({"b": 2, "c": 1}),
                             P(decode=["b"], finished=["b"], preempted=["c"])]


@grade("a recompute must be prefilled in chunks when chunked prefill is on", hint="preemption")
def test_recompute_in_chunks(impl):
    sched = paged(impl, 2, [("a", 1, 3), ("b", 1, 3)], num_kv_blocks=5, block_size=1,
                  chunked_prefill=True)
    assert run(sched, 5) == [
        P({"a": 1, "b": 1}),
        P(decode=["a", "b"]),
        P(decode=["a"], preempted=["b"]),
        P({"b": 1}, decode=["a"], finished=["a"]),  # 1 of b's 2 tokens to recompute
        P({"b": 1}),
    ]


@grade("a re-admitted request must recompute its prompt plus the tokens it generated",
       hint="preemption")
def test_recompute_includes_generated(impl):
    sched = paged(impl, 3, [("a", 1, 2), ("d", 1, 2)], num_kv_blocks=5, block_size=1)
    assert run(sched, 5) == [
        P({"a": 1, "d": 1}),
        P(decode=["a", "d"]),
        P(decode=["a"], finished=["a"], preempted=["d"]),
        P({"d": 2}),  # its prompt plus the one token it generated; it needs one more
        P(decode=["d"], finished=["d"]),
    ]


@grade("a request preempted in the middle of its prefill must restart it from zero",
       hint="preemption")
def test_mid_prefill_victim_restarts(impl):
    sched = paged(impl, 3, [("b", 2, 1), ("c", 2, 1)], num_kv_blocks=2, block_size=2,
                  chunked_prefill=True)
    assert run(sched, 4) == [
        P({"b": 2, "c": 1}),
        P(decode=["b"], finished=["b"], preempted=["c"]),
        P({"c": 2}),
        P(decode=["c"], finished=["c"]),
    ]


# ---- bad input ---------------------------------------------------------------------------------

BAD_SCHEDULERS = [
    ("num_kv_blocks 0", {"num_kv_blocks": 0}),
    ("block_size 0", {"num_kv_blocks": 4, "block_size": 0}),
]


@pytest.mark.parametrize(
    "kwargs",
    [pytest.param(k, id=what, marks=grade(f"Scheduler with {what} must raise ValueError",
                                          hint="errors"))
     for what, k in BAD_SCHEDULERS])
def test_bad_scheduler(impl, kwargs):
    with pytest.raises(ValueError) as info:
        impl.Scheduler(8, **kwargs)
    assert str(info.value), "the ValueError must say what is wrong"


@grade("a request needing more blocks at its end than exist must raise ValueError", hint="errors")
def test_request_larger_than_the_cache(impl):
    sched = impl.Scheduler(16, num_kv_blocks=2, block_size=4)
    with pytest.raises(ValueError):
        sched.add_request("a", 5, 4)  # 9 tokens need 3 blocks
    sched.add_request("b", 5, 3)  # 8 tokens fit exactly


@grade("without chunked prefill, a request whose recompute could exceed the budget must "
       "raise ValueError", hint="errors")
def test_recompute_larger_than_the_budget(impl):
    sched = impl.Scheduler(8, num_kv_blocks=100, block_size=1)
    with pytest.raises(ValueError):
        sched.add_request("a", 5, 5)  # a recompute of 5 + 4 tokens
    sched.add_request("b", 5, 4)
    impl.Scheduler(8, num_kv_blocks=100, block_size=1, chunked_prefill=True).add_request(
        "a", 5, 5)


# ---- random add/step sequences -----------------------------------------------------------------

LEVEL3 = configs(chunked=None, blocks=True)


@grade("random runs with few blocks: free_blocks must match the tokens cached", hint="blocks",
       timeout=20)
def test_random_blocks(impl):
    run_machine(impl, LEVEL3, {"blocks"})


@grade("random runs with preemption: budget, FCFS, lifecycle and completion must hold",
       hint="preemption", timeout=20)
def test_random_invariants(impl):
    run_machine(impl, LEVEL3, ALL_CHECKS - {"oracle"})


@grade("random runs with preemption: every plan must be the one the rules determine",
       hint="preemption", timeout=20)
def test_random_exact(impl):
    run_machine(impl, LEVEL3, {"oracle"}, max_examples=40)
