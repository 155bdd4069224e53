"""Level 3: prefix caching. Full blocks keyed by salt and whole prefix, reused free blocks,
eviction in queue order."""

import pytest

from harness.marks import level

from .helpers import drain, run_machine

grade = level(3, "prefix_hit")


def caching(num_blocks: int, block_size: int, impl):
    return impl.BlockManager(num_blocks, block_size, prefix_caching=True)


@grade("prefix_caching and cache_salt must be taken by the names the API gives", timeout=5)
def test_level3_arguments_by_name(impl):
    bm = impl.BlockManager(num_blocks=4, block_size=2, prefix_caching=True)
    assert bm.can_allocate(token_ids=[1, 2, 3], cache_salt="t")
    assert bm.allocate(seq_id="a", token_ids=[1, 2, 3], cache_salt="t") == 0
    assert bm.allocate(seq_id="b", token_ids=[1, 2, 3], cache_salt="t") == 2


@grade("the worked example: a shared 48-token prefix, then the queue after freeing", timeout=5)
def test_worked_example(impl):
    # block_size 16, 10 blocks. A (55 tokens) takes [0,1,2,3] and registers 0,1,2 (block 3
    # holds 7). B (60 tokens, A's first 48) reuses 0,1,2 -> 48, takes 4. free A (reversed
    # 3,2,1,0): only 3 reaches 0 -> queue 5..9,3. free B (reversed 4,2,1,0): queue
    # 5,6,7,8,9,3,4,2,1,0, all 10 free. A again reuses 0,1,2 out of the queue (content kept)
    # -> 48, and takes 5 from the front: 6 free left, queue 6,7,8,9,3,4.
    bm = caching(10, 16, impl)
    a = [(7 * i) % 100 for i in range(55)]
    b = a[:48] + [100 + i for i in range(12)]
    assert bm.allocate("A", a) == 0
    assert bm.block_table("A") == [0, 1, 2, 3]
    assert bm.allocate("B", b) == 48
    assert bm.block_table("B") == [0, 1, 2, 4]
    assert [bm.ref_count(i) for i in range(5)] == [2, 2, 2, 1, 1]
    bm.free("A")
    bm.free("B")
    assert bm.num_free_blocks == 10
    assert bm.allocate("A", a) == 48
    assert bm.block_table("A") == [0, 1, 2, 5]
    assert bm.num_free_blocks == 6
    assert drain(impl, bm) == [6, 7, 8, 9, 3, 4]


@grade("the last prompt token must never come from the cache", timeout=5)
def test_last_token_is_computed(impl):
    bm = caching(8, 4, impl)
    prompt = list(range(8))  # two full blocks
    assert bm.allocate("a", prompt) == 0
    assert bm.allocate("b", prompt) == 4  # (8 - 1) // 4 = 1 block
    assert bm.block_table("b") == [0, 2]
    assert bm.allocate("c", prompt + [9]) == 8
    assert bm.block_table("c") == [0, 1, 3]
    assert bm.allocate("d", prompt[:4]) == 0  # one full block: (4 - 1) // 4 = 0
    assert bm.block_table("d") == [4]


