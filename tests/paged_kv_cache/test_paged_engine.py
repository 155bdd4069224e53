"""End to end: the ToyLM's attention over a paged block store, driven by the reference block
manager at every level, gives every sequence exactly what ToyLM.generate gives it alone; and a
wrong manager visibly corrupts tokens.

The ToyLM runs in float64, so greedy tokens do not depend on batching. The store is read only
through the manager's tables: a shared block written in place, a copy in the wrong direction, or
a cache hit on a block that now holds other tokens all change what attention sees.
"""

from __future__ import annotations

import random

import pytest

from harness import catalog, mutants
from harness.loader import load_module

torch = pytest.importorskip("torch", reason="the ToyLM end-to-end tests need torch")
from devices import DEVICES  # noqa: E402  (needs torch)

from harness.suites.paged_kv_cache.engine import PagedEngine, Request, serve  # noqa: E402
from harness.toylm import ToyLM  # noqa: E402

KATA = catalog.get("paged_kv_cache")

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module", params=DEVICES)
def lm(request):
    return ToyLM(seed=0, device=request.param)


def shared_prompts(lm, n: int, seed: int = 0) -> list[Request]:
    """Two system prompts (one of them salted for another tenant), each followed by a short
    user turn; a few requests without a system prompt."""
    rng = random.Random(seed)
    systems = [[rng.randrange(lm.vocab_size) for _ in range(21)] for _ in range(2)]
    requests = []
    for i in range(n):
        user = [rng.randrange(lm.vocab_size) for _ in range(rng.randint(1, 6))]
        kind = i % 4
        prompt = user if kind == 3 else systems[kind % 2] + user
        requests.append(Request(i, prompt, rng.randint(1, 9), salt="b" if kind == 2 else None))
    return requests


def generate_all(lm, requests):
    return {r.seq_id: lm.generate(r.prompt, r.max_tokens) for r in requests}


@pytest.mark.parametrize("caching", [False, True], ids=["level1", "level3-caching"])
def test_shared_system_prompts_match_generate(reference, lm, caching):
    requests = shared_prompts(lm, 12)
    want = generate_all(lm, requests)
    engine = PagedEngine(lm, reference.BlockManager(128, 4, prefix_caching=caching), 128, 4)
    assert serve(engine, requests) == want
    total = sum(len(r.prompt) for r in requests)
    if caching:  # the system prompts' full blocks were reused
        assert engine.prefilled < total - 40
    else:
        assert engine.prefilled == total


@pytest.mark.parametrize("caching", [False, True], ids=["level2", "level3-caching"])
def test_forked_children_forced_apart_match_generate(reference, lm, caching):
    prompt = [(5 * i + 3) % lm.vocab_size for i in range(13)]  # 13 tokens: block 3 is partial
    steps = 10
    engine = PagedEngine(lm, reference.BlockManager(32, 4, prefix_caching=caching), 32, 4)
    engine.start("p", prompt)
    greedy = engine.pending["p"]
    forced = [t for t in range(lm.vocab_size) if t != greedy][:3]
    for i, t in enumerate(forced):
        engine.fork("p", i)
        engine.force(i, t)
    ids = ["p", *range(len(forced))]
    for _ in range(steps):
        for s in ids:
            engine.append(s)
        engine.compute(ids)
    assert engine.copies == len(forced)  # each child's first append copied the shared block
    assert engine.tokens["p"] == prompt + lm.generate(prompt, steps)
    for i, t in enumerate(forced):
        assert engine.tokens[i] == prompt + [t] + lm.generate(prompt + [t], steps - 1)


@pytest.mark.parametrize("caching", [False, True], ids=["level1", "level3-caching"])
def test_memory_pressure_preempts_and_evicts(reference, lm, caching):
    """A pool of 14 blocks of 4 for 16 requests of up to 29 tokens: admission waits, running
    sequences are preempted and recomputed, and cached free blocks are evicted as they are
    taken for new content."""
    requests = shared_prompts(lm, 16, seed=1)
    want = generate_all(lm, requests)
    bm = reference.BlockManager(14, 4, prefix_caching=caching)
    engine = PagedEngine(lm, bm, 14, 4)
    assert serve(engine, requests) == want
    assert bm.num_free_blocks == 14
    assert engine.prefilled > sum(len(r.prompt) for r in requests) or caching  # recomputes


@pytest.mark.parametrize("name, run", [
    ("no_copy_on_write", "forks"),
    ("copy_answer_swapped", "forks"),
    ("fork_adds_no_reference", "forks"),
    ("evicted_entry_kept", "pressure"),
    ("key_without_prefix", "repeats"),
])
def test_wrong_manager_corrupts_tokens(lm, name, run):
    bad = load_module(mutants.materialise(KATA, name), f"paged_kv_cache_mutant_{name}")
    if run == "forks":  # a few prompt shapes: one lost position may not flip an argmax
        assert any(fork_is_corrupted(lm, bad, n, bs) for n, bs in [(13, 4), (15, 4), (7, 8)])
        return
    if run == "repeats":  # one block of tokens repeated: only the prefix tells the copies apart
        block = [11, 22, 33, 44]
        requests = [Request(0, block * 3 + [5], 6), Request(1, block * 2 + [9, 9], 6)]
    else:
        requests = shared_prompts(lm, 16, seed=1)
    engine = PagedEngine(lm, bad.BlockManager(14, 4, prefix_caching=True), 14, 4)
    assert serve(engine, requests) != generate_all(lm, requests)


def fork_is_corrupted(lm, manager, n: int, block_size: int) -> bool:
    prompt = [(5 * i + 3) % lm.vocab_size for i in range(n)]
    engine = PagedEngine(lm, manager.BlockManager(32, block_size), 32, block_size)
    engine.start("p", prompt)
    forced = (engine.pending["p"] + 1) % lm.vocab_size
    engine.fork("p", "c")
    engine.force("c", forced)
    for _ in range(8):
        for s in ("p", "c"):
            engine.append(s)
        engine.compute(["p", "c"])
    want = (prompt + lm.generate(prompt, 8), prompt + [forced] + lm.generate(prompt + [forced], 7))
    return (engine.tokens["p"], engine.tokens["c"]) != want
