"""`kata bench paged_kv_cache`: the block manager alone (no model), three questions, one run.

1. Memory. 2,000 requests (300 with quick=True), prompts 32..512 tokens, output lengths
   1 + floor(20 * Lomax(1.5)) capped at MAX_TOKENS = 1024 (long-tailed: mean about 40).
   Baseline: contiguous reservation of prompt + MAX_TOKENS per sequence. Paging: the manager
   under test holds each finished sequence (allocate the prompt, append every output token)
   with block size 16. Wasted = reserved slots that hold no token. "Fit in the same memory":
   how many of the requests, in order, fit at once in the pool that 64 contiguous
   reservations would take, counted by the manager raising OutOfBlocks.
2. Prefix caching. 80 % of the requests start with one 512-token system prompt, then a user
   turn of 16..128 tokens; the rest are unrelated prompts of the same lengths. 32 requests run
   at once (the oldest is freed when the next one needs room or the window is full). Baseline:
   prefill without caching, every prompt token computed. Swept over the pool size.
3. Cost per operation. Mean wall time of allocate (a cached 64-token prompt) / append / fork /
   free at 10^5 blocks against 10^3 (ratio near 1: every call touches only its own blocks), of
   building the content keys of one long prompt: the manager's allocate with caching on,
   against whole-prefix tuple keys (quadratic in the prompt length).
"""

from __future__ import annotations

import random
import time
from collections import deque
from pathlib import Path

import numpy as np

from harness.bench import Table, pyplot, save_plots

BLOCK, MAX_TOKENS, SYSTEM = 16, 1024, 512


def lengths(n: int, seed: int = 0) -> list[tuple[int, int]]:
    rng = np.random.default_rng(seed)
    out = np.minimum(MAX_TOKENS, 1 + np.floor(20 * rng.pareto(1.5, n))).astype(int)
    prompts = rng.integers(32, 513, n)
    return list(zip(prompts.tolist(), out.tolist(), strict=True))


def hold(impl, bm, seq_id, prompt_len: int, out_len: int) -> None:
    bm.allocate(seq_id, [1] * prompt_len)
    for _ in range(out_len):
        bm.append_token(seq_id, 1)


