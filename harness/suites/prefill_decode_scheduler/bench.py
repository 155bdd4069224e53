"""`kata bench prefill_decode_scheduler`: the scheduler alone (no model), on one workload.

Workload: 400 requests (80 with quick=True), all queued at step 0, seeded. Prompts are 80% short
(16..128 tokens) and 20% long (256..512); each generates 8..128 tokens. token_budget = 512.

- Level 1 (the baseline) against chunked prefill: steps to drain the queue, tokens per step and
  mean budget use. Without chunking, a long prompt at the head of the queue waits until the
  decodes leave room for all of it, and the budget idles meanwhile.
- Level 3: chunked prefill with a KV cache of num_kv_blocks blocks of 16 tokens, swept from
  barely enough for the largest request up to the most the unlimited run holds between steps
  (about where preemption stops): preemptions and recomputed tokens.
"""

from __future__ import annotations

import random
from pathlib import Path

from harness.bench import Table, pyplot, save_plots

BUDGET = 512
BLOCK_SIZE = 16


def workload(n: int, seed: int = 0) -> list[tuple[int, int, int]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        prompt = rng.randint(256, 512) if rng.random() < 0.2 else rng.randint(16, 128)
        out.append((i, prompt, rng.randint(8, 128)))
    return out


def simulate(impl, requests, **kwargs) -> dict:
    sched = impl.Scheduler(BUDGET, **kwargs)
    for rid, prompt_len, max_new_tokens in requests:
        sched.add_request(rid, prompt_len, max_new_tokens)
    steps = tokens = preemptions = 0
    used: list[float] = []
    peak = 0
    while sched.has_unfinished():
        plan = sched.step()
        if sched.free_blocks is not None:
            peak = max(peak, kwargs["num_kv_blocks"] - sched.free_blocks)
        steps += 1
        tokens += plan.num_tokens
        preemptions += len(plan.preempted)
        used.append(plan.num_tokens / BUDGET)
    prompt_tokens = sum(p for _, p, _ in requests)
    decode_tokens = sum(m for _, _, m in requests)
    return dict(steps=steps, tokens_per_step=tokens / steps, budget_use=sum(used) / steps,
                preemptions=preemptions, recomputed=tokens - prompt_tokens - decode_tokens,
                use_trace=used, peak_blocks=peak)


def main(impl, *, quick: bool = False, out: Path | None = None) -> Table:
    requests = workload(80 if quick else 400)
    largest = max(-(-(p + m) // BLOCK_SIZE) for _, p, m in requests)
    table = Table("scheduler", "KV blocks", "steps", "tokens/step", "budget use", "preempted",
                  "recomputed", "steps vs L1")
    runs = [("Level 1 (baseline)", None, {}), ("chunked", None, {"chunked_prefill": True})]
    # Blocks the chunked run holds at its peak when nothing limits them: enough never to preempt.
    peak = simulate(impl, requests, chunked_prefill=True, num_kv_blocks=10**9,
                    block_size=BLOCK_SIZE)["peak_blocks"]
    sweep = sorted({min(largest * k, peak) for k in (1, 2, 4, 8, 16, 32)} | {peak})
    runs += [("chunked+KV", n, {"chunked_prefill": True, "num_kv_blocks": n,
                                         "block_size": BLOCK_SIZE}) for n in sweep]
    results = []
    for name, blocks, kwargs in runs:
        r = simulate(impl, requests, **kwargs)
        results.append((name, blocks, r))
        baseline = results[0][2]["steps"]
        table.add(name, "-" if blocks is None else blocks, r["steps"],
                  f"{r['tokens_per_step']:.1f}", f"{r['budget_use']:.1%}", r["preemptions"],
                  r["recomputed"], f"{r['steps'] / baseline:.2f}x")
    if out is not None:
        _plot(results, Path(out))
    return table


def _plot(results, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    paged = [(blocks, r) for _, blocks, r in results[2:]]
    blocks = [b for b, _ in paged]

    def draw(say):
        fig, (left, right) = pyplot().subplots(1, 2, figsize=(11, 4.2))
        for name, _, r in results[:2]:
            left.plot([100 * u for u in r["use_trace"]], linewidth=0.8,
                      label=say(f"{name}: {r['steps']} steps", f"{name}：{r['steps']} 步"))
        left.set(xlabel=say("scheduler step", "排程步數"),
                 ylabel=say("token budget used (%)", "用掉的 token 預算（%）"), ylim=(0, 105),
                 title=say(f"Budget use per step (budget {BUDGET} tokens)",
                           f"每一步的預算使用率（預算 {BUDGET} 個 token）"))
        left.legend(loc="lower left")
        right.plot(blocks, [r["preemptions"] for _, r in paged], "o-",
                   label=say("preemptions", "搶佔次數"))
        right.plot(blocks, [r["recomputed"] / 100 for _, r in paged], "s--",
                   label=say("recomputed tokens / 100", "重算的 token 數 / 100"))
        right.plot(blocks, [r["steps"] / 10 for _, r in paged], "^:",
                   label=say("steps / 10", "步數 / 10"))
        right.set(xscale="log", ylim=(0, None),
                  xlabel=say(f"num_kv_blocks (block_size {BLOCK_SIZE}, log scale)",
                             f"num_kv_blocks（block_size {BLOCK_SIZE}，對數刻度）"),
                  ylabel=say("count (scaled as the legend says)", "次數（依圖例縮放）"),
                  title=say("Chunked prefill with a paged KV cache",
                            "Chunked prefill 搭配分頁式 KV cache"))
        right.legend()
        fig.tight_layout()
        return fig

    save_plots(out / "prefill_decode_scheduler.png", draw)
