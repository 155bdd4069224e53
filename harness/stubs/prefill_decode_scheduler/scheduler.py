"""Kata prefill_decode_scheduler: an LLM serving scheduler as a state machine. Read the prompt with
`kata show prefill_decode_scheduler`, then grade with `pytest katas/prefill_decode_scheduler`.
Standard library only."""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass


class State(enum.Enum):
    WAITING = "waiting"  # queued, holds nothing
    PREFILL = "prefill"  # running, part of its prompt still to prefill (chunked prefill only)
    DECODE = "decode"  # running, whole prompt cached: generates one token per step
    FINISHED = "finished"  # generated its max_new_tokens-th token; never scheduled again


@dataclass(frozen=True)
class StepPlan:
    """What one step ran. The order inside decode, finished and preempted is yours to choose."""

    prefill: dict[Hashable, int]  # request id -> prompt tokens processed this step
    decode: list[Hashable]  # request ids that generated one token this step
    finished: list[Hashable]  # request ids that generated their last token this step
    preempted: list[Hashable] = ()  # Level 3: request ids sent back to the waiting queue

    @property
    def num_tokens(self) -> int:
        """Tokens this step processed: the prefill tokens plus one per decode."""
        raise NotImplementedError


class Scheduler:
    def __init__(self, token_budget: int, *, max_running: int | None = None,
                 chunked_prefill: bool = False,
                 num_kv_blocks: int | None = None, block_size: int = 16) -> None:
        """A scheduler with `token_budget` tokens per step.

        max_running: most requests running (PREFILL or DECODE) at once; default token_budget.
        chunked_prefill: Level 2, prompts may be split across steps.
        num_kv_blocks, block_size: Level 3, the KV cache in blocks of block_size tokens.
        Raises ValueError for a budget, max_running, num_kv_blocks or block_size out of range.
        """
        raise NotImplementedError

    def add_request(self, request_id: Hashable, prompt_len: int, max_new_tokens: int) -> None:
        """Queue a request (WAITING). Raises ValueError for a bad or reused id or sizes it could
        never run with (see the prompt)."""
        raise NotImplementedError

    def step(self) -> StepPlan:
        """Plan one timestep and apply it; states afterwards are those after the step ran."""
        raise NotImplementedError

    def state(self, request_id: Hashable) -> State:
        """The request's state; KeyError for an id never added."""
        raise NotImplementedError

    def has_unfinished(self) -> bool:
        """Whether any request is still WAITING, PREFILL or DECODE."""
        raise NotImplementedError

    @property
    def free_blocks(self) -> int | None:
        """KV blocks not held by a running request after the last step; None without
        num_kv_blocks."""
        raise NotImplementedError
