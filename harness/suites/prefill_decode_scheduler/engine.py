"""Run a prefill/decode scheduler's plans on a model's sequence KV cache.

The engine takes any object with the `prefill_decode_scheduler` API (add_request, step,
has_unfinished; step() returns a plan with prefill, decode, finished and preempted) and a model
with `sequence_cache()` (the ToyLM). Each plan is executed as the scheduler meant it:

- preempted: the sequence's cache is freed (recompute: it is rebuilt from zero later);
- decode: one batched forward over the listed sequences, each gaining one generated token;
- prefill: one batched forward over the chunks, taken from prompt + tokens generated so far,
  so a recompute re-feeds the tokens a request generated before it was preempted;
- finished: the sequence's cache is freed.

Each request's tokens must then equal what the model generates for it alone.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass


@dataclass
class Stats:
    steps: int = 0
    prefill_tokens: int = 0
    decode_tokens: int = 0
    preemptions: int = 0


class PrefillDecodeEngine:
    def __init__(self, scheduler, model) -> None:
        self.scheduler = scheduler
        self.cache = model.sequence_cache()
        self.prompts: dict[Hashable, list[int]] = {}
        self.outputs: dict[Hashable, list[int]] = {}
        self.fed: dict[Hashable, int] = {}  # tokens of prompt + outputs now in the cache
        self.stats = Stats()

    def add_request(self, request_id: Hashable, prompt: Sequence[int], max_new_tokens: int) -> None:
        self.scheduler.add_request(request_id, len(prompt), max_new_tokens)
        self.prompts[request_id] = list(prompt)
        self.outputs[request_id] = []
        self.fed[request_id] = 0

    def step(self):
        """Plan one step with the scheduler and run it on the cache; returns the plan."""
        plan = self.scheduler.step()
        for rid in plan.preempted:
            if rid in self.cache:
                self.cache.free(rid)
            self.fed[rid] = 0

        decode = list(plan.decode)
        for rid in decode:
            if self.fed[rid] != len(self.prompts[rid]) + len(self.outputs[rid]):
                raise RuntimeError(f"plan decodes {rid!r} before its whole sequence is cached")
        if decode:
            for rid, token in zip(decode, self.cache.decode(decode), strict=True):
                self.outputs[rid].append(token)
                self.fed[rid] += 1

        chunks = {}
        for rid, n in plan.prefill.items():
            sequence = self.prompts[rid] + self.outputs[rid]
            start = self.fed[rid]
            if not 1 <= n <= len(sequence) - start:
                raise RuntimeError(f"plan prefills {n} tokens of {rid!r}, "
                                   f"{len(sequence) - start} are left")
            chunks[rid] = sequence[start : start + n]
            self.fed[rid] += n
        if chunks:
            self.cache.prefill_batch(chunks)

        for rid in plan.finished:
            self.cache.free(rid)
        self.stats.steps += 1
        self.stats.prefill_tokens += sum(plan.prefill.values())
        self.stats.decode_tokens += len(decode)
        self.stats.preemptions += len(plan.preempted)
        return plan

    def run(self, max_steps: int = 100_000) -> dict[Hashable, list[int]]:
        """Step until every request finished; returns each request's generated tokens."""
        while self.scheduler.has_unfinished():
            if self.stats.steps >= max_steps:
                raise RuntimeError(f"requests still unfinished after {max_steps} steps")
            self.step()
        return self.outputs


def generate(scheduler, model, requests: dict[Hashable, tuple[Sequence[int], int]]):
    """Serve `requests` ({id: (prompt, max_new_tokens)}), all added up front; returns
    ({id: generated tokens}, Stats)."""
    engine = PrefillDecodeEngine(scheduler, model)
    for rid, (prompt, max_new_tokens) in requests.items():
        engine.add_request(rid, prompt, max_new_tokens)
    return engine.run(), engine.stats
