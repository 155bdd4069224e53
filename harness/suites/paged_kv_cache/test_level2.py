"""Level 2: fork shares blocks by reference; a write into a shared partial block copies it."""

import pytest

from harness.marks import level

from .helpers import drain, run_machine

grade = level(2, "refcount")


@grade("fork must share the parent's blocks, add one reference each and take no block",
       timeout=5)
def test_fork_shares_blocks(impl):
    bm = impl.BlockManager(num_blocks=8, block_size=4)
    bm.allocate("p", [1, 2, 3, 4, 5])
    bm.fork("p", "c")
    assert bm.block_table("c") == [0, 1]
    assert bm.num_tokens("c") == 5
    assert (bm.ref_count(0), bm.ref_count(1), bm.ref_count(2)) == (2, 2, 0)
    assert bm.num_free_blocks == 6
    table = bm.block_table("c")
    table.append(7)
    assert bm.block_table("p") == [0, 1]


@grade("ref_count must count the live sequences holding a block", timeout=5)
def test_ref_count_counts_holders(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    assert [bm.ref_count(b) for b in range(4)] == [0, 0, 0, 0]
    bm.allocate("p", [1, 2, 3])
    bm.fork("p", "c")
    bm.fork("c", "g")
    assert [bm.ref_count(b) for b in range(4)] == [3, 3, 0, 0]
    bm.free("c")
    assert [bm.ref_count(b) for b in range(4)] == [2, 2, 0, 0]
    assert bm.num_free_blocks == 2


@grade("appending to a shared partial block must copy it and answer (src, dst)",
       "copy_on_write", timeout=5)
def test_copy_on_write(impl):
    bm = impl.BlockManager(num_blocks=8, block_size=4)
    bm.allocate("p", [1, 2, 3, 4, 5])
    bm.fork("p", "c")
    src, dst = bm.append_token("c", 6)
    assert (src, dst) == (1, 2)
    assert bm.block_table("c") == [0, 2]
    assert (bm.ref_count(1), bm.ref_count(2)) == (1, 1)
    assert bm.append_token("p", 7) is None  # block 1 is p's alone now: written in place
    assert bm.block_table("p") == [0, 1]
    assert bm.num_free_blocks == 5


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


@grade("a copy-on-write with no free block must raise OutOfBlocks and change nothing",
       "atomicity", timeout=5)
def test_copy_on_write_out_of_blocks(impl):
    bm = impl.BlockManager(num_blocks=2, block_size=4)
    bm.allocate("p", [1, 2, 3, 4, 5])
    bm.fork("p", "c")
    assert not bm.can_append("c")
    with pytest.raises(impl.OutOfBlocks):
        bm.append_token("c", 6)
    assert (bm.block_table("c"), bm.num_tokens("c"), bm.ref_count(1)) == ([0, 1], 5, 2)
    bm.free("p")
    assert bm.num_free_blocks == 0
    assert bm.can_append("c")  # c holds block 1 alone now: in place
    assert bm.append_token("c", 6) is None


@grade("free must queue only the blocks that reach 0, last block first", timeout=5)
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


@grade("freeing a freed sequence must raise KeyError and change no reference", timeout=5)
def test_double_free(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    bm.allocate("p", [1, 2, 3])
    bm.fork("p", "c")
    bm.free("c")
    with pytest.raises(KeyError):
        bm.free("c")
    assert [bm.ref_count(b) for b in range(4)] == [1, 1, 0, 0]
    bm.free("p")
    with pytest.raises(KeyError):
        bm.free("p")
    assert [bm.ref_count(b) for b in range(4)] == [0, 0, 0, 0]
    assert bm.num_free_blocks == 4


@grade("the paged store must read back every sequence through its table", "copy_on_write",
       timeout=30)
def test_state_machine_without_caching(impl):
    run_machine(impl, caching=False, examples=60, steps=30)


@grade("fork of a live child id must raise ValueError and change nothing", "errors", timeout=5)
@pytest.mark.parametrize("child", ["c", "p"])
def test_fork_live_child(impl, child):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    bm.allocate("p", [1, 2, 3])
    bm.allocate("c", [4])
    with pytest.raises(ValueError):
        bm.fork("p", child)
    assert [bm.ref_count(b) for b in range(4)] == [1, 1, 1, 0]
    assert bm.block_table("c") == [2]


@grade("fork of an unknown parent must raise KeyError", "errors", timeout=5)
def test_fork_unknown_parent(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    with pytest.raises(KeyError):
        bm.fork("x", "c")
    with pytest.raises(KeyError):
        bm.block_table("c")


@grade("ref_count of a block id out of range must raise ValueError", "errors", timeout=5)
@pytest.mark.parametrize("block", [-1, 4, 100])
def test_ref_count_out_of_range(impl, block):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    with pytest.raises(ValueError):
        bm.ref_count(block)


@grade("append_token must reject a bad token with ValueError and change nothing", "errors",
       timeout=5)
@pytest.mark.parametrize("token", ["1", 1.0, True, None])
def test_append_rejects_bad_token(impl, token):
    bm = impl.BlockManager(num_blocks=4, block_size=2)
    bm.allocate("p", [1, 2, 3])
    bm.fork("p", "c")
    with pytest.raises(ValueError):
        bm.append_token("c", token)
    assert (bm.block_table("c"), bm.num_tokens("c"), bm.ref_count(1)) == ([0, 1], 3, 2)
    assert bm.num_free_blocks == 2
