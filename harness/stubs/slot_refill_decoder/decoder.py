"""Kata slot_refill_decoder: a continuous-batching decoding engine. Read the prompt with
`kata show slot_refill_decoder`, then grade with `pytest katas/slot_refill_decoder`.
Standard library only."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass


@dataclass
class Request:
    request_id: Hashable
    prompt: list[int]  # at least one token
    max_tokens: int  # most tokens to generate, prompt excluded; 0 completes at once
    stop_token: int | None = None
    stop_sequence: list[int] | None = None  # None, or at least one token


@dataclass
class Completion:
    request_id: Hashable
    tokens: list[int]  # generated tokens, prompt excluded, stop token / stop sequence removed
    finish_reason: str  # "stop" or "length"


Callback = Callable[[Completion], None]


class DecodingEngine:
    def __init__(self, model_next: Callable[[list[list[int]]], Sequence[int]], batch_size: int):
        """`model_next(prefixes)` returns one next token per prefix (prompt + tokens so far),
        in order. At most `batch_size` requests are active at once.
        Raise ValueError if batch_size < 1."""
        raise NotImplementedError

    def submit(self, request: Request, callback: Callback) -> None:
        """Append `request` to the FIFO waiting queue; nothing runs until step() or run().
        `callback(Completion)` runs exactly once, in the step where the request finishes.
        Raise ValueError for max_tokens < 0, an empty prompt, an empty stop_sequence, or a
        request_id that is already waiting or active."""
        raise NotImplementedError

    def step(self) -> int:
        """One decoding iteration: refill free slots from the queue (FIFO), call model_next
        once with the prefixes of the active requests (not at all if none), append one token
        to each, finish requests (stop_token, then stop_sequence, then max_tokens) and run
        their callbacks. Return how many sequences were sent to the model.
        Raise RuntimeError if the model returns the wrong number of tokens."""
        raise NotImplementedError

    def run(self) -> None:
        """Call step() until nothing is active or waiting."""
        raise NotImplementedError

    @property
    def num_active(self) -> int:
        """Requests holding a slot."""
        raise NotImplementedError

    @property
    def num_waiting(self) -> int:
        """Requests in the waiting queue."""
        raise NotImplementedError


class SlotDecodingEngine(DecodingEngine):
    """Level 3: the same engine over a KV-cached slot model.

    `slot_model.reset_slot(slot_id, prompt)` loads a prompt into slot 0 <= slot_id < batch_size;
    call it whenever a request takes a slot. `slot_model.decode(slot_ids) -> list[int]` returns
    the next token of each listed slot and appends it to that slot's cache."""

    def __init__(self, slot_model, batch_size: int):
        raise NotImplementedError