def memory(impl, work) -> dict:
    used = sum(p + o for p, o in work)
    reserved = sum(p + MAX_TOKENS for p, _ in work)
    paged = sum(-(-(p + o) // BLOCK) * BLOCK for p, o in work)
    budget = sum(p + MAX_TOKENS for p, _ in work[:64])  # the memory of 64 reservations
    bm = impl.BlockManager(budget // BLOCK, BLOCK)
    fit = 0
    for i, (p, o) in enumerate(work):
        try:
            hold(impl, bm, i, p, o)
        except impl.OutOfBlocks:
            break
        fit += 1
    # Check the count above against the manager's own view of its blocks.
    assert sum(len(bm.block_table(i)) for i in range(fit)) + bm.num_free_blocks == budget // BLOCK
    return dict(waste_contiguous=1 - used / reserved, waste_paged=1 - used / paged,
                fit_contiguous=64, fit_paged=fit)


def prompts(n: int, seed: int = 0) -> list[list[int]]:
    rng = random.Random(seed)
    system = [rng.randrange(32000) for _ in range(SYSTEM)]
    out = []
    for _ in range(n):
        user = [rng.randrange(32000) for _ in range(rng.randint(16, 128))]
        out.append(system + user if rng.random() < 0.8 else
                   [rng.randrange(32000) for _ in range(SYSTEM)] + user)
    return out


def serve(impl, work, num_blocks: int, caching: bool) -> tuple[int, int]:
    """(prompt tokens computed, prompt tokens in all) with at most 32 sequences at once."""
    bm = impl.BlockManager(num_blocks, BLOCK, prefix_caching=caching)
    running: deque[int] = deque()
    computed = 0
    for i, prompt in enumerate(work):
        while running and (len(running) == 32 or not bm.can_allocate(prompt)):
            bm.free(running.popleft())
        computed += len(prompt) - bm.allocate(i, prompt)
        for t in range(4):  # a few output tokens, so blocks are appended and freed as in serving
            while running and not bm.can_append(i):
                bm.free(running.popleft())
            bm.append_token(i, t)
        running.append(i)
    return computed, sum(len(p) for p in work)


def op_costs(impl, num_blocks: int, n: int) -> dict:
    """Mean microseconds per call over n cycles of allocate (64 tokens, caching on, so the
    cached blocks come back out of the middle of the queue), append, fork, free, free."""
    bm = impl.BlockManager(num_blocks, BLOCK, prefix_caching=True)
    for i in range(num_blocks // 8):  # fill the cache with unrelated free blocks first
        bm.allocate(("w", i), [i, *range(-1, -63, -1)])
        bm.free(("w", i))
    prompt = list(range(64))
    spent = dict.fromkeys(("allocate", "append", "fork", "free"), 0.0)
    clock = time.perf_counter
    for _ in range(n):
        t0 = clock()
        bm.allocate("s", prompt)
        t1 = clock()
        bm.append_token("s", 7)
        t2 = clock()
        bm.fork("s", "c")
        t3 = clock()
        bm.free("c")
        bm.free("s")
        t4 = clock()
        for op, dt in zip(spent, (t1 - t0, t2 - t1, t3 - t2, (t4 - t3) / 2), strict=True):
            spent[op] += dt
    return {op: dt / n * 1e6 for op, dt in spent.items()}


def key_costs(impl, length: int) -> tuple[float, float]:
    """Microseconds per prompt token: the manager's allocate with caching, and tuple keys."""
    prompt = list(range(length))
    ours = tuples = float("inf")
    for _ in range(3):  # best of three: the machine is shared
        bm = impl.BlockManager(length // BLOCK + 1, BLOCK, prefix_caching=True)
        start = time.perf_counter()
        bm.allocate("s", prompt)
        ours = min(ours, time.perf_counter() - start)
        start = time.perf_counter()
        {tuple(prompt[: (i + 1) * BLOCK]): i for i in range(length // BLOCK)}
        tuples = min(tuples, time.perf_counter() - start)
    return ours / length * 1e6, tuples / length * 1e6


def plot(sweep: list[tuple[int, float]], path: Path) -> None:
    def draw(say):
        fig, ax = pyplot().subplots(figsize=(7, 3.8))
        ax.plot([b for b, _ in sweep], [100 * h for _, h in sweep], marker="o")
        ax.set(xscale="log", ylim=(0, 100),
               xlabel=say("pool size (blocks of 16 tokens, log scale)",
                          "pool 大小（每個 block 16 個 token，對數刻度）"),
               ylabel=say("prompt tokens reused (%)", "重複使用的 prompt token（%）"),
               title=say("Prefix-cache hit rate against pool size\n"
                         "(80 % of requests share a 512-token prompt)",
                         "Prefix cache 命中率與 pool 大小\n"
                         "（80 % 的請求共用一段 512 token 的 prompt）"))
        fig.tight_layout()
        return fig

    save_plots(path, draw)


def main(impl, *, quick: bool = False, out: Path | None = None) -> Table:
    n = 300 if quick else 2000
    table = Table("figure", "setting", "paged / cached", "baseline", "ratio")
    m = memory(impl, lengths(n))
    table.add("KV memory wasted", f"{n} requests, block {BLOCK}", f"{m['waste_paged']:.1%}",
              f"{m['waste_contiguous']:.1%} (contiguous, max {MAX_TOKENS})",
              f"{m['waste_contiguous'] / m['waste_paged']:.0f}x less waste")
    table.add("sequences that fit", "memory of 64 reservations", m["fit_paged"],
              f"{m['fit_contiguous']} (contiguous)",
              f"{m['fit_paged'] / m['fit_contiguous']:.1f}x more")

    work = prompts(n)
    total = sum(len(p) for p in work)
    sweep = []
    for num_blocks in (44, 48, 64, 96, 128, 256, 1024):
        computed, total = serve(impl, work, num_blocks, caching=True)
        sweep.append((num_blocks, 1 - computed / total))
        table.add("prefill tokens computed", f"pool {num_blocks} blocks, 32 running",
                  f"{computed:,} ({1 - computed / total:.0%} hit)", f"{total:,} (no caching)",
                  f"{total / computed:.2f}x fewer")

    calls = 2000 if quick else 20000
    small, large = ({op: min(r[op] for r in runs) for op in runs[0]} for runs in (
        [op_costs(impl, size, calls) for _ in range(3)] for size in (10**3, 10**5)))
    for op in small:
        table.add(f"{op} (us/call)", "10^5 blocks vs 10^3", f"{large[op]:.2f}",
                  f"{small[op]:.2f} (10^3 blocks)", f"{large[op] / small[op]:.2f}x")
    for length in (1024, 4096, 16384) if not quick else (1024, 4096):
        ours, tuples = key_costs(impl, length)
        table.add("content keys (us/token)", f"one {length}-token prompt", f"{ours:.3f}",
                  f"{tuples:.3f} (whole-prefix tuples)", f"{tuples / ours:.1f}x")
    if out is not None:
        plot(sweep, Path(out) / "paged_kv_cache-hit-rate.png")
    return table
