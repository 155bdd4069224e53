"""`kata bench slot_refill_decoder`: continuous batching (refill a slot as soon as it frees)
against static batching (refill only when the whole batch is done), on long-tailed output lengths.

The workload: 2,000 requests with random prompts and output lengths 1 + floor(10 * Lomax(1.5)),
capped at 256 (mean about 17 tokens, a few hit the cap). Lengths come from max_tokens alone, no
stop rules, so both policies generate the same tokens and every count below is exact.

- Model calls are counted on all 2,000 requests with an instant slot model: the number depends on
  the schedule only, not on the model. The lower bound on calls is max(ceil(total tokens / B),
  longest request); ideal FIFO refill is simulated independently here.
- Tokens/s is measured on the ToyLM's KV-cached slots: every request on a GPU, the first 256 on
  a CPU (where static batching's idle slots would take minutes), the same ones for both policies.
  Without torch a HashModel slot fake stands in and the column says so; with quick=True the
  column is left out (a fake on a few requests times its own overhead, not the schedule).
"""

from __future__ import annotations

import math
import time
from collections import deque
from contextlib import nullcontext
from pathlib import Path

import numpy as np

from harness.bench import Table, pyplot, save_plots
from harness.fakes import FakeSlotModel, HashModel

REQUESTS, CAP, CPU_TIMED = 2000, 256, 256
BATCH_SIZES = (8, 32)


def workload(n: int, cap: int, seed: int = 0) -> list[tuple[list[int], int]]:
    """(prompt, max_tokens) pairs with long-tailed output lengths."""
    rng = np.random.default_rng(seed)
    lengths = np.minimum(cap, 1 + np.floor(10 * rng.pareto(1.5, n))).astype(int)
    prompts = [rng.integers(0, 128, rng.integers(4, 17)).tolist() for _ in range(n)]
    return list(zip(prompts, lengths.tolist(), strict=True))


class Occupancy:
    """Wraps a slot model and keeps how many slots each decode call used."""

    def __init__(self, slot_model=None):
        self.slot_model, self.used = slot_model, []

    def reset_slot(self, slot: int, prompt: list[int]) -> None:
        if self.slot_model is not None:
            self.slot_model.reset_slot(slot, prompt)

    def decode(self, slots: list[int]) -> list[int]:
        self.used.append(len(slots))
        if self.slot_model is None:  # instant: the tokens do not matter without stop rules
            return [0] * len(slots)
        return self.slot_model.decode(slots)


def run_continuous(impl, slot_model, requests, batch_size: int) -> tuple[float, dict]:
    engine = impl.SlotDecodingEngine(slot_model, batch_size)
    got: dict[int, list[int]] = {}
    for i, (prompt, n) in enumerate(requests):
        engine.submit(impl.Request(i, prompt, n),
                      lambda c: got.__setitem__(c.request_id, list(c.tokens)))
    start = time.perf_counter()
    engine.run()
    return time.perf_counter() - start, got


def run_static(slot_model, requests, batch_size: int) -> tuple[float, dict]:
    """The baseline: take the next batch_size requests, decode until every one of them is
    done, and only then take the next ones."""
    got: dict[int, list[int]] = {}
    start = time.perf_counter()
    for first in range(0, len(requests), batch_size):
        batch = requests[first : first + batch_size]
        tokens: list[list[int]] = [[] for _ in batch]
        for slot, (prompt, _) in enumerate(batch):
            slot_model.reset_slot(slot, prompt)
        live = [slot for slot, (_, n) in enumerate(batch) if n > 0]
        while live:
            for slot, token in zip(live, slot_model.decode(live), strict=True):
                tokens[slot].append(token)
            live = [slot for slot in live if len(tokens[slot]) < batch[slot][1]]
        got.update((first + slot, t) for slot, t in enumerate(tokens))
    return time.perf_counter() - start, got


def ideal_fifo_calls(lengths: list[int], batch_size: int) -> int:
    queue, active, calls = deque(n for n in lengths if n > 0), [], 0
    while queue or active:
        while len(active) < batch_size and queue:
            active.append(queue.popleft())
        calls += 1
        active = [n - 1 for n in active if n > 1]
    return calls


