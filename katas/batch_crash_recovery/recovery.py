"""Kata batch_crash_recovery: retry a crashed batch safely, isolate the poison request, resume
streams without sending a token twice. Read the prompt with `kata show batch_crash_recovery`,
then grade with `pytest katas/batch_crash_recovery`. Standard library only."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass


class WorkerCrash(Exception):
    """The worker died: the whole batch's work is lost (for a slot model: every slot's cache)."""


@dataclass(frozen=True)
class Outcome:
    request_id: Hashable
    ok: bool
    result: object = None  # when ok
    attempts: int = 0  # attempts charged to it, counting the run that succeeded
    error: str | None = None  # when not ok: why, in words (result is None then)


OnDone = Callable[[Outcome], None]


class BatchRunner:
    """Levels 1 and 2."""

    def __init__(self, run_batch: Callable[[list[object]], list[object]], *,
                 max_batch_size: int, max_attempts: int = 3, bisect: bool = False):
        """`run_batch(payloads)` returns one result per payload, in order; any exception, or
        a result that is not a list/tuple of exactly that many results, is a crash.
        Raise ValueError if max_batch_size < 1, max_attempts < 1 or run_batch is not callable."""
        raise NotImplementedError

    def submit(self, request_id: Hashable, payload: object, on_done: OnDone) -> None:
        """Queue a request; `on_done(Outcome)` runs exactly once per call. `request_id` is an
        idempotency key for the runner's lifetime: the same id with an equal payload replays
        its outcome (at once if known), with another payload raises ValueError."""
        raise NotImplementedError

    def run(self) -> None:
        """Run batches until every submitted request has its outcome."""
        raise NotImplementedError


class StreamingRunner:
    """Level 3: continuous batching over a slot model that may raise WorkerCrash."""

    def __init__(self, slot_model, *, num_slots: int, max_attempts: int = 3):
        """`slot_model.reset_slot(slot, tokens)` loads a slot; `slot_model.decode(slots)` returns
        the next token of each listed slot. Either may raise WorkerCrash, which wipes every slot.
        Raise ValueError if num_slots < 1 or max_attempts < 1."""
        raise NotImplementedError

    def submit(self, request_id: Hashable, prompt: list[int], max_tokens: int,
               on_token: Callable[[Hashable, int], None], on_done: OnDone) -> None:
        """Queue a stream. Every token goes to `on_token(request_id, token)` exactly once; then
        `on_done(Outcome)` once. Raise ValueError for an empty prompt, max_tokens < 1, a
        callback that is not callable, or a request_id already waiting or running."""
        raise NotImplementedError

    def run(self) -> None:
        """Step until nothing is waiting or running."""
        raise NotImplementedError