@grade("the reused run must stop at the first block that is not cached", timeout=5)
def test_run_stops_at_first_miss(impl):
    bm = caching(12, 2, impl)
    bm.allocate("a", [1, 1, 2, 2, 3, 3, 4])  # registers [1,1], [1,1,2,2], [1,1,2,2,3,3]
    assert bm.allocate("b", [9, 9, 2, 2, 3, 3, 4]) == 0
    assert bm.allocate("c", [1, 1, 2, 2, 5, 5, 3, 3, 4]) == 4
    assert bm.block_table("c")[:2] == [0, 1]

    # A later block can stay cached after an earlier one is evicted: S's copy of [1,2] is a
    # duplicate (A's block 0 holds that entry), while S's block 3 holds [1,2,3,4]. Evicting
    # block 0 leaves [1,2,3,4] cached, yet a prompt must stop at its first miss.
    bm = caching(9, 2, impl)
    bm.allocate("A", [1, 2, 9])                  # [0, 1]: registers [1,2] -> 0
    bm.allocate("S", [1])                        # [2]
    for token in (2, 3, 4):                      # fills 2 (a duplicate), then 3: [1,2,3,4] -> 3
        bm.append_token("S", token)
    bm.free("A")                                 # queue 4..8, 1, 0
    bm.free("S")                                 # queue 4..8, 1, 0, 3, 2
    bm.allocate("T", [7] * 11)                   # takes 4..8, 1 (6 blocks)
    bm.allocate("U", [8])                        # takes 0: [1,2] is evicted
    bm.free("T")                                 # queue 3, 2, 1, 8, 7, 6, 5, 4
    assert bm.allocate("V", [1, 2, 3, 4, 5]) == 0
    assert bm.block_table("V") == [3, 2, 1]


@grade("a block must match only with its whole prefix, not its own tokens alone",
       "content_key", timeout=5)
def test_key_covers_the_prefix(impl):
    bm = caching(12, 4, impl)
    bm.allocate("a", [1] * 4 + [2] * 4 + [0])
    assert bm.allocate("b", [2] * 4 + [0]) == 0
    assert bm.allocate("c", [5] * 4 + [2] * 4 + [0]) == 0
    assert bm.allocate("d", [1] * 4 + [2] * 4 + [7]) == 8


@grade("a cache hit must be exact, not a hash match", "content_key", timeout=5)
def test_hit_is_exact(impl):
    bm = caching(8, 4, impl)
    bm.allocate("a", [-1] * 4 + [0])  # hash(-1) == hash(-2) in CPython
    assert bm.allocate("b", [-2] * 4 + [0]) == 0
    assert bm.allocate("c", [-1] * 4 + [0]) == 4


@grade("a block filled by append_token must be cached from then on", "content_key", timeout=5)
def test_append_registers_a_filled_block(impl):
    bm = caching(8, 4, impl)
    bm.allocate("a", [1, 2, 3, 4, 5, 6])
    bm.append_token("a", 7)
    assert bm.allocate("b", [1, 2, 3, 4, 5, 6, 7, 9]) == 4  # block 1 not full yet
    bm.append_token("a", 8)  # fills block 1
    assert bm.allocate("c", [1, 2, 3, 4, 5, 6, 7, 8, 9]) == 8
    assert bm.block_table("c")[:2] == [0, 1]


@grade("a partly filled block must never be a cache hit", "content_key", timeout=5)
def test_partial_blocks_do_not_hit(impl):
    bm = caching(8, 4, impl)
    bm.allocate("a", [1, 2, 3, 4, 5, 6])
    assert bm.allocate("b", [1, 2, 3, 4, 5, 6, 0, 0, 9]) == 4


def filled_twice(impl):
    """a = [1..6] holds [0, 1]; b = [1..9] reuses block 0 and registers [1..8] on block 2;
    then a appends 7 and 8, filling block 1 with the same content."""
    bm = caching(8, 4, impl)
    bm.allocate("a", [1, 2, 3, 4, 5, 6])
    bm.allocate("b", [1, 2, 3, 4, 5, 6, 7, 8, 9])
    bm.append_token("a", 7)
    bm.append_token("a", 8)
    return bm


@grade("an existing cache entry must win over a new block with the same content",
       "content_key", timeout=5)
def test_existing_entry_wins(impl):
    bm = filled_twice(impl)
    assert bm.allocate("c", [1, 2, 3, 4, 5, 6, 7, 8, 0]) == 8
    assert bm.block_table("c")[:2] == [0, 2]


@grade("a block whose content is already cached must stay in its table", "content_key",
       timeout=5)
