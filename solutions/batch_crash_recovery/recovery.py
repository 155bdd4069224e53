"""Crash recovery for batched inference: retry with a budget, idempotency keys, bisection of a
poisoned batch, and streams that resume after a crash without sending a token twice."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field


class WorkerCrash(Exception):
    """The worker died: the whole batch's work is lost (for a slot model: every slot's cache)."""


@dataclass(frozen=True)
class Outcome:
    request_id: Hashable
    ok: bool
    result: object = None  # when ok
    attempts: int = 0  # attempts charged to it, counting the run that succeeded
    error: str | None = None  # when not ok: why, in words


OnDone = Callable[[Outcome], None]


def _check_positive(name: str, value: int) -> None:
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")


def _check_callable(name: str, value: object) -> None:
    if not callable(value):
        raise ValueError(f"{name} must be callable, got {value!r}")


@dataclass
class Entry:
    """One idempotency key, kept for the runner's lifetime: its payload, its outcome once known,
    and the on_done callbacks still waiting for it."""

    request_id: Hashable
    payload: object
    waiters: list[OnDone]
    attempts: int = 0
    outcome: Outcome | None = None


class BatchRunner:
    def __init__(self, run_batch: Callable[[list[object]], list[object]], *,
                 max_batch_size: int, max_attempts: int = 3, bisect: bool = False):
        _check_callable("run_batch", run_batch)
        _check_positive("max_batch_size", max_batch_size)
        _check_positive("max_attempts", max_attempts)
        self.run_batch = run_batch
        self.max_batch_size, self.max_attempts, self.bisect = max_batch_size, max_attempts, bisect
        self.entries: dict[Hashable, Entry] = {}
        self.queue: deque[Entry] = deque()

    def submit(self, request_id: Hashable, payload: object, on_done: OnDone) -> None:
        """Queue a request, or replay its key: a known outcome is handed over at once."""
        _check_callable("on_done", on_done)
        e = self.entries.get(request_id)
        if e is None:
            self.entries[request_id] = e = Entry(request_id, payload, [on_done])
            self.queue.append(e)
        elif not e.payload == payload:
            raise ValueError(f"request_id {request_id!r} was already submitted with another "
                             "payload: an idempotency key names one request")
        elif e.outcome is not None:
            on_done(e.outcome)
        else:
            e.waiters.append(on_done)  # still pending: it will get the same Outcome

    def run(self) -> None:
        """Run batches until every submitted request has its outcome."""
        while self.queue:
            batch = [self.queue.popleft() for _ in range(min(self.max_batch_size,
                                                              len(self.queue)))]
            if self.bisect:
                self.resolve(batch)
            else:
                self.retry(batch)

    def retry(self, batch: list[Entry]) -> None:
        """Level 1: a crash charges everyone in the batch; survivors go back to the front."""
        results, why = self.call(batch)
        if results is not None:
            return self.succeed(batch, results)
        for e in batch:
            e.attempts += 1
        again = [e for e in batch if e.attempts < self.max_attempts]
        self.queue.extendleft(reversed(again))  # first in the next batch, original order
        self.fail([e for e in batch if e.attempts >= self.max_attempts], why)

    def resolve(self, batch: list[Entry]) -> None:
        """Level 2: settle a batch completely, depth first. Splitting charges no one: only a
        request that crashes alone is to blame."""
        results, why = self.call(batch)
        if results is not None:
            return self.succeed(batch, results)
        if len(batch) > 1:
            half = (len(batch) + 1) // 2
            self.resolve(batch[:half])
            self.resolve(batch[half:])
            return
        (e,) = batch
        while True:
            e.attempts += 1
            if e.attempts >= self.max_attempts:
                return self.fail([e], why)
            results, why = self.call(batch)
            if results is not None:
                return self.succeed(batch, results)

    def call(self, batch: list[Entry]) -> tuple[list | tuple | None, str]:
        """(results, "") or (None, why): an exception or a malformed result is a crash."""
        try:
            results = self.run_batch([e.payload for e in batch])
        except Exception as exc:  # the worker died; anything else (BaseException) propagates
            return None, f"worker crashed: {exc!r}"
        if not isinstance(results, (list, tuple)) or len(results) != len(batch):
            return None, f"worker returned {results!r} for {len(batch)} payloads"
        return results, ""

    def succeed(self, batch: list[Entry], results) -> None:
        self.settle([Outcome(e.request_id, True, r, e.attempts + 1)
                     for e, r in zip(batch, results, strict=True)])

    def fail(self, batch: list[Entry], why: str) -> None:
        self.settle([Outcome(e.request_id, False, None, e.attempts,
                             f"gave up after {e.attempts} attempts; last: {why}") for e in batch])

    def settle(self, outcomes: list[Outcome]) -> None:
        # Store every outcome first, so a callback that resubmits a batchmate gets a replay.
        for o in outcomes:
            self.entries[o.request_id].outcome = o
        for o in outcomes:
            e = self.entries[o.request_id]
            waiters, e.waiters = e.waiters, []
            for on_done in waiters:
                on_done(o)


@dataclass
class Stream:
    """One streaming request. `tokens` are the ones already delivered: the client has them."""

    request_id: Hashable
    prompt: list[int]
    max_tokens: int
    on_token: Callable[[Hashable, int], None]
    on_done: OnDone
    tokens: list[int] = field(default_factory=list)
    attempts: int = 0
    loaded: bool = False  # does its slot's cache hold prompt + tokens?


class StreamingRunner:
    def __init__(self, slot_model, *, num_slots: int, max_attempts: int = 3):
        _check_positive("num_slots", num_slots)
        _check_positive("max_attempts", max_attempts)
        self.slot_model, self.num_slots, self.max_attempts = slot_model, num_slots, max_attempts
        self.waiting: deque[Stream] = deque()
        self.slots: list[Stream | None] = [None] * num_slots
        self.ids: set[Hashable] = set()  # waiting or running

    def submit(self, request_id: Hashable, prompt: list[int], max_tokens: int,
               on_token: Callable[[Hashable, int], None], on_done: OnDone) -> None:
        if len(prompt) == 0:
            raise ValueError("prompt must hold at least one token, got an empty prompt")
        _check_positive("max_tokens", max_tokens)
        _check_callable("on_token", on_token)
        _check_callable("on_done", on_done)
        if request_id in self.ids:
            raise ValueError(f"request_id {request_id!r} is already waiting or running")
        self.ids.add(request_id)
        self.waiting.append(Stream(request_id, list(prompt), max_tokens, on_token, on_done))

    def run(self) -> None:
        while self.waiting or any(s is not None for s in self.slots):
            self.step()

    def step(self) -> None:
        """Load slots, decode once, deliver; a crash anywhere ends the step with no tokens."""
        done: list[tuple[Stream, Outcome]] = []
        try:
            self.load()
            live = [slot for slot, s in enumerate(self.slots) if s is not None]
            tokens = self.slot_model.decode(live)
        except WorkerCrash:
            self.crash(done)
        else:
            self.deliver(live, tokens, done)
        for s, _ in done:  # free every id before any callback, so a callback may resubmit
            self.ids.discard(s.request_id)
        for s, outcome in done:
            s.on_done(outcome)

    def load(self) -> None:
        """Survivors of a crash first, in slot order, from what they already delivered; then
        free slots FIFO. A request holds its slot before it is loaded, so a crash while
        loading charges it too."""
        for slot, s in enumerate(self.slots):
            if s is not None and not s.loaded:
                self.slot_model.reset_slot(slot, s.prompt + s.tokens)
                s.loaded = True
        for slot in range(self.num_slots):
            if self.slots[slot] is None and self.waiting:
                s = self.slots[slot] = self.waiting.popleft()
                self.slot_model.reset_slot(slot, s.prompt)
                s.loaded = True

    def crash(self, done: list[tuple[Stream, Outcome]]) -> None:
        """Every slot holder is charged; every cache is gone; the budget-spent ones fail."""
        for slot, s in enumerate(self.slots):
            if s is None:
                continue
            s.attempts += 1
            s.loaded = False
            if s.attempts >= self.max_attempts:
                self.slots[slot] = None
                done.append((s, Outcome(s.request_id, False, None, s.attempts,
                                        f"worker crashed {s.attempts} times")))

    def deliver(self, live: list[int], tokens, done: list[tuple[Stream, Outcome]]) -> None:
        if not isinstance(tokens, (list, tuple)) or len(tokens) != len(live):
            raise RuntimeError(f"decode returned {tokens!r} for {len(live)} slots: "
                               f"expected a list of exactly {len(live)} tokens")
        for slot, token in zip(live, tokens, strict=True):
            s = self.slots[slot]
            s.tokens.append(token)
            s.on_token(s.request_id, token)  # delivered: never again, whatever happens next
            if len(s.tokens) == s.max_tokens:
                self.slots[slot] = None
                done.append((s, Outcome(s.request_id, True, list(s.tokens), s.attempts + 1)))
