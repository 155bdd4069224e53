"""Level 2: fork shares blocks by reference; a write into a shared partial block copies it."""

import pytest

from harness.marks import level

from .helpers import attempt, drain, run_machine

grade = level(2, "refcount")


def forked(impl):
    """The prompt's example: p = [1..5] in [0, 1] of 8 blocks of 4, forked into c."""
    bm = impl.BlockManager(num_blocks=8, block_size=4)
    bm.allocate("p", [1, 2, 3, 4, 5])
    bm.fork("p", "c")
    return bm


@grade("fork and ref_count must take their arguments by the names the API gives", timeout=5)
def test_level2_arguments_by_name(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    bm.allocate("a", [1, 2, 3])
    bm.fork(parent_id="a", child_id="b")
    assert bm.ref_count(block_id=0) == 2 and bm.block_table("b") == [0, 1]


@grade("fork must give the child the parent's tokens and block ids", timeout=5)
def test_fork_copies_tokens_and_table(impl):
    bm = forked(impl)
    assert bm.block_table("c") == [0, 1]
    assert bm.num_tokens("c") == 5


@grade("fork must add one reference to each shared block", timeout=5)
def test_fork_adds_references(impl):
    bm = forked(impl)
    assert (bm.ref_count(0), bm.ref_count(1), bm.ref_count(2)) == (2, 2, 0)


@grade("fork must take no block", timeout=5)
def test_fork_takes_no_block(impl):
    bm = forked(impl)
    assert bm.num_free_blocks == 6


def forked_on_a_full_block(impl):
    """p = [1, 2] fills block 0 of blocks of 2; c, its fork, appends 3 into a new block."""
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    bm.allocate("p", [1, 2])
    bm.fork("p", "c")
    bm.append_token("c", 3)
    return bm


@grade("a forked child must have tokens of its own", timeout=5)
def test_fork_copies_the_tokens(impl):
    bm = forked_on_a_full_block(impl)
    assert (bm.num_tokens("p"), bm.num_tokens("c")) == (2, 3)


@grade("a forked child must have a block table of its own", timeout=5)
def test_fork_copies_the_table(impl):
    bm = forked_on_a_full_block(impl)
    assert (bm.block_table("p"), bm.block_table("c")) == ([0], [0, 1])


@grade("ref_count must count the live sequences holding a block", timeout=5)
def test_ref_count_counts_holders(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    assert [bm.ref_count(b) for b in range(4)] == [0, 0, 0, 0]
    bm.allocate("p", [1, 2, 3])
    assert [bm.ref_count(b) for b in range(4)] == [1, 1, 0, 0]
    bm.fork("p", "c")
    bm.fork("c", "g")
    assert [bm.ref_count(b) for b in range(4)] == [3, 3, 0, 0]
    bm.free("c")
    assert [bm.ref_count(b) for b in range(4)] == [2, 2, 0, 0]


@grade("free must remove one reference from each of its blocks", timeout=5)
def test_free_removes_one_reference(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    bm.allocate("p", [1, 2, 3])
    bm.fork("p", "c")
    bm.fork("p", "g")
    bm.free("g")
    assert (bm.ref_count(0), bm.ref_count(1)) == (2, 2)


@grade("free must queue only the blocks that reach 0", timeout=5)
def test_free_queues_only_unheld_blocks(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    bm.allocate("p", [1, 2, 3])
    bm.fork("p", "c")
    bm.free("c")
    assert bm.num_free_blocks == 2
    assert drain(impl, bm) == [2, 3]


@grade("appending to a shared partial block must copy it and answer (src, dst)",
       "copy_on_write", timeout=5)
def test_copy_on_write(impl):
    bm = forked(impl)
    assert bm.append_token("c", 6) == (1, 2)


@grade("a copy-on-write must put the new block in place of the shared one", "copy_on_write",
       timeout=5)
def test_copy_replaces_the_shared_block(impl):
    bm = forked(impl)
    bm.append_token("c", 6)
    assert (bm.block_table("c"), bm.block_table("p")) == ([0, 2], [0, 1])
    assert bm.num_free_blocks == 5


@grade("a copy-on-write must drop one reference from the shared block", "copy_on_write",
       timeout=5)
def test_copy_drops_a_reference(impl):
    bm = forked(impl)
    bm.append_token("c", 6)
    assert (bm.ref_count(1), bm.ref_count(2)) == (1, 1)


@grade("with k holders the first k - 1 appends copy and the last writes in place",
       "copy_on_write", timeout=5)
def test_k_holders(impl):
    bm = impl.BlockManager(num_blocks=8, block_size=4)
    bm.allocate("p", [1, 2, 3, 4, 5])
    bm.fork("p", "c1")
    bm.fork("p", "c2")
    assert bm.ref_count(1) == 3
    assert bm.append_token("c1", 6) == (1, 2)
    assert bm.append_token("c2", 6) == (1, 3)
    assert bm.append_token("p", 6) is None
    assert [bm.block_table(s) for s in ("p", "c1", "c2")] == [[0, 1], [0, 2], [0, 3]]
    assert [bm.ref_count(b) for b in range(4)] == [3, 1, 1, 1]


@grade("a full shared last block must start a new block without a copy", "copy_on_write",
       timeout=5)
def test_full_shared_block_is_not_copied(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=4)
    bm.allocate("p", [1, 2, 3, 4])
    bm.fork("p", "c")
    assert bm.append_token("c", 5) is None
    assert bm.block_table("c") == [0, 1]
    assert (bm.ref_count(0), bm.ref_count(1)) == (2, 1)


def forked_with_no_free_block(impl):
    """p = [1..5] fills both blocks of the pool; c, its fork, shares the partial block 1."""
    bm = impl.BlockManager(num_blocks=2, block_size=4)
    bm.allocate("p", [1, 2, 3, 4, 5])
    bm.fork("p", "c")
    return bm


@grade("can_append must agree with append_token when a copy-on-write needs a block",
       "atomicity", timeout=5)
def test_can_append_counts_a_copy(impl):
    bm = forked_with_no_free_block(impl)
    assert not bm.can_append("c")
    bm.free("p")
    assert bm.can_append("c")  # c holds block 1 alone now: in place
    assert bm.append_token("c", 6) is None


@grade("a failed copy-on-write must change nothing", "atomicity", timeout=5)
def test_failed_copy_changes_nothing(impl):
    bm = forked_with_no_free_block(impl)
    attempt(lambda: bm.append_token("c", 6))
    assert (bm.block_table("c"), bm.num_tokens("c"), bm.ref_count(1)) == ([0, 1], 5, 2)
    assert bm.num_free_blocks == 0


@grade("forks, copies and frees must leave exactly these tables, counts and queue", timeout=5)
def test_golden_fork_free(impl):
    # block_size 2, 8 blocks. p=[1,2,3] -> [0,1]; q, r forks. q+4 copies (1,2); r+4 copies
    # (1,3); p+4 in place; p+5 takes 4. free q: 2 -> 0 queued, 0 keeps 2 holders; queue
    # 5,6,7,2. free p (reversed 4,1,0): 4 and 1 queued; queue 5,6,7,2,4,1. fork r -> s; s+9
    # on a full block takes 5 with no copy. free r: 3 and 0 keep s. queue 6,7,2,4,1.
    bm = impl.BlockManager(num_blocks=8, block_size=2)
    bm.allocate("p", [1, 2, 3])
    bm.fork("p", "q")
    bm.fork("q", "r")
    assert bm.append_token("q", 4) == (1, 2)
    assert bm.append_token("r", 4) == (1, 3)
    assert bm.append_token("p", 4) is None
    assert bm.append_token("p", 5) is None
    assert bm.block_table("p") == [0, 1, 4]
    bm.free("q")
    assert (bm.ref_count(0), bm.ref_count(2)) == (2, 0)
    bm.free("p")
    bm.fork("r", "s")
    assert bm.append_token("s", 9) is None
    assert bm.block_table("s") == [0, 3, 5]
    bm.free("r")
    assert [bm.ref_count(b) for b in range(8)] == [1, 0, 0, 1, 0, 1, 0, 0]
    assert drain(impl, bm) == [6, 7, 2, 4, 1]


def freed_twice(impl):
    """p = [1, 2, 3] and its fork c; c is freed, then freed again."""
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    bm.allocate("p", [1, 2, 3])
    bm.fork("p", "c")
    bm.free("c")
    return bm


@grade("freeing a freed sequence must raise KeyError", timeout=5)
def test_double_free_raises(impl):
    bm = freed_twice(impl)
    with pytest.raises(KeyError):
        bm.free("c")
    bm.free("p")
    with pytest.raises(KeyError):
        bm.free("p")


@grade("freeing a freed sequence must change no reference", timeout=5)
def test_double_free_changes_nothing(impl):
    bm = freed_twice(impl)
    attempt(lambda: bm.free("c"))
    assert [bm.ref_count(b) for b in range(4)] == [1, 1, 0, 0]
    bm.free("p")
    attempt(lambda: bm.free("p"))
    assert [bm.ref_count(b) for b in range(4)] == [0, 0, 0, 0]
    assert bm.num_free_blocks == 4


@grade("the paged store must read back every sequence through its table", "copy_on_write",
       timeout=30)
def test_state_machine_without_caching(impl):
    run_machine(impl, caching=False, examples=60, steps=30)


def parent_and_child(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    bm.allocate("p", [1, 2, 3])
    bm.allocate("c", [4])
    return bm


@grade("fork of a live child id must raise ValueError", "errors", timeout=5)
@pytest.mark.parametrize("child", ["c", "p"])
def test_fork_live_child(impl, child):
    bm = parent_and_child(impl)
    with pytest.raises(ValueError):
        bm.fork("p", child)


@grade("fork of an unknown parent must raise KeyError", "errors", timeout=5)
def test_fork_unknown_parent(impl):
    bm = parent_and_child(impl)
    with pytest.raises(KeyError):
        bm.fork("x", "y")


@grade("a rejected fork must change nothing", "atomicity", timeout=5)
@pytest.mark.parametrize("parent, child", [
    pytest.param("p", "c", id="live child"),
    pytest.param("p", "p", id="its own parent"),
    pytest.param("x", "y", id="unknown parent"),
])
def test_rejected_fork_changes_nothing(impl, parent, child):
    bm = parent_and_child(impl)
    attempt(lambda: bm.fork(parent, child))
    assert [bm.ref_count(b) for b in range(4)] == [1, 1, 1, 0]
    assert (bm.block_table("p"), bm.block_table("c"), bm.num_free_blocks) == ([0, 1], [2], 1)
    with pytest.raises(KeyError):
        bm.block_table("y")


@grade("ref_count of a block id out of range must raise ValueError", "errors", timeout=5)
@pytest.mark.parametrize("block", [-1, 4, 100])
def test_ref_count_out_of_range(impl, block):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    with pytest.raises(ValueError):
        bm.ref_count(block)


BAD_TOKENS = ["1", 1.0, True, None]


@grade("append_token must reject a bad token with ValueError", "errors", timeout=5)
@pytest.mark.parametrize("token", BAD_TOKENS)
def test_append_rejects_bad_token(impl, token):
    bm = forked(impl)
    with pytest.raises(ValueError):
        bm.append_token("c", token)


@grade("a rejected token must change nothing", "atomicity", timeout=5)
@pytest.mark.parametrize("token", BAD_TOKENS)
def test_rejected_token_changes_nothing(impl, token):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    bm.allocate("p", [1, 2, 3])
    bm.fork("p", "c")
    attempt(lambda: bm.append_token("c", token))
    assert (bm.block_table("c"), bm.num_tokens("c"), bm.ref_count(1)) == ([0, 1], 3, 2)
    assert bm.num_free_blocks == 2