def test_tables_never_deduplicate(impl):
    bm = filled_twice(impl)
    assert (bm.block_table("a"), bm.block_table("b")) == ([0, 1], [0, 2, 3])
    assert [bm.ref_count(b) for b in range(4)] == [2, 1, 1, 1]
    assert bm.num_free_blocks == 4


@grade("allocate must register its full blocks only after taking all its new blocks",
       "content_key", timeout=5)
def test_allocate_registers_after_taking(impl):
    # block_size 2, 5 blocks. As in the test above, S holds [1,2,3,4] on block 3 while [1,2]
    # is evicted. P = [1..9] misses at once and takes 0, 1, 4, 3, 2: taking block 3 evicts
    # [1,2,3,4], which P's block 1 (block 1) then registers. Registering each block as it is
    # taken would find [1,2,3,4] still on block 3, skip it, then lose it.
    bm = caching(5, 2, impl)
    bm.allocate("A", [1, 2, 9])                  # [0, 1]: registers [1,2] -> 0
    bm.allocate("S", [1])                        # [2]
    for token in (2, 3, 4):                      # fills 2 (a duplicate), then 3: [1,2,3,4] -> 3
        bm.append_token("S", token)
    bm.free("A")                                 # queue 4, 1, 0
    bm.allocate("U", [8] * 5)                    # takes 4, 1, 0: [1,2] is evicted
    bm.free("U")                                 # queue 0, 1, 4
    bm.free("S")                                 # queue 0, 1, 4, 3, 2
    assert bm.allocate("P", list(range(1, 10))) == 0
    assert bm.block_table("P") == [0, 1, 4, 3, 2]
    bm.free("P")
    assert bm.allocate("Q", [1, 2, 3, 4, 0]) == 4
    assert bm.block_table("Q")[:2] == [0, 1]


@grade("a released block must keep its cache entry while it waits in the queue", "eviction",
       timeout=5)
def test_released_block_keeps_its_entry(impl):
    # block_size 4, 4 blocks. a=[1..5] -> [0,1], block 0 registered; free -> queue 2,3,1,0.
    # a again reuses 0 and takes 2; free -> queue 3,1,2,0. x, y, z take 3, 1, 2; free z ->
    # queue 0,2. r=a reuses 0 and takes 2.
    bm = caching(4, 4, impl)
    a = [1, 2, 3, 4, 5]
    bm.allocate("a", a)
    bm.free("a")
    assert bm.allocate("a", a) == 4  # still cached while it waited in the queue
    assert bm.block_table("a") == [0, 2]
    bm.free("a")
    for s, t in (("x", 7), ("y", 8), ("z", 9)):
        bm.allocate(s, [t])
    bm.free("z")
    assert bm.allocate("r", a) == 4  # block 0 is still in the queue, entry intact
    assert bm.block_table("r") == [0, 2]


@grade("taking a cached block for new content must evict its entry", "eviction", timeout=5)
def test_taking_a_block_evicts_its_entry(impl):
    # block_size 4, 4 blocks. a=[1..5] -> [0,1], block 0 registered; free -> queue 2,3,1,0.
    # x of 13 tokens takes all four, block 0 last, for new content.
    bm = caching(4, 4, impl)
    a = [1, 2, 3, 4, 5]
    bm.allocate("a", a)
    bm.free("a")
    bm.allocate("x", [7] * 13)
    assert bm.block_table("x") == [2, 3, 1, 0]
    bm.free("x")
    assert bm.allocate("a", a) == 0


@grade("a block append_token takes for a new block must lose its cache entry", "eviction",
       timeout=5)
def test_append_evicts_a_new_blocks_entry(impl):
    # block_size 2, 4 blocks. a=[1,2,3] registers block 0; free -> queue 2,3,1,0. x grows one
    # token at a time and takes 2, 3, 1, then 0 for its seventh token: [1,2] must go. Once x
    # is freed, a prompt [1,2,3] finds nothing cached (block 0 holds x's lone last token).
    bm = caching(4, 2, impl)
    bm.allocate("a", [1, 2, 3])
    bm.free("a")
    bm.allocate("x", [7])
    for _ in range(6):
        bm.append_token("x", 7)
    assert bm.block_table("x") == [2, 3, 1, 0]
    bm.free("x")
    assert bm.allocate("b", [1, 2, 3]) == 0