def timed_model(quick: bool):
    """(slot model factory, how many requests to time, label) for the tokens/s column."""
    hashed = HashModel(vocab_size=128)
    if quick:  # seconds, not minutes: no torch
        return (lambda b: FakeSlotModel(hashed, b)), 64, "HashModel slot fake, quick"
    try:
        from harness.toylm import ToyLM  # needs torch
    except ImportError:
        return (lambda b: FakeSlotModel(hashed, b)), CPU_TIMED, "HashModel slot fake, no torch"
    lm = ToyLM(seed=0)
    if lm.device.type == "cuda":
        return lm.slot_cache, REQUESTS, "ToyLM cuda"
    return lm.slot_cache, CPU_TIMED, "ToyLM cpu"


def plot(occupancy: dict, path: Path) -> None:
    def draw(say):
        # 8 in wide at 120 dpi: 960 px, shown at its own size in the docs' column.
        fig, axes = pyplot().subplots(len(BATCH_SIZES), 1, figsize=(8, 2.9 * len(BATCH_SIZES)))
        for ax, b in zip(np.atleast_1d(axes), BATCH_SIZES, strict=True):
            for policy, color, lw in (("static", "tab:red", 0.5),
                                      ("continuous", "tab:blue", 1.5)):
                used = occupancy[b, policy]
                ax.plot(range(1, len(used) + 1), used, lw=lw, color=color,
                        label=say(f"{policy}: {len(used)} model calls",
                                  f"{policy}：{len(used)} 次模型呼叫"))
            ax.set(title=say(f"batch {b}", f"batch {b}"),
                   xlabel=say("model call (step)", "模型呼叫（步）"),
                   ylabel=say("slots in use", "使用中的 slot"), ylim=(0, b * 1.05))
            ax.legend(loc="lower right")
        fig.suptitle(say("Slot occupancy over steps, long-tailed output lengths",
                         "各步的 slot 占用，輸出長度為長尾分布"))
        fig.tight_layout()
        return fig

    save_plots(path, draw)


def main(impl, *, quick: bool = False, out: Path | None = None) -> Table:
    n, cap = (300, 64) if quick else (REQUESTS, CAP)
    requests = workload(n, cap)
    lengths = [m for _, m in requests]
    factory, n_timed, label = timed_model(quick)
    timed = requests[:n_timed]
    timed_tokens = sum(m for _, m in timed)

    # Quick: a pure-Python fake on 64 requests, where per-call overhead, not the schedule,
    # decides tokens/s (continuous came out slower than static): noise, so not printed.
    speed = [] if quick else [f"tokens/s ({label}, {len(timed)} requests)"]
    table = Table("batch", "policy", f"model calls ({n} requests)", "ideal FIFO calls",
                  "lower bound", "calls / lower bound",
                  "static / continuous calls (goal >= 5 at 32)", *speed, "same tokens as static")
    if quick:
        table.notes.append("tokens/s is left out: at quick sizes it measures a fake's per-call "
                           "overhead, not the schedule. Run without --quick to time the ToyLM.")
    occupancy = {}
    with nullcontext() if quick else _one_torch_thread():
        for b in BATCH_SIZES:
            bound = max(math.ceil(sum(lengths) / b), max(lengths))
            counted = {"continuous": Occupancy(), "static": Occupancy()}
            run_continuous(impl, counted["continuous"], requests, b)
            run_static(counted["static"], requests, b)
            secs_c, toks_c = run_continuous(impl, factory(b), timed, b)
            secs_s, toks_s = run_static(factory(b), timed, b)
            calls = {p: len(o.used) for p, o in counted.items()}
            occupancy.update(((b, p), o.used) for p, o in counted.items())
            speed_c, speed_s = ([], []) if quick else (
                [f"{timed_tokens / secs_c:,.0f}"], [f"{timed_tokens / secs_s:,.0f}"])
            table.add(b, "continuous", calls["continuous"], ideal_fifo_calls(lengths, b), bound,
                      f"{calls['continuous'] / bound:.3f}",
                      f"{calls['static'] / calls['continuous']:.2f}x fewer",
                      *speed_c, "yes" if toks_c == toks_s else "NO")
            table.add(b, "static (baseline)", calls["static"], "-", bound,
                      f"{calls['static'] / bound:.3f}", "1.00x", *speed_s, "-")
    if out is not None:
        plot(occupancy, Path(out) / "slot_refill_decoder-occupancy.png")
    return table


def _one_torch_thread():
    try:
        from harness.toylm import one_thread
    except ImportError:  # no torch: the benchmark falls back to a pure-Python model
        return nullcontext()
    return one_thread()
