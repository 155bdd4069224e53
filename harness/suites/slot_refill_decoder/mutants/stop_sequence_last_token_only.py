"""The stop sequence is sought only in the current step's token, missing ones that span steps.

A copy of the reference with that one mistake."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field


@dataclass
class Request:
    request_id: Hashable
    prompt: list[int]
    max_tokens: int
    stop_token: int | None = None
    stop_sequence: list[int] | None = None


@dataclass
class Completion:
    request_id: Hashable
    tokens: list[int]  # generated tokens, prompt excluded
    finish_reason: str  # "stop" or "length"


Callback = Callable[[Completion], None]


@dataclass
class Generation:
    """One request on its way through the engine. A fresh one per request, so nothing a
    previous occupant of the slot left behind (tokens, a partial stop match) can leak in."""

    request: Request
    callback: Callback
    tokens: list[int] = field(default_factory=list)

    @property
    def prefix(self) -> list[int]:
        return self.request.prompt + self.tokens

    def append(self, token: int) -> Completion | None:
        """Add one generated token; return the Completion if that finished the request."""
        r = self.request
        if token == r.stop_token:  # the stop token is never part of the output
            return self.finish("stop")
        self.tokens.append(token)
        stop = r.stop_sequence
        # A tail check over generated tokens only: it sees matches that span steps or overlap.
        if stop and [token] == list(stop):
            del self.tokens[-len(stop) :]
            return self.finish("stop")
        if len(self.tokens) == r.max_tokens:  # after the stop rules: a stop wins a tie
            return self.finish("length")
        return None

    def finish(self, reason: str) -> Completion:
        return Completion(self.request.request_id, self.tokens, reason)


class DecodingEngine:
    def __init__(self, model_next: Callable[[list[list[int]]], Sequence[int]], batch_size: int):
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model_next = model_next
        self.batch_size = batch_size
        self.waiting: deque[Generation] = deque()
        self.slots: list[Generation | None] = [None] * batch_size
        self.ids: set[Hashable] = set()  # request ids waiting or active

    @property
    def num_active(self) -> int:
        return sum(g is not None for g in self.slots)

    @property
    def num_waiting(self) -> int:
        return len(self.waiting)

    def submit(self, request: Request, callback: Callback) -> None:
        """Queue `request`; `callback(Completion)` runs once, in the step where it finishes."""
        if request.max_tokens < 0:
            raise ValueError(f"max_tokens must be >= 0, got {request.max_tokens}")
        if len(request.prompt) == 0:
            raise ValueError("prompt must hold at least one token, got an empty prompt")
        if request.stop_sequence is not None and len(request.stop_sequence) == 0:
            raise ValueError("stop_sequence must not be empty: pass None for no stop sequence")
        if request.request_id in self.ids:
            raise ValueError(
                f"request_id {request.request_id!r} is already waiting or active: "
                "ids must be unique until their request completes"
            )
        self.ids.add(request.request_id)
        self.waiting.append(Generation(request, callback))

    def step(self) -> int:
        """Refill free slots, decode one token for every active request, finish and report.
        Returns how many sequences were sent to the model."""
        done: list[tuple[Generation, Completion]] = []
        self.refill(done)
        live = [i for i, g in enumerate(self.slots) if g is not None]
        if live:
            tokens = self.next_tokens(live)
            if len(tokens) != len(live):
                raise RuntimeError(
                    f"the model returned {len(tokens)} tokens for {len(live)} sequences: "
                    f"expected exactly {len(live)}, one per sequence"
                )
            for slot, token in zip(live, tokens, strict=True):
                gen = self.slots[slot]
                completion = gen.append(token)
                if completion is not None:
                    done.append((gen, completion))
                    self.slots[slot] = None  # free for the next step's refill
        # Release every finished id before any callback runs, so a callback may resubmit it.
        for gen, _ in done:
            self.ids.discard(gen.request.request_id)
        for gen, completion in done:
            gen.callback(completion)
        return len(live)

    def run(self) -> None:
        """Step until nothing is active or waiting (callbacks may keep adding work)."""
        while self.num_active or self.num_waiting:
            self.step()

    def refill(self, done: list[tuple[Generation, Completion]]) -> None:
        """Fill free slots from the queue head, FIFO. A request with max_tokens == 0 completes
        here, without a slot, and the refill moves on to the next one."""
        for slot in range(self.batch_size):
            while self.slots[slot] is None and self.waiting:
                gen = self.waiting.popleft()
                if gen.request.max_tokens == 0:
                    done.append((gen, gen.finish("length")))
                else:
                    self.slots[slot] = gen
                    self.start(slot, gen.request)

    # --- how tokens are obtained: the one thing SlotDecodingEngine changes --------------

    def start(self, slot: int, request: Request) -> None:
        """A request has just taken `slot`. Stateless models need nothing here."""

    def next_tokens(self, slots: list[int]) -> Sequence[int]:
        return self.model_next([self.slots[s].prefix for s in slots])


class SlotDecodingEngine(DecodingEngine):
    """The same engine over a KV-cached slot model: only new tokens are fed, so every slot
    must be reset with its new request's prompt before its first decode."""

    def __init__(self, slot_model, batch_size: int):
        super().__init__(model_next=None, batch_size=batch_size)  # tokens come from slot_model
        self.slot_model = slot_model

    def start(self, slot: int, request: Request) -> None:
        self.slot_model.reset_slot(slot, request.prompt)

    def next_tokens(self, slots: list[int]) -> Sequence[int]:
        return self.slot_model.decode(slots)
