"""Level 1: block tables over one free queue, all-or-nothing calls, bad input."""

import pytest

from harness.marks import level

from .helpers import attempt, drain

grade = level(1, "paging")


@grade("new blocks must come from the front of the free queue in order", timeout=5)
def test_blocks_come_from_the_front(impl):
    bm = impl.BlockManager(num_blocks=6, block_size=4)
    bm.allocate("a", range(6))
    bm.allocate("b", [9])
    assert bm.block_table("a") == [0, 1]
    assert bm.block_table("b") == [2]
    assert bm.num_free_blocks == 3


@grade("every method must take its arguments by the names the API gives", timeout=5)
def test_arguments_by_name(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    assert bm.can_allocate(token_ids=[1, 2, 3])
    bm.allocate(seq_id="a", token_ids=[1, 2, 3])
    assert bm.can_append(seq_id="a")
    bm.append_token(seq_id="a", token_id=4)
    assert bm.block_table(seq_id="a") == [0, 1] and bm.num_tokens(seq_id="a") == 4
    bm.free(seq_id="a")
    assert bm.num_free_blocks == 4


@grade("a sequence of n tokens must hold ceil(n / block_size) blocks", timeout=5)
def test_block_count_is_ceil(impl):
    for n in range(1, 13):
        bm = impl.BlockManager(num_blocks=4, block_size=3)
        bm.allocate("s", list(range(n)))
        assert bm.block_table("s") == list(range(-(-n // 3)))
        assert bm.num_free_blocks == 4 - (-(-n // 3))


@grade("append_token must take a new block only when the last one is full", timeout=5)
def test_append_takes_a_block_when_full(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=3)
    bm.allocate("s", [5])
    tables = []
    for t in range(7):  # 2 .. 8 tokens: blocks at 4 and 7 tokens
        bm.append_token("s", t)
        tables.append(bm.block_table("s"))
    assert tables == [[0], [0], [0, 1], [0, 1], [0, 1], [0, 1, 2], [0, 1, 2]]


@grade("append_token must return None when no block is shared", timeout=5)
def test_append_returns_none(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=3)
    bm.allocate("s", [5])
    assert [bm.append_token("s", t) for t in range(7)] == [None] * 7


@grade("num_tokens must count the prompt and every appended token", timeout=5)
def test_num_tokens_counts_every_token(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=3)
    bm.allocate("s", [5, 6])
    counts = [bm.num_tokens("s")]
    for t in range(6):
        bm.append_token("s", t)
        counts.append(bm.num_tokens("s"))
    assert counts == [2, 3, 4, 5, 6, 7, 8]


@grade("free must return blocks to the back of the queue, last block first", timeout=5)
def test_free_returns_blocks_in_reverse_order(impl):
    bm = impl.BlockManager(num_blocks=6, block_size=4)
    bm.allocate("a", range(6))
    bm.allocate("b", [9])
    for t in range(5):
        bm.append_token("b", t)
    assert bm.block_table("b") == [2, 3]
    bm.free("a")
    assert bm.num_free_blocks == 4
    assert drain(impl, bm) == [4, 5, 1, 0]


@grade("interleaved allocate, append and free must give these exact tables", timeout=5)
def test_golden_interleaving(impl):
    # block_size 2, 6 blocks. a=[1,2,3] -> [0,1]; b=[4] -> [2]; a+5 fills block 1 in place;
    # a+6 starts block 3; free b -> queue 4,5,2; c=[7,8,9] -> [4,5]; c+10 in place; c+11
    # takes 2; free a -> queue 3,1,0 (reversed [0,1,3]); d of 5 tokens -> [3,1,0].
    bm = impl.BlockManager(num_blocks=6, block_size=2)
    bm.allocate("a", [1, 2, 3])
    bm.allocate("b", [4])
    bm.append_token("a", 5)
    bm.append_token("a", 6)
    assert bm.block_table("a") == [0, 1, 3]
    bm.free("b")
    bm.allocate("c", [7, 8, 9])
    bm.append_token("c", 10)
    bm.append_token("c", 11)
    assert bm.block_table("c") == [4, 5, 2]
    bm.free("a")
    bm.allocate("d", [1, 2, 3, 4, 5])
    assert bm.block_table("d") == [3, 1, 0]
    assert bm.num_free_blocks == 0


@grade("a freed id must be unknown", "refcount", timeout=5)
def test_freed_id_is_unknown(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    bm.allocate("s", [1, 2, 3])
    bm.free("s")
    assert bm.num_free_blocks == 4
    for call in (bm.block_table, bm.num_tokens, bm.can_append, bm.free):
        with pytest.raises(KeyError):
            call("s")
    assert bm.num_free_blocks == 4


@grade("a freed id must be accepted by allocate again", "refcount", timeout=5)
def test_freed_id_is_reusable(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    bm.allocate("s", [1, 2, 3])
    bm.free("s")
    bm.allocate("s", [7])
    assert bm.block_table("s") == [2]  # the queue is 2, 3, 1, 0 after the free


@grade("block_table must return a snapshot the caller may change", timeout=5)
def test_block_table_is_a_snapshot(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    bm.allocate("s", [1, 2, 3])
    table = bm.block_table("s")
    table.append(99)
    table[0] = 42
    assert bm.block_table("s") == [0, 1]
    assert bm.block_table("s") is not bm.block_table("s")


@grade("allocate must keep its own copy of the prompt", timeout=5)
def test_allocate_copies_the_prompt(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    prompt = [1, 2, 3]
    bm.allocate("s", prompt)
    prompt.append(4)
    assert bm.num_tokens("s") == 3


@grade("allocate must return 0 without prefix caching", timeout=5)
def test_no_caching_returns_zero(impl):
    bm = impl.BlockManager(num_blocks=6, block_size=2)
    assert bm.allocate("a", [1, 2, 3, 4, 5]) == 0
    assert bm.allocate("b", [1, 2, 3, 4, 5]) == 0


@grade("without prefix caching a repeated prompt must take new blocks", timeout=5)
def test_no_caching_shares_nothing(impl):
    bm = impl.BlockManager(num_blocks=6, block_size=2)
    bm.allocate("a", [1, 2, 3, 4, 5])
    bm.allocate("b", [1, 2, 3, 4, 5])
    assert bm.block_table("b") == [3, 4, 5]


def one_block_left(impl):
    """3 blocks of 4 tokens; "a" holds block 0, so a prompt of up to 8 tokens fits exactly."""
    bm = impl.BlockManager(num_blocks=3, block_size=4)
    bm.allocate("a", [1])
    return bm


@grade("can_allocate must answer False exactly when allocate would run out of blocks",
       "atomicity", timeout=5)
def test_can_allocate_agrees_with_allocate(impl):
    bm = one_block_left(impl)
    assert bm.can_allocate(list(range(8)))
    assert not bm.can_allocate(list(range(9)))
    bm.allocate("b", list(range(8)))
    assert not bm.can_allocate([1])


@grade("a failed allocate must raise OutOfBlocks, not a ValueError", "atomicity", timeout=5)
def test_allocate_raises_out_of_blocks(impl):
    bm = one_block_left(impl)
    with pytest.raises(impl.OutOfBlocks) as info:
        bm.allocate("b", list(range(9)))
    assert not isinstance(info.value, ValueError)


@grade("OutOfBlocks must carry a message", "atomicity", timeout=5)
def test_out_of_blocks_has_a_message(impl):
    bm = one_block_left(impl)
    with pytest.raises(impl.OutOfBlocks) as info:
        bm.allocate("b", list(range(9)))
    assert str(info.value)


@grade("a failed allocate must change nothing", "atomicity", timeout=5)
def test_failed_allocate_changes_nothing(impl):
    bm = one_block_left(impl)
    attempt(lambda: bm.allocate("b", list(range(9))))
    assert bm.num_free_blocks == 2
    with pytest.raises(KeyError):
        bm.block_table("b")
    bm.allocate("b", list(range(8)))  # what fits still fits, from the same blocks
    assert bm.block_table("b") == [1, 2]


@grade("can_allocate must leave the free queue as it was", "atomicity", timeout=5)
def test_can_allocate_changes_nothing(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    assert bm.can_allocate([1, 2, 3])
    assert not bm.can_allocate(list(range(9)))
    assert bm.num_free_blocks == 4
    bm.allocate("a", [1, 2, 3])
    assert bm.block_table("a") == [0, 1]


@grade("can_append must answer False exactly when append_token would run out of blocks",
       "atomicity", timeout=5)
def test_can_append_agrees_with_append(impl):
    bm = impl.BlockManager(num_blocks=2, block_size=2)
    bm.allocate("a", [1, 2])
    bm.allocate("b", [3])
    assert bm.can_append("b")  # block 1 has room: no block needed
    assert not bm.can_append("a")
    bm.append_token("b", 4)
    bm.free("b")
    assert bm.can_append("a")


@grade("a failed append must change nothing", "atomicity", timeout=5)
def test_failed_append_changes_nothing(impl):
    bm = impl.BlockManager(num_blocks=2, block_size=2)
    bm.allocate("a", [1, 2])
    bm.allocate("b", [3])
    attempt(lambda: bm.append_token("a", 5))
    assert (bm.num_tokens("a"), bm.block_table("a")) == (2, [0])
    bm.append_token("b", 4)
    assert bm.block_table("b") == [1]
    bm.free("b")
    bm.append_token("a", 5)
    assert bm.block_table("a") == [0, 1]


BAD_ARGS = [
    pytest.param(lambda impl: impl.BlockManager(0, 4), id="num_blocks 0"),
    pytest.param(lambda impl: impl.BlockManager(-1, 4), id="num_blocks -1"),
    pytest.param(lambda impl: impl.BlockManager(4, 0), id="block_size 0"),
]


@grade("sizes below 1 must raise ValueError", "errors", timeout=5)
@pytest.mark.parametrize("make", BAD_ARGS)
def test_bad_sizes(impl, make):
    with pytest.raises(ValueError):
        make(impl)


BAD_PROMPTS = [
    pytest.param([], id="empty"),
    pytest.param([1, "2"], id="a string token"),
    pytest.param([1, 2.0], id="a float token"),
    pytest.param([True], id="a bool token"),
    pytest.param([1, None], id="a None token"),
]


@grade("allocate must reject a bad prompt with ValueError", "errors", timeout=5)
@pytest.mark.parametrize("tokens", BAD_PROMPTS)
def test_allocate_rejects_bad_prompt(impl, tokens):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    with pytest.raises(ValueError):
        bm.allocate("s", tokens)


@grade("can_allocate must validate its prompt like allocate", "errors", timeout=5)
@pytest.mark.parametrize("tokens", BAD_PROMPTS)
def test_can_allocate_rejects_bad_prompt(impl, tokens):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    with pytest.raises(ValueError):
        bm.can_allocate(tokens)


@grade("can_allocate must reject a bad prompt even when no block is free", "errors",
       timeout=5)
@pytest.mark.parametrize("tokens", BAD_PROMPTS)
def test_can_allocate_validates_before_counting(impl, tokens):
    bm = impl.BlockManager(num_blocks=2, block_size=2)
    bm.allocate("s", [1, 2, 3])
    with pytest.raises(ValueError):
        bm.can_allocate(tokens)


@grade("allocate of a live id must raise ValueError", "errors", timeout=5)
def test_allocate_live_id(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    bm.allocate("s", [1, 2, 3])
    with pytest.raises(ValueError):
        bm.allocate("s", [4])


UNKNOWN_ID_CALLS = [
    pytest.param(lambda bm: bm.append_token("x", 1), id="append_token"),
    pytest.param(lambda bm: bm.can_append("x"), id="can_append"),
    pytest.param(lambda bm: bm.free("x"), id="free"),
    pytest.param(lambda bm: bm.block_table("x"), id="block_table"),
    pytest.param(lambda bm: bm.num_tokens("x"), id="num_tokens"),
]


@grade("an unknown sequence id must raise KeyError", "errors", timeout=5)
@pytest.mark.parametrize("call", UNKNOWN_ID_CALLS)
def test_unknown_id(impl, call):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    bm.allocate("s", [1, 2, 3])
    with pytest.raises(KeyError):
        call(bm)


def allocate_twice(impl) -> None:
    bm = impl.BlockManager(4, 2)
    bm.allocate("s", [1])
    bm.allocate("s", [2])


@grade("a ValueError must say what is wrong", "errors", timeout=5)
@pytest.mark.parametrize("call", [
    *BAD_ARGS,
    pytest.param(lambda impl: impl.BlockManager(4, 2).allocate("s", []), id="empty prompt"),
    pytest.param(lambda impl: impl.BlockManager(4, 2).allocate("s", ["1"]), id="string token"),
    pytest.param(lambda impl: impl.BlockManager(4, 2).allocate("s", [1.0]), id="float token"),
    pytest.param(lambda impl: impl.BlockManager(4, 2).allocate("s", [True]), id="bool token"),
    pytest.param(allocate_twice, id="live id"),
])
def test_value_errors_have_a_message(impl, call):
    with pytest.raises(ValueError) as info:
        call(impl)
    assert str(info.value)


@grade("a rejected call must change nothing", "atomicity", timeout=5)
@pytest.mark.parametrize("call", [
    *[pytest.param(lambda bm, t=p.values[0]: bm.allocate("t", t), id=f"allocate {p.id}")
      for p in BAD_PROMPTS],
    pytest.param(lambda bm: bm.allocate("s", [4]), id="allocate of a live id"),
    *UNKNOWN_ID_CALLS,
])
def test_rejected_call_changes_nothing(impl, call):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    bm.allocate("s", [1, 2, 3])
    attempt(lambda: call(bm))
    assert (bm.block_table("s"), bm.num_tokens("s"), bm.num_free_blocks) == ([0, 1], 3, 2)
    for seq in ("t", "x"):
        with pytest.raises(KeyError):
            bm.num_tokens(seq)
    bm.allocate("t", [5])  # the queue is as it was
    assert bm.block_table("t") == [2]
