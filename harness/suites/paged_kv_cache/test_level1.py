"""Level 1: block tables over one free queue, all-or-nothing calls, bad input."""

import pytest

from harness.marks import level

from .helpers import drain

grade = level(1, "paging")


@grade("new blocks must come from the front of the free queue in order", timeout=5)
def test_blocks_come_from_the_front(impl):
    bm = impl.BlockManager(num_blocks=6, block_size=4)
    assert bm.allocate("a", range(6)) == 0
    assert bm.allocate("b", [9]) == 0
    assert bm.block_table("a") == [0, 1]
    assert bm.block_table("b") == [2]
    assert bm.num_free_blocks == 3


@grade("every method must take its arguments by the names the API gives", timeout=5)
def test_arguments_by_name(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=2, prefix_caching=False)
    assert bm.can_allocate(token_ids=[1, 2, 3], cache_salt=None)
    assert bm.allocate(seq_id="a", token_ids=[1, 2, 3], cache_salt=None) == 0
    assert bm.can_append(seq_id="a") and bm.append_token(seq_id="a", token_id=4) is None
    assert bm.block_table(seq_id="a") == [0, 1] and bm.num_tokens(seq_id="a") == 4
    assert bm.ref_count(block_id=0) == 1
    bm.free(seq_id="a")
    assert bm.num_free_blocks == 4


@grade("a sequence of n tokens must hold ceil(n / block_size) blocks", timeout=5)
def test_block_count_is_ceil(impl):
    for n in range(1, 13):
        bm = impl.BlockManager(num_blocks=4, block_size=3)
        bm.allocate("s", list(range(n)))
        assert bm.block_table("s") == list(range(-(-n // 3)))
        assert bm.num_tokens("s") == n
        assert bm.num_free_blocks == 4 - (-(-n // 3))


@grade("append_token must take a new block only when the last one is full", timeout=5)
def test_append_takes_a_block_when_full(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=3)
    bm.allocate("s", [5])
    tables = []
    for t in range(7):  # 2 .. 8 tokens: blocks at 4 and 7 tokens
        assert bm.append_token("s", t) is None
        tables.append(bm.block_table("s"))
    assert tables == [[0], [0], [0, 1], [0, 1], [0, 1], [0, 1, 2], [0, 1, 2]]
    assert bm.num_tokens("s") == 8


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


@grade("a freed id must be unknown until it is allocated again", "refcount", timeout=5)
def test_freed_id_is_unknown_then_reusable(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    bm.allocate("s", [1, 2, 3])
    bm.free("s")
    assert bm.num_free_blocks == 4
    for call in (bm.block_table, bm.num_tokens, bm.can_append, bm.free):
        with pytest.raises(KeyError):
            call("s")
    assert bm.num_free_blocks == 4
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


@grade("without prefix caching allocate must return 0 and share nothing", timeout=5)
def test_no_caching_shares_nothing(impl):
    bm = impl.BlockManager(num_blocks=6, block_size=2)
    assert bm.allocate("a", [1, 2, 3, 4, 5]) == 0
    assert bm.allocate("b", [1, 2, 3, 4, 5]) == 0
    assert bm.block_table("b") == [3, 4, 5]


@grade("a failed allocate must raise OutOfBlocks and change nothing", "atomicity", timeout=5)
def test_allocate_out_of_blocks(impl):
    bm = impl.BlockManager(num_blocks=3, block_size=4)
    bm.allocate("a", [1])
    assert bm.can_allocate(list(range(8)))
    assert not bm.can_allocate(list(range(9)))
    with pytest.raises(impl.OutOfBlocks) as info:
        bm.allocate("b", list(range(9)))
    assert not isinstance(info.value, ValueError)
    assert str(info.value)
    assert bm.num_free_blocks == 2
    with pytest.raises(KeyError):
        bm.block_table("b")
    bm.allocate("b", list(range(8)))  # what fits still fits, from the same blocks
    assert bm.block_table("b") == [1, 2]
    assert not bm.can_allocate([1])


@grade("a failed append must raise OutOfBlocks and change nothing", "atomicity", timeout=5)
def test_append_out_of_blocks(impl):
    bm = impl.BlockManager(num_blocks=2, block_size=2)
    bm.allocate("a", [1, 2])
    bm.allocate("b", [3])
    assert bm.can_append("b")  # block 1 has room: no block needed
    assert not bm.can_append("a")
    with pytest.raises(impl.OutOfBlocks):
        bm.append_token("a", 5)
    assert (bm.num_tokens("a"), bm.block_table("a")) == (2, [0])
    assert bm.append_token("b", 4) is None
    assert bm.block_table("b") == [1]
    bm.free("b")
    assert bm.can_append("a")
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
    with pytest.raises(ValueError) as info:
        make(impl)
    assert str(info.value)


BAD_PROMPTS = [
    pytest.param([], id="empty"),
    pytest.param([1, "2"], id="a string token"),
    pytest.param([1, 2.0], id="a float token"),
    pytest.param([True], id="a bool token"),
    pytest.param([1, None], id="a None token"),
]


@grade("allocate must reject a bad prompt with ValueError and change nothing", "errors",
       timeout=5)
@pytest.mark.parametrize("tokens", BAD_PROMPTS)
def test_allocate_rejects_bad_prompt(impl, tokens):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    with pytest.raises(ValueError) as info:
        bm.allocate("s", tokens)
    assert str(info.value)
    assert bm.num_free_blocks == 4
    with pytest.raises(KeyError):
        bm.num_tokens("s")


@grade("can_allocate must validate its prompt like allocate", "errors", timeout=5)
@pytest.mark.parametrize("tokens", BAD_PROMPTS)
def test_can_allocate_rejects_bad_prompt(impl, tokens):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    with pytest.raises(ValueError):
        bm.can_allocate(tokens)


@grade("allocate of a live id must raise ValueError and change nothing", "errors", timeout=5)
def test_allocate_live_id(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    bm.allocate("s", [1, 2, 3])
    with pytest.raises(ValueError):
        bm.allocate("s", [4])
    assert (bm.block_table("s"), bm.num_tokens("s"), bm.num_free_blocks) == ([0, 1], 3, 2)


@grade("an unknown sequence id must raise KeyError", "errors", timeout=5)
@pytest.mark.parametrize("call", [
    pytest.param(lambda bm: bm.append_token("x", 1), id="append_token"),
    pytest.param(lambda bm: bm.can_append("x"), id="can_append"),
    pytest.param(lambda bm: bm.free("x"), id="free"),
    pytest.param(lambda bm: bm.block_table("x"), id="block_table"),
    pytest.param(lambda bm: bm.num_tokens("x"), id="num_tokens"),
])
def test_unknown_id(impl, call):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    bm.allocate("s", [1, 2, 3])
    with pytest.raises(KeyError):
        call(bm)
    assert (bm.block_table("s"), bm.num_free_blocks) == ([0, 1], 2)
