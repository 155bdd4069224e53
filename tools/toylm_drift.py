"""How far batching moves logits and tokens, per dtype: `python tools/toylm_drift.py`.

Batched means one forward pass over prompts of mixed lengths (so with padding); solo means
each prompt alone. The figures in README.md come from this script.
"""

import argparse
import random

import torch

from harness.toylm.model import ToyLM


def measure(model: ToyLM, batches: int, batch_size: int, steps: int, seed: int = 0) -> dict:
    rng = random.Random(seed)
    r = {"max_drift": 0.0, "min_gap": float("inf"), "flips": 0, "diverged": 0, "prompts": 0}
    for _ in range(batches):
        prompts = [
            [rng.randrange(model.vocab_size) for _ in range(rng.randint(1, 64))]
            for _ in range(batch_size)
        ]
        batched = model.logits(prompts)
        solo = torch.cat([model.logits([p]) for p in prompts])
        top2 = solo.topk(2).values
        r["max_drift"] = max(r["max_drift"], (batched - solo).abs().max().item())
        r["min_gap"] = min(r["min_gap"], (top2[:, 0] - top2[:, 1]).min().item())
        r["flips"] += int((batched.argmax(-1) != solo.argmax(-1)).sum())
        # Whole greedy continuations, batched and KV-cached, against solo generate.
        cache = model.slot_cache(batch_size)
        for slot, p in enumerate(prompts):
            cache.reset_slot(slot, p)
        outs = [cache.decode(list(range(batch_size))) for _ in range(steps)]
        for p, out in zip(prompts, zip(*outs, strict=True), strict=True):
            r["diverged"] += list(out) != model.generate(p, steps)
        r["prompts"] += batch_size
    return r


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--steps", type=int, default=16)
    args = parser.parse_args()
    print("| dtype | max logit drift | smallest top-2 gap | token flips | diverged continuations |")
    print("| --- | --- | --- | --- | --- |")
    for dtype in (torch.float64, torch.float32):
        model = ToyLM(dtype=dtype, device=args.device)
        r = measure(model, args.batches, args.batch_size, args.steps)
        print(
            f"| {str(dtype).removeprefix('torch.')} | {r['max_drift']:.1e} | {r['min_gap']:.1e} | "
            f"{r['flips']} / {r['prompts']} | {r['diverged']} / {r['prompts']} |"
        )


if __name__ == "__main__":
    main()