@grade("a block append_token takes for a copy must lose its cache entry", "eviction",
       timeout=5)
def test_append_evicts_a_copys_entry(impl):
    # block_size 2, 4 blocks. a=[1,2,3] registers block 0; free -> queue 2,3,1,0. p=[5] takes 2
    # and c forks it; q=[6,6,6] takes 3 and 1. c's append copies its shared, half-full block
    # into the front block, 0: [1,2] must go. q's blocks are then enough for [1,2,3], uncached.
    bm = caching(4, 2, impl)
    bm.allocate("a", [1, 2, 3])
    bm.free("a")
    bm.allocate("p", [5])
    bm.fork("p", "c")
    bm.allocate("q", [6, 6, 6])
    assert bm.append_token("c", 5) == (2, 0)
    bm.free("q")
    assert bm.allocate("b", [1, 2, 3]) == 0


@grade("taking a duplicate block must leave the entry of the block it duplicates",
       "eviction", timeout=5)
def test_duplicate_does_not_evict_original(impl):
    # block_size 4, 5 blocks. p=[1,2,3] -> [0]; fork c. p+4 copies (0,1) and fills block 1:
    # registered. c+4 fills block 0 in place with the same content: a duplicate. free c ->
    # queue 2,3,4,0; x takes 2,3,4, z takes the duplicate 0 for new content; free x.
    bm = caching(5, 4, impl)
    bm.allocate("p", [1, 2, 3])
    bm.fork("p", "c")
    assert bm.append_token("p", 4) == (0, 1)
    assert bm.append_token("c", 4) is None
    bm.free("c")
    bm.allocate("x", [5] * 9)
    bm.allocate("z", [7])
    assert bm.block_table("z") == [0]
    bm.free("x")
    assert bm.allocate("q", [1, 2, 3, 4, 5]) == 4
    assert bm.block_table("q")[0] == 1


@grade("a duplicate must stay unregistered after the original is evicted", "content_key",
       timeout=5)
def test_duplicate_stays_unregistered(impl):
    # As above with 6 blocks, but p is freed: queue 2,3,4,5,1; x takes 2..5, z takes block 1
    # (the original) for new content, evicting it. Block 0 holds the content, uncached.
    bm = caching(6, 4, impl)
    bm.allocate("p", [1, 2, 3])
    bm.fork("p", "c")
    bm.append_token("p", 4)
    bm.append_token("c", 4)
    bm.free("p")
    bm.allocate("x", [5] * 13)
    bm.allocate("z", [7])
    assert bm.block_table("z") == [1]
    bm.free("x")
    assert bm.allocate("q", [1, 2, 3, 4, 5]) == 0


@grade("can_allocate must count the reused blocks that are free", "eviction", timeout=5)
def test_can_allocate_counts_reused_free_blocks(impl):
    # block_size 4, 3 blocks. a=[1..5] -> [0,1]; free -> queue 2,1,0 with block 0 cached;
    # x takes 2. A 9-token prompt reusing block 0 needs 0 and two new blocks: 3 > 2 free.
    bm = caching(3, 4, impl)
    bm.allocate("a", [1, 2, 3, 4, 5])
    bm.free("a")
    bm.allocate("x", [9])
    long = [1, 2, 3, 4, 6, 7, 8, 9, 10]
    assert not bm.can_allocate(long)
    with pytest.raises(impl.OutOfBlocks):
        bm.allocate("b", long)
    assert bm.num_free_blocks == 2
    assert bm.can_allocate([1, 2, 3, 4, 6])
    assert bm.allocate("b", [1, 2, 3, 4, 6]) == 4
    assert bm.block_table("b") == [0, 1]
    assert bm.num_free_blocks == 0


