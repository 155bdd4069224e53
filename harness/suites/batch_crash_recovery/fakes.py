"""Workers that crash on demand: a run_batch for Levels 1-2, a crashing slot model for Level 3.

A fake called more often than a correct runner could raises Runaway, a BaseException: a runner
must treat every Exception as a crash, so an ordinary error would only feed the loop it reports.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from harness.fakes import FakeSlotModel, HashModel

Crash = Callable[[int, list], bool]  # (1-based call number, payloads) -> crash this call?


class Runaway(BaseException):
    """More calls than any correct runner makes: a retry loop that never ends."""


def result(payload: object) -> tuple:
    """What a healthy worker answers for one payload."""
    return ("done", payload)


def never(n: int, payloads: list) -> bool:
    return False


def poison(*bad: object) -> Crash:
    """Crashes whenever the batch holds one of `bad`: a deterministic poison request."""
    return lambda n, payloads: any(p in bad for p in payloads)


def on_calls(*numbers: int) -> Crash:
    """Crashes on the listed calls (1-based), whatever they hold."""
    return lambda n, payloads: n in numbers


def at_random(seed: int, rate: float) -> Crash:
    """Crashes on a call with probability `rate`, decided by (seed, call number) alone."""
    return lambda n, payloads: random.Random(f"{seed}:{n}").random() < rate


def either(*crashes: Crash) -> Crash:
    return lambda n, payloads: any(c(n, payloads) for c in crashes)


class Worker:
    """A run_batch that logs every call and crashes when `crash` says so, in the way `how`
    names: "raise" an exception (of `error`), or answer "short", "long", None or an iterator."""

    def __init__(self, crash: Crash = never, *, how: str = "raise",
                 error: type[Exception] = RuntimeError, limit: int = 500):
        self.crash, self.how, self.error, self.limit = crash, how, error, limit
        self.calls: list[list] = []
        self.crashes = 0
        self.hook: Callable[[int, list], None] | None = None  # runs inside a call

    def __call__(self, payloads: list) -> object:
        self.calls.append(list(payloads))
        n = len(self.calls)
        if n > self.limit:
            raise Runaway(f"run_batch called more than {self.limit} times: a retry loop?")
        if self.hook is not None:
            self.hook(n, payloads)
        good = [result(p) for p in payloads]
        if not self.crash(n, list(payloads)):
            return good
        self.crashes += 1
        if self.how == "raise":
            raise self.error(f"worker died on call {n}")
        return {"short": good[:-1], "long": [*good, ("done", "extra")], "none": None,
                "iterator": iter(good)}[self.how]


class CrashingSlots:
    """Wraps a slot model (by default the harness' FakeSlotModel over a HashModel) so that
    chosen calls raise `crash_exc` after wiping every slot, as a dead worker would.

    Crashes: the listed decode calls and reset calls (each numbered from 1), any reset whose
    tokens start with a `poison` token, and any call at random with `rate` (seeded).
    `log` keeps ("reset", slot, tokens), ("decode", slots) and ("crash", kind) in call order.
    """

    def __init__(self, crash_exc: type[Exception], num_slots: int, *, model=None, inner=None,
                 decodes: tuple[int, ...] = (), resets: tuple[int, ...] = (),
                 poison: tuple[int, ...] = (), rate: float = 0.0, seed: int = 0,
                 limit: int = 2000):
        self.model = model if model is not None else HashModel(vocab_size=50, seed=seed)
        self.inner = inner if inner is not None else FakeSlotModel(self.model, num_slots)
        self.crash_exc = crash_exc
        self.crash_decodes, self.crash_resets, self.poison = set(decodes), set(resets), set(poison)
        self.rng, self.rate, self.limit = random.Random(seed), rate, limit
        self.log: list[tuple] = []
        self.num_decodes = self.num_resets = self.crashes = 0

    def reset_slot(self, slot: int, tokens: list[int]) -> None:
        self.num_resets += 1
        self._tick(self.num_resets in self.crash_resets or tokens[0] in self.poison, "reset")
        self.inner.reset_slot(slot, tokens)
        self.log.append(("reset", slot, tuple(tokens)))

    def decode(self, slots: list[int]) -> list[int]:
        self.num_decodes += 1
        self._tick(self.num_decodes in self.crash_decodes, "decode")
        out = self.inner.decode(slots)
        self.log.append(("decode", tuple(slots)))
        return out

    def _tick(self, planned: bool, kind: str) -> None:
        if self.num_decodes + self.num_resets > self.limit:
            raise Runaway(f"more than {self.limit} slot-model calls: a retry loop?")
        if planned or (self.rate and self.rng.random() < self.rate):
            self.crashes += 1
            self.wipe()
            self.log.append(("crash", kind))
            raise self.crash_exc(f"worker died in {kind}")

    def wipe(self) -> None:
        """Every slot's cache is lost: a decode before the next reset_slot is an error."""
        if isinstance(self.inner.tokens, dict):  # the ToyLM's SlotCache
            self.inner.tokens.clear()
        else:  # FakeSlotModel
            self.inner.tokens = [None] * len(self.inner.tokens)
