"""Pure-Python stand-ins for a language model, fast enough for hundreds of test cases.

Every model here is a callable `model_next(prefixes) -> next tokens`, greedy and stateless,
except FakeSlotModel, which adds slots on top of one.
"""

import hashlib
from abc import ABC, abstractmethod
from array import array

from harness.stopping import ModelNext, generate_with


class _Stateless(ABC):
    """A model_next built from a per-prefix next_token, plus the solo generate reference."""

    @abstractmethod
    def next_token(self, prefix: tuple[int, ...]) -> int: ...

    def __call__(self, prefixes: list[list[int]]) -> list[int]:
        return [self.next_token(tuple(p)) for p in prefixes]

    def generate(self, prompt: list[int], max_tokens: int, stop_token: int | None = None,
                 stop_sequence: list[int] | None = None) -> list[int]:
        """Solo greedy reference (see harness.stopping.generate_with for the stop rules)."""
        return generate_with(self, prompt, max_tokens, stop_token, stop_sequence)


class HashModel(_Stateless):
    """Next token = a stable hash of (seed, whole prefix) mod vocab_size."""

    def __init__(self, vocab_size: int = 50, seed: int = 0):
        self.vocab_size, self.seed = vocab_size, seed

    def next_token(self, prefix: tuple[int, ...]) -> int:
        # blake2b, not hash(): the same on every run and machine.
        digest = hashlib.blake2b(array("q", [self.seed, *prefix]).tobytes(), digest_size=8)
        return int.from_bytes(digest.digest(), "little") % self.vocab_size


class ScriptedModel(_Stateless):
    """Each registered prompt continues with its planned tokens, so a test decides exactly
    when each request meets its stop token or sequence."""

    def __init__(self, plans: dict[tuple[int, ...], list[int]]):
        self.plans = {tuple(prompt): list(plan) for prompt, plan in plans.items()}
        self.lengths = sorted({len(prompt) for prompt in self.plans}, reverse=True)

    def next_token(self, prefix: tuple[int, ...]) -> int:
        # AssertionError, not ValueError: a broken script is a bug in the test, and code
        # under test must not mistake it for a rejected request.
        for n in self.lengths:  # longest registered prompt first
            if n <= len(prefix) and prefix[:n] in self.plans:
                plan, i = self.plans[prefix[:n]], len(prefix) - n
                if i >= len(plan):
                    raise AssertionError(f"plan for prompt {list(prefix[:n])} is exhausted: it has "
                                         f"{len(plan)} tokens and prefix {list(prefix)} asks for "
                                         f"token {i}")
                return plan[i]
        raise AssertionError(f"no scripted prompt is a prefix of {list(prefix)}")


class Recorder:
    """Wraps a model_next and keeps the prefixes of every call."""

    def __init__(self, model_next: ModelNext):
        self.model_next = model_next
        self.calls: list[list[tuple[int, ...]]] = []

    def __call__(self, prefixes: list[list[int]]) -> list[int]:
        self.calls.append([tuple(p) for p in prefixes])
        return list(self.model_next(prefixes))

    @property
    def batch_sizes(self) -> list[int]:
        return [len(call) for call in self.calls]

    @property
    def num_calls(self) -> int:
        return len(self.calls)


class FakeSlotModel:
    """A slot model on any stateless model_next: each slot is just a token list.

    A forgotten reset continues the old request's tokens, so its output then differs from
    solo decoding: that is how stale slot state shows up in tests.
    """

    def __init__(self, model_next: ModelNext, num_slots: int):
        self.model_next, self.num_slots = model_next, num_slots
        self.tokens: list[list[int] | None] = [None] * num_slots
        self.resets: list[tuple[int, tuple[int, ...]]] = []
        self.decodes: list[list[int]] = []

    def reset_slot(self, slot: int, prompt: list[int]) -> None:
        check_slot(slot, self.num_slots)
        if not prompt:
            raise ValueError(f"empty prompt for slot {slot}")
        self.tokens[slot] = list(prompt)
        self.resets.append((slot, tuple(prompt)))

    def decode(self, slots: list[int]) -> list[int]:
        if len(set(slots)) != len(slots):
            raise ValueError(f"duplicate slots in one decode call: {slots}")
        for slot in slots:
            check_slot(slot, self.num_slots)
            if self.tokens[slot] is None:
                raise ValueError(f"slot {slot} was decoded before any reset_slot")
        self.decodes.append(list(slots))
        if not slots:
            return []
        out = list(self.model_next([list(self.tokens[s]) for s in slots]))
        for slot, token in zip(slots, out, strict=True):
            self.tokens[slot].append(token)
        return out


def check_slot(slot: int, num_slots: int) -> None:
    """A slot model's check of a slot number, the fake's and the ToyLM's alike."""
    if not (isinstance(slot, int) and 0 <= slot < num_slots):
        raise ValueError(f"slot {slot!r} is out of range [0, {num_slots})")