@grade("a reused free block must leave the free queue", "eviction", timeout=5)
def test_reused_free_block_leaves_the_queue(impl):
    bm = caching(4, 2, impl)
    bm.allocate("a", [1, 2, 3])
    bm.free("a")  # queue 2, 3, 1, 0; block 0 cached
    assert bm.allocate("b", [1, 2, 5]) == 2
    assert bm.block_table("b") == [0, 2]
    assert (bm.num_free_blocks, bm.ref_count(0)) == (2, 1)
    assert drain(impl, bm) == [3, 1]
    assert bm.block_table("b") == [0, 2]


@grade("sequences with different salts must never share a cached block", "content_key",
       timeout=5)
def test_salts_separate_tenants(impl):
    bm = caching(10, 2, impl)
    bm.allocate("a", [1, 2, 3], cache_salt="t1")
    assert bm.allocate("b", [1, 2, 3]) == 0
    assert bm.allocate("c", [1, 2, 3], cache_salt="t2") == 0
    assert bm.allocate("d", [1, 2, 3], cache_salt=1) == 0


@grade("equal salts must share cached blocks, whatever their type", "content_key", timeout=5)
def test_equal_salts_share(impl):
    bm = caching(10, 2, impl)
    bm.allocate("a", [1, 2, 3], cache_salt="t1")
    assert bm.allocate("b", [1, 2, 3], cache_salt="".join(["t", "1"])) == 2  # not `is`
    bm.allocate("c", [4, 5, 6], cache_salt=1)
    assert bm.allocate("d", [4, 5, 6], cache_salt=1.0) == 2  # 1 == 1.0


@grade("a prompt without a salt must share with one salted None", "content_key", timeout=5)
def test_default_salt_is_none(impl):
    bm = caching(10, 2, impl)
    bm.allocate("a", [1, 2, 3])
    assert bm.allocate("b", [1, 2, 3], cache_salt=None) == 2
    bm.allocate("c", [4, 5, 6], cache_salt=None)
    assert bm.allocate("d", [4, 5, 6]) == 2


@grade("a forked child must keep its parent's salt", "content_key", timeout=5)
def test_fork_keeps_salt(impl):
    bm = caching(10, 2, impl)
    bm.allocate("p", [1], cache_salt="t1")
    bm.fork("p", "c")
    bm.append_token("c", 2)  # fills the copy under salt t1
    assert bm.allocate("x", [1, 2, 3]) == 0
    assert bm.allocate("y", [1, 2, 3], cache_salt="t1") == 2


@grade("forked siblings must register the block that fills first", "content_key", timeout=5)
def test_first_sibling_to_fill_is_registered(impl):
    # block_size 4. p=[1..5] -> [0,1], [1..4] registered on 0. Its fork c copies block 1 into
    # 2 and fills it first: [1..8] -> 2. p then fills block 1 with the same content.
    bm = caching(8, 4, impl)
    bm.allocate("p", [1, 2, 3, 4, 5])
    bm.fork("p", "c")
    for token in (6, 7, 8):
        bm.append_token("c", token)
    for token in (6, 7, 8):
        bm.append_token("p", token)
    assert (bm.block_table("p"), bm.block_table("c")) == ([0, 1], [0, 2])
    assert bm.allocate("q", [1, 2, 3, 4, 5, 6, 7, 8, 9]) == 8
    assert bm.block_table("q")[:2] == [0, 2]


@grade("a released duplicate must stay unregistered after its original was evicted",
       "content_key", timeout=5)
