"""Shared scaffolding: reading the free queue through the API, and the engine-like state machine."""

from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from .oracle import Oracle

SALTS = (None, "tenant-b")
# Prompts start from a few shared prefixes, so full blocks often match and hits are common.
PREFIXES = ((), (0, 0, 0, 0), (0, 1, 0, 1, 0, 1), (1,) * 8)
prompts = st.builds(lambda head, tail: [*head, *tail], st.sampled_from(PREFIXES),
                    st.lists(st.integers(0, 1), max_size=4)).filter(bool)


def drain(impl, bm) -> list[int]:
    """The free queue, front first, read by allocating one-token probes until none fits.
    (A one-token prompt reuses nothing, so each probe takes the front block.) Destructive."""
    order = []
    for i in range(bm.num_free_blocks + 1):
        if not bm.can_allocate([0]):
            break
        bm.allocate(("probe", i), [0])
        order.append(bm.block_table(("probe", i))[0])
    assert bm.num_free_blocks == 0
    return order


def attempt(call) -> None:
    """Make a call that should fail, whatever it raises: a test of what a failed call leaves
    behind checks only that, and the tests of the error itself say which one it must be."""
    try:
        call()
    except Exception:
        pass


class Store:
    """The KV store as an engine keeps it: slot (block, offset) holds the "KV" of one position,
    written as the whole prefix up to that token, since real KV depends on all of it."""

    def __init__(self, block_size: int):
        self.bs, self.slots = block_size, {}

    def write(self, table: list[int], tokens: list[int], start: int) -> None:
        for i in range(start, len(tokens)):
            self.slots[table[i // self.bs], i % self.bs] = tuple(tokens[: i + 1])

    def copy(self, src: int, dst: int) -> None:
        for off in range(self.bs):
            if (src, off) in self.slots:
                self.slots[dst, off] = self.slots[src, off]
            else:
                self.slots.pop((dst, off), None)

    def read(self, table: list[int], n: int) -> list:
        return [self.slots.get((table[i // self.bs], i % self.bs)) for i in range(n)]


class PagedMachine(RuleBasedStateMachine):
    """Allocate, append, fork and free at random; after every step the manager must agree with
    the oracle, and the store read through each table must give each sequence's prefixes."""

    impl = None
    caching: bool | None = None  # None: drawn

    @initialize(num_blocks=st.integers(1, 12), block_size=st.integers(1, 3),
                caching=st.booleans())
    def setup(self, num_blocks, block_size, caching):
        caching = caching if self.caching is None else self.caching
        self.n, self.bs, self.caching_on = num_blocks, block_size, caching
        # prefix_caching is Level 3's: passed only when it is on
        self.bm = self.impl.BlockManager(num_blocks, block_size, **(
            {"prefix_caching": True} if caching else {}))
        self.oracle = Oracle(num_blocks, block_size, caching)
        self.store = Store(block_size)
        self.history: list[list[int]] = []  # every sequence's tokens, kept after it is freed

    def new_id(self) -> int:
        return next(i for i in range(len(self.oracle.tables) + 1) if i not in self.oracle.tables)

    def live(self, pick: int):
        ids = sorted(self.oracle.tables)
        return ids[pick % len(ids)]

    @precondition(lambda self: self.history)
    @rule(pick=st.integers(0, 99), extra=st.integers(0, 1), salt=st.sampled_from(SALTS))
    def resend(self, pick, extra, salt):
        """A follow-up turn: an earlier sequence's prompt and output, plus one new token."""
        self.allocate(self.history[-1 - pick % len(self.history)] + [extra], salt)

    @rule(tokens=prompts, salt=st.sampled_from(SALTS))
    def allocate(self, tokens, salt):
        seq, fits = self.new_id(), self.oracle.fits(tokens, salt)
        # cache_salt is Level 3's, and without caching it changes nothing: passed only with it
        salted = {"cache_salt": salt} if self.caching_on and salt is not None else {}
        assert self.bm.can_allocate(tokens, **salted) == fits
        if not fits:
            with pytest.raises(self.impl.OutOfBlocks):
                self.bm.allocate(seq, tokens, **salted)
            return
        want = self.oracle.allocate(seq, tokens, salt)
        assert self.bm.allocate(seq, list(tokens), **salted) == want
        self.store.write(self.bm.block_table(seq), tokens, want)  # nothing for reused tokens
        self.history.append(list(tokens))

    @precondition(lambda self: self.oracle.tables)
    @rule(pick=st.integers(0, 99), token=st.integers(0, 1))
    def append(self, pick, token):
        seq = self.live(pick)
        fits = not self.oracle.needs_block(seq) or bool(self.oracle.queue)
        assert self.bm.can_append(seq) == fits
        if not fits:
            with pytest.raises(self.impl.OutOfBlocks):
                self.bm.append_token(seq, token)
            return
        want = self.oracle.append(seq, token)
        got = self.bm.append_token(seq, token)
        assert (got is None) == (want is None) and (got is None or tuple(got) == want)
        if got is not None:
            src, dst = got
            self.store.copy(src, dst)
        tokens = self.oracle.tokens[seq]
        self.store.write(self.bm.block_table(seq), tokens, len(tokens) - 1)

    @precondition(lambda self: self.oracle.tables)
    @rule(pick=st.integers(0, 99))
    def fork(self, pick):
        parent, child = self.live(pick), self.new_id()
        self.oracle.fork(parent, child)
        self.bm.fork(parent, child)

    @precondition(lambda self: self.oracle.tables)
    @rule(pick=st.integers(0, 99))
    def free(self, pick):
        seq = self.live(pick)
        self.history.append(list(self.oracle.tokens[seq]))
        self.oracle.free(seq)
        self.bm.free(seq)

    @invariant()
    def agrees(self):
        if not hasattr(self, "bm"):
            return
        o, bm = self.oracle, self.bm
        refs = o.refs()
        for seq, table in o.tables.items():
            tokens = o.tokens[seq]
            assert bm.block_table(seq) == table
            assert bm.num_tokens(seq) == len(tokens)
            want = [tuple(tokens[: i + 1]) for i in range(len(tokens))]
            assert self.store.read(table, len(tokens)) == want, f"sequence {seq} reads wrong KV"
        assert [bm.ref_count(b) for b in range(self.n)] == [refs[b] for b in range(self.n)]
        assert bm.num_free_blocks == len(o.queue) == self.n - len(refs)


def run_machine(impl, caching: bool | None, examples: int, steps: int) -> None:
    machine = type("Machine", (PagedMachine,), {"impl": impl, "caching": caching})
    run_state_machine_as_test(machine, settings=settings(
        max_examples=examples, stateful_step_count=steps, deadline=None))
