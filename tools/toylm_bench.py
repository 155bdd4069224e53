"""Greedy decoding speed, stateless against KV-cached: `python tools/toylm_bench.py`.

Stateless: every step runs model_next over the full prefixes. Cached: a slot cache, where
each step feeds one new token per slot. Both produce the same tokens; the table says so.
"""

import argparse
import datetime
import platform
import random
import time
from collections.abc import Callable

import torch

from harness.toylm.model import ToyLM

PROMPT_LEN, NEW_TOKENS, BATCH_SIZES = 32, 64, (1, 8, 32, 64)


def stateless(model: ToyLM, prompts: list[list[int]], n: int) -> list[list[int]]:
    seqs = [list(p) for p in prompts]
    for _ in range(n):
        for seq, token in zip(seqs, model.model_next(seqs), strict=True):
            seq.append(token)
    return [seq[len(p) :] for seq, p in zip(seqs, prompts, strict=True)]


def cached(model: ToyLM, prompts: list[list[int]], n: int) -> list[list[int]]:
    cache, slots = model.slot_cache(len(prompts)), list(range(len(prompts)))
    for slot, prompt in zip(slots, prompts, strict=True):
        cache.reset_slot(slot, prompt)
    steps = [cache.decode(slots) for _ in range(n)]
    return [list(tokens) for tokens in zip(*steps, strict=True)]


def timed(run: Callable, model: ToyLM, prompts: list[list[int]]) -> tuple[list, float]:
    start = time.perf_counter()
    out = run(model, prompts, NEW_TOKENS)  # .tolist() in model_next/decode syncs CUDA
    return out, time.perf_counter() - start


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if "model name" in line)
    except (OSError, StopIteration):
        model = platform.processor() or platform.machine()
    return f"{model}, {torch.get_num_threads()} threads"


def bench(device: str) -> list[str]:
    model, rng = ToyLM(device=device), random.Random(0)
    for run in (stateless, cached):  # warm-up
        run(model, [[1, 2, 3], [4, 5]], 4)
    rows = []
    for batch in BATCH_SIZES:
        prompts = [
            [rng.randrange(model.vocab_size) for _ in range(PROMPT_LEN)] for _ in range(batch)
        ]
        slow, t_slow = timed(stateless, model, prompts)
        fast, t_fast = timed(cached, model, prompts)
        tokens = batch * NEW_TOKENS
        rows.append(
            f"| {device} | {batch} | {tokens / t_slow:,.0f} | {tokens / t_fast:,.0f} | "
            f"{t_slow / t_fast:.1f}x | {'yes' if slow == fast else 'NO'} |"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "cuda", "auto"], default="auto")
    parser.add_argument("--out", help="also write the table as Markdown to this path")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    devices = [args.device]
    if args.device == "auto":
        devices = ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]
    lines = [
        f"ToyLM greedy decoding, {datetime.date.today()}, torch {torch.__version__}, float64, "
        f"d_model 64, 2 layers; prompt {PROMPT_LEN} tokens, {NEW_TOKENS} new tokens each.",
        "",
        *(f"- {d}: {device_name(torch.device(d))}" for d in devices),
        "",
        "| device | batch | stateless tok/s | KV-cached tok/s | speed-up | same tokens |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for device in devices:
        lines += bench(device)
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