def test_released_duplicate_stays_unregistered(impl):
    # As in the test above, but the duplicate (block 0) is released only after the original
    # (block 1) was taken for new content: block 0 goes back to the queue uncached.
    bm = caching(6, 4, impl)
    bm.allocate("p", [1, 2, 3])
    bm.fork("p", "c")
    bm.append_token("p", 4)                      # copies (0, 1); [1,2,3,4] -> 1
    bm.append_token("c", 4)                      # fills 0 in place: a duplicate
    bm.free("p")                                 # queue 2, 3, 4, 5, 1
    bm.allocate("x", [5] * 17)                   # takes 2, 3, 4, 5, 1: [1,2,3,4] is evicted
    assert bm.block_table("x") == [2, 3, 4, 5, 1]
    bm.free("c")
    bm.free("x")
    assert bm.allocate("q", [1, 2, 3, 4, 5]) == 0


@grade("allocate must return the reused tokens, not the reused blocks", timeout=5)
def test_allocate_returns_tokens(impl):
    bm = caching(8, 4, impl)
    bm.allocate("a", [1, 2, 3, 4, 5, 6, 7, 8, 9])
    assert bm.allocate("b", [1, 2, 3, 4, 5, 6, 7, 8, 0]) == 8


@grade("a reused block must gain one reference", "refcount", timeout=5)
def test_reused_block_gains_a_reference(impl):
    bm = caching(8, 4, impl)
    bm.allocate("a", [1, 2, 3, 4, 5])
    bm.allocate("b", [1, 2, 3, 4, 6])
    bm.allocate("c", [1, 2, 3, 4, 7])
    assert [bm.ref_count(b) for b in range(4)] == [3, 1, 1, 1]


@grade("a cached free block must have ref_count 0", "refcount", timeout=5)
def test_cached_free_block_has_no_reference(impl):
    bm = caching(4, 4, impl)
    bm.allocate("a", [1, 2, 3, 4, 5])
    bm.free("a")
    assert [bm.ref_count(b) for b in range(4)] == [0, 0, 0, 0]


@grade("num_free_blocks must count cached free blocks", "eviction", timeout=5)
def test_num_free_counts_cached_blocks(impl):
    bm = caching(4, 4, impl)
    bm.allocate("a", [1, 2, 3, 4, 5])
    bm.free("a")
    assert bm.num_free_blocks == 4


@grade("a block planned for reuse must never be taken as new", "eviction", timeout=5)
def test_planned_reuse_is_not_taken(impl):
    # block_size 4, 5 blocks. a=[1..5] -> [0,1], [1..4] on 0; free -> queue 2,3,4,1,0. x takes
    # 2,3,4 and y takes 1; free x -> queue 0,4,3,2. b reuses block 0, at the front, and takes
    # its new block after it has left the queue: 4.
    bm = caching(5, 4, impl)
    bm.allocate("a", [1, 2, 3, 4, 5])
    bm.free("a")
    bm.allocate("x", [7] * 9)
    bm.allocate("y", [9])
    bm.free("x")
    assert bm.allocate("b", [1, 2, 3, 4, 6]) == 4
    assert bm.block_table("b") == [0, 4]


@grade("cached free blocks must be taken in queue order like any other", "eviction",
       timeout=5)
def test_cached_blocks_leave_in_queue_order(impl):
    # block_size 4, 4 blocks. a=[1..5] -> [0,1], [1..4] on 0; b=[9] -> [2]. free a, then b:
    # queue 3,1,0,2, where only block 0 is cached. c of 9 tokens takes the front three.
    bm = caching(4, 4, impl)
    bm.allocate("a", [1, 2, 3, 4, 5])
    bm.allocate("b", [9])
    bm.free("a")
    bm.free("b")
    bm.allocate("c", [6] * 9)
    assert bm.block_table("c") == [3, 1, 0]


@grade("prefix caching must agree with a brute-force oracle at every step", timeout=60)
def test_state_machine_with_caching(impl):
    run_machine(impl, caching=True, examples=100, steps=30)


@grade("paging with and without caching must agree with the oracle", timeout=60)
def test_state_machine_mixed(impl):
    run_machine(impl, caching=None, examples=40, steps=30)
