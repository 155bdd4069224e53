"""`kata bench batch_crash_recovery`: what a crash costs under each recovery policy.

- Batches: 20 batches of 64 requests, each holding one poison request (a payload the worker
  always crashes on) at a seeded random position, max_attempts = 3. Whole-batch retry (Level 1,
  the baseline) against bisection (Level 2), both from the implementation under test: worker
  calls, crashes, request-runs lost in crashed calls, and innocent requests that failed. A clean
  run (no poison) shows what bisection costs when nothing goes wrong: nothing.
- Streams: 8 streams of 256 tokens (16-token prompts) on 8 slots of the harness' FakeSlotModel,
  with the worker crashing on every k-th decode call for as long as the uninterrupted run would
  last (floor(256 / k) crashes). Resume (Level 3, the implementation under test) against restart
  from the prompt (the baseline, written here): decode calls, generated tokens thrown away and
  made again, tokens a naive client would receive twice, and prefill tokens reloaded (the price
  resume pays instead: the KV cache of prompt + delivered tokens is rebuilt, not regenerated).

Every figure is a count, so it is exact and the same on every machine.
"""

from __future__ import annotations

import random
from pathlib import Path

from harness.bench import Table
from harness.suites.batch_crash_recovery.fakes import CrashingSlots, Worker, never, poison

BATCH, BATCHES, MAX_ATTEMPTS = 64, 20, 3
STREAMS, TOKENS, PROMPT = 8, 256, 16
EVERY = (16, 64, 128)


def run_batches(impl, bisect: bool, poisoned: bool, batches: int) -> dict:
    rng = random.Random(0)
    bad = {("p", b * BATCH + rng.randrange(BATCH)) for b in range(batches)} if poisoned else set()
    worker = Worker(poison(*bad) if bad else never, limit=10**6)
    runner = impl.BatchRunner(worker, max_batch_size=BATCH, max_attempts=MAX_ATTEMPTS,
                              bisect=bisect)
    outcomes = {}
    for i in range(batches * BATCH):
        runner.submit(i, ("p", i), lambda o: outcomes.__setitem__(o.request_id, o))
    runner.run()
    crashed = [c for c in worker.calls if any(p in bad for p in c)]
    return {"calls": len(worker.calls), "crashes": worker.crashes,
            "lost": sum(len(c) for c in crashed),
            "innocents failed": sum(not o.ok and ("p", i) not in bad
                                    for i, o in outcomes.items())}


class Restart:
    """The baseline: on a crash every stream starts over from its prompt. The client keeps what
    it already has, so regenerated tokens it has seen are dropped (and counted)."""

    def __init__(self, slot_model, num_slots: int, crash_exc: type[Exception]):
        self.slot_model, self.num_slots, self.crash_exc = slot_model, num_slots, crash_exc
        self.duplicates = 0

    def run(self, prompts: list[list[int]], max_tokens: int) -> list[list[int]]:
        delivered = [[] for _ in prompts]
        made = [[] for _ in prompts]
        live = list(range(len(prompts)))  # one slot per stream here: num_slots >= streams
        loaded = False
        while live:
            try:
                if not loaded:
                    for s in live:
                        self.slot_model.reset_slot(s, prompts[s])
                        made[s] = []
                    loaded = True
                tokens = self.slot_model.decode(live)
            except self.crash_exc:
                loaded = False
                continue
            for s, t in zip(live, tokens, strict=True):
                made[s].append(t)
                if len(made[s]) <= len(delivered[s]):
                    self.duplicates += 1  # the client already has this one
                else:
                    delivered[s].append(t)
            live = [s for s in live if len(made[s]) < max_tokens]
        return delivered


def stream_slots(impl, every: int | None):
    crashes = () if every is None else tuple(range(every, TOKENS + 1, every))
    return CrashingSlots(impl.WorkerCrash, STREAMS, decodes=crashes, limit=10**6)


def prompts(n: int) -> list[list[int]]:
    rng = random.Random(1)
    return [[100 + i, *(rng.randrange(50) for _ in range(PROMPT - 1))] for i in range(n)]


def run_resume(impl, every: int | None, tokens: int) -> tuple[dict, list]:
    slots = stream_slots(impl, every)
    runner = impl.StreamingRunner(slots, num_slots=STREAMS, max_attempts=10**6)
    got: dict = {}
    for i, p in enumerate(prompts(STREAMS)):
        runner.submit(i, p, tokens, lambda rid, t: got.setdefault(rid, []).append(t),
                      lambda o: None)
    runner.run()
    return counts(slots, 0), [got[i] for i in range(STREAMS)]


def run_restart(impl, every: int | None, tokens: int) -> tuple[dict, list]:
    slots = stream_slots(impl, every)
    restart = Restart(slots, STREAMS, impl.WorkerCrash)
    got = restart.run(prompts(STREAMS), tokens)
    return counts(slots, restart.duplicates), got


def counts(slots: CrashingSlots, duplicates: int) -> dict:
    decodes = [e for e in slots.log if e[0] == "decode"]
    made = sum(len(e[1]) for e in decodes)
    reloads = [e for e in slots.log if e[0] == "reset"][STREAMS:]  # after the first loads
    return {"calls": slots.num_decodes, "crashes": slots.crashes, "made": made,
            "duplicates": duplicates, "reloaded": sum(len(e[2]) for e in reloads)}


def ratio(x: int, base: int) -> str:
    return "-" if base == 0 else f"{x / base:.2f}x"


def main(impl, *, quick: bool = False, out: Path | None = None) -> Table:
    batches, tokens = (4, 64) if quick else (BATCHES, TOKENS)
    table = Table("workload", "policy", "worker calls", "calls / baseline", "crashes",
                  "work lost or redone", "lost / baseline", "innocents failed",
                  "duplicates to a naive client", "prefill tokens reloaded")
    n = batches * BATCH
    for poisoned in (True, False):
        base = run_batches(impl, bisect=False, poisoned=poisoned, batches=batches)
        bis = run_batches(impl, bisect=True, poisoned=poisoned, batches=batches)
        label = f"{n} requests, batches of {BATCH}" + (", 1 poison each" if poisoned else
                                                       ", no poison")
        for name, r in (("whole-batch retry (baseline)", base), ("bisection", bis)):
            table.add(label, name, r["calls"], ratio(r["calls"], base["calls"]), r["crashes"],
                      f"{r['lost']} request-runs",
                      ratio(r["lost"], base["lost"]), r["innocents failed"], "-", "-")
    for every in EVERY:
        if every >= tokens:
            continue
        label = f"{STREAMS} streams x {tokens} tokens, crash every {every} decodes"
        res, got_res = run_resume(impl, every, tokens)
        rst, got_rst = run_restart(impl, every, tokens)
        clean, want = run_resume(impl, None, tokens)
        assert got_res == want == got_rst, "a policy changed the tokens"
        ideal = clean["made"]
        for name, r in (("restart from prompt (baseline)", rst), ("resume", res)):
            redone = r["made"] - ideal
            table.add(label, name, r["calls"], ratio(r["calls"], rst["calls"]), r["crashes"],
                      f"{redone} tokens regenerated",
                      ratio(redone, rst["made"] - ideal), "-", r["duplicates"], r["reloaded"])
    return table
