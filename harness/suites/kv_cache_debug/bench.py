"""`kata bench kv_cache_debug`: greedy `generate` on the KV cache against a loop that recomputes
the whole sequence with `forward` for every new token, and one batch of 32 prompts against 32
single-prompt calls.

The model: V 256, D 128, F 512, 4 layers, 4 heads, float64, seeded uniform weights; prompts of 16
tokens. One CPU thread: the ops are small, and on a busy 2-core machine two threads ran about 100x
slower. Times are CPU seconds of this process, steadier than wall time on a shared machine; the
ratios come from one run. Every mode must produce the same tokens; the table says whether it did.
"""

from __future__ import annotations

import time
from pathlib import Path

import torch

from harness.bench import Table, pyplot, save_plots
from harness.toylm.threads import one_thread

V, D, FFN, LAYERS, HEADS, PROMPT = 256, 128, 512, 4, 4, 16


def bench_weights(seed: int = 0) -> dict[str, torch.Tensor]:
    """The benchmark model's weights (also the end-to-end tests' model)."""
    gen = torch.Generator().manual_seed(seed)

    def u(bound: float, *shape: int, centre: float = 0.0) -> torch.Tensor:
        return centre + bound * (2 * torch.rand(*shape, generator=gen, dtype=torch.float64) - 1)

    w = {"embed": u(2, V, D), "ln_f.w": u(0.5, D, centre=1), "ln_f.b": u(0.3, D),
         "head": u(17 / D**0.5, D, V)}  # logits around 10
    for i in range(LAYERS):
        scale = D**-0.5  # keeps q, k, v and the block outputs near unit size at any width
        w |= {f"layers.{i}.{name}": t for name, t in {
            "ln1.w": u(0.5, D, centre=1), "ln1.b": u(0.3, D), "wq": u(3 * scale, D, D),
            "wk": u(3 * scale, D, D), "wv": u(3 * scale, D, D), "wo": u(scale, D, D),
            "ln2.w": u(0.5, D, centre=1), "ln2.b": u(0.3, D), "w1": u(2 * scale, D, FFN),
            "b1": u(0.3, FFN), "w2": u(FFN**-0.5, FFN, D), "b2": u(0.3, D)}.items()}
    return w


def bench_prompts(n: int, length: int = PROMPT, seed: int = 1) -> list[list[int]]:
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(0, V, (n, length), generator=gen).tolist()


def recompute(gpt, prompts: list[list[int]], new_tokens: int) -> list[list[int]]:
    """The baseline: greedy by recomputing the whole sequence for every token, no cache
    (prompts of one length, so no padding)."""
    ids = torch.tensor(prompts)
    for _ in range(new_tokens):
        logits, _ = gpt.forward(ids)
        ids = torch.cat([ids, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return ids[:, len(prompts[0]):].tolist()


def timed(run, *args):
    start = time.process_time()
    result = run(*args)
    return result, time.process_time() - start


def main(impl, *, quick: bool = False, out: Path | None = None) -> Table:
    with one_thread():
        return _run(impl, quick, out)


def _run(impl, quick: bool, out: Path | None) -> Table:
    gpt = impl.TinyGPT(bench_weights(), HEADS)
    lengths, batch, (solo_batch, solo_tokens) = ([4], 2, (4, 4)) if quick else \
        ([32, 128, 512], 8, (32, 64))
    gpt.generate(bench_prompts(2), 2)  # warm up
    columns = ["comparison", "batch", "new tokens", "impl s", "baseline s", "speed-up",
               "same tokens"]
    table = Table(*columns, *([] if quick else ["cached tokens/s"]))
    curve = []
    for n in lengths:
        prompts = bench_prompts(batch)
        cached, fast = timed(gpt.generate, prompts, n)
        slow_tokens, slow = timed(recompute, gpt, prompts, n)
        curve.append((n, fast, slow))
        table.add("generate on the cache / recompute every step", batch, n, f"{fast:.2f}",
                  f"{slow:.2f}", f"{slow / fast:.1f}x", "yes" if cached == slow_tokens else "NO",
                  *([] if quick else [f"{batch * n / fast:,.0f}"]))
    prompts = bench_prompts(solo_batch, seed=2)
    together, fast = timed(gpt.generate, prompts, solo_tokens)
    alone, slow = timed(lambda: [gpt.generate([p], solo_tokens)[0] for p in prompts])
    table.add(f"one batch / {solo_batch} single-prompt calls", solo_batch, solo_tokens,
              f"{fast:.2f}", f"{slow:.2f}", f"{slow / fast:.1f}x",
              "yes" if together == alone else "NO",
              *([] if quick else [f"{solo_batch * solo_tokens / fast:,.0f}"]))
    table.notes.append("One CPU thread; CPU seconds of this process. The cache grows by torch.cat, "
                       "which copies it at every step: tokens per second fall as it grows.")
    if out is not None and not quick:
        _plot(curve, Path(out))
    return table


def _plot(curve, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    steps = [n for n, _, _ in curve]

    def draw(say):
        fig, ax = pyplot().subplots(figsize=(7, 3.8))
        ax.plot(steps, [f for _, f, _ in curve], "o-",
                label=say("generate on the KV cache", "用 KV cache 生成"))
        ax.plot(steps, [s for _, _, s in curve], "s-",
                label=say("recompute every step", "每一步重算"))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(steps, [str(n) for n in steps])
        ax.tick_params(axis="x", which="minor", labelbottom=False)
        ax.set_xlabel(say("new tokens (batch 8, prompts of 16 tokens; log scale)",
                          "新 token 數（batch 8，prompt 長 16 個 token；對數刻度）"))
        ax.set_ylabel(say("CPU time, one thread (s, log scale)",
                          "單執行緒 CPU 時間（秒，對數刻度）"))
        ax.set_title(say("Greedy decoding: cached against recomputed",
                         "Greedy decoding：用 cache 與每步重算"))
        ax.legend(loc="upper left")
        fig.tight_layout()
        return fig

    save_plots(out / "kv_cache_debug.png", draw)
