"""A chunk that needs more blocks than are free is shrunk to the tokens that fit.

Mutant: a copy of the reference solution with exactly this one mistake.
"""

from __future__ import annotations

import enum
import math
from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass


class State(enum.Enum):
    WAITING = "waiting"
    PREFILL = "prefill"
    DECODE = "decode"
    FINISHED = "finished"


@dataclass(frozen=True)
class StepPlan:
    prefill: dict[Hashable, int]  # request id -> prompt tokens processed this step
    decode: list[Hashable]  # request ids that generate one token this step
    finished: list[Hashable]  # request ids that generated their last token this step
    preempted: list[Hashable] = ()  # request ids sent back to the waiting queue this step

    @property
    def num_tokens(self) -> int:
        return sum(self.prefill.values()) + len(self.decode)


@dataclass(eq=False)  # identity: running.remove() must find this very request
class Request:
    id: Hashable
    prompt_len: int
    max_new_tokens: int
    state: State = State.WAITING
    generated: int = 0
    cached: int = 0  # tokens in the KV cache: prompt prefilled plus tokens generated

    @property
    def to_prefill(self) -> int:
        # After a preemption the generated tokens are part of the prompt to recompute.
        return self.prompt_len + self.generated - self.cached


class Scheduler:
    def __init__(self, token_budget: int, *, max_running: int | None = None,
                 chunked_prefill: bool = False,
                 num_kv_blocks: int | None = None, block_size: int = 16) -> None:
        if token_budget < 1:
            raise ValueError(f"token_budget must be >= 1, got {token_budget}")
        max_running = token_budget if max_running is None else max_running
        if not 1 <= max_running <= token_budget:
            raise ValueError(f"max_running must be in [1, token_budget={token_budget}], "
                             f"got {max_running}")
        if num_kv_blocks is not None and num_kv_blocks < 1:
            raise ValueError(f"num_kv_blocks must be >= 1 (or None), got {num_kv_blocks}")
        if block_size < 1:
            raise ValueError(f"block_size must be >= 1, got {block_size}")
        self.token_budget, self.max_running = token_budget, max_running
        self.chunked_prefill = chunked_prefill
        self.num_kv_blocks, self.block_size = num_kv_blocks, block_size
        self.num_free = math.inf if num_kv_blocks is None else num_kv_blocks
        self.requests: dict[Hashable, Request] = {}
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []  # ordered by latest admission, oldest first

    @property
    def free_blocks(self) -> int | None:
        return None if self.num_kv_blocks is None else self.num_free

    def add_request(self, request_id: Hashable, prompt_len: int, max_new_tokens: int) -> None:
        if request_id in self.requests:
            raise ValueError(f"request id {request_id!r} is already used; ids must be unique")
        if prompt_len < 1:
            raise ValueError(f"prompt_len must be >= 1, got {prompt_len}")
        if max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
        if not self.chunked_prefill and prompt_len > self.token_budget:
            raise ValueError(f"prompt_len={prompt_len} exceeds token_budget={self.token_budget} "
                             "and chunked prefill is off: the request could never run")
        if self.num_kv_blocks is not None:
            need = self._blocks(prompt_len + max_new_tokens)
            if need > self.num_kv_blocks:
                raise ValueError(f"request needs {need} KV blocks at its end, more than "
                                 f"num_kv_blocks={self.num_kv_blocks}")
            if not self.chunked_prefill and prompt_len + max_new_tokens - 1 > self.token_budget:
                raise ValueError(
                    f"prompt_len + max_new_tokens - 1 = {prompt_len + max_new_tokens - 1} exceeds "
                    f"token_budget={self.token_budget}: a recompute after preemption could "
                    "never run without chunked prefill")
        request = Request(request_id, prompt_len, max_new_tokens)
        self.requests[request_id] = request
        self.waiting.append(request)

    def state(self, request_id: Hashable) -> State:
        if request_id not in self.requests:
            raise KeyError(f"unknown request id {request_id!r}")
        return self.requests[request_id].state

    def has_unfinished(self) -> bool:
        return bool(self.waiting or self.running)

    def step(self) -> StepPlan:
        budget = self.token_budget
        prefill: dict[Hashable, int] = {}
        decode: list[Hashable] = []
        finished: list[Request] = []
        preempted: list[Hashable] = []

        for req in [r for r in self.running if r.state is State.DECODE]:
            while req.state is State.DECODE and not self._fits(req, 1):
                victim = self.running.pop()  # newest: never one that already decoded this step
                self._preempt(victim)
                preempted.append(victim.id)
            if req.state is not State.DECODE:  # preempted, by itself or by an older decode
                continue
            self._grow(req, 1)
            req.generated += 1
            decode.append(req.id)
            budget -= 1
            if req.generated == req.max_new_tokens:
                finished.append(req)

        if not preempted:  # as in vLLM: no admission in a step that preempted
            # The incomplete prefill (at most one, the newest running) goes before anyone new.
            partial = [r for r in self.running if r.state is State.PREFILL]
            for req in partial + list(self.waiting):
                is_new = req.state is State.WAITING
                if is_new and len(self.running) >= self.max_running:
                    break
                n = self._chunk(req, budget)
                if n == 0:
                    break  # FCFS: nobody skips ahead of a request that cannot run
                if is_new:
                    self.running.append(self.waiting.popleft())
                self._grow(req, n)
                req.state = State.PREFILL if req.to_prefill else State.DECODE
                prefill[req.id] = n
                budget -= n

        # Finished requests held their slot and blocks for the whole step; release them now.
        for req in finished:
            req.state = State.FINISHED
            self.running.remove(req)
            self.num_free += self._blocks(req.cached)
        return StepPlan(prefill, decode, [r.id for r in finished], preempted)

    def _chunk(self, req: Request, budget: int) -> int:
        """Prompt tokens `req` runs this step; 0 when the budget or the free blocks forbid it."""
        n = min(req.to_prefill, budget) if self.chunked_prefill else req.to_prefill
        while self.chunked_prefill and n > 1 and not self._fits(req, n):
            n -= 1
        if n < 1 or n > budget or not self._fits(req, n):
            return 0  # a chunk is never shrunk to fit the free blocks
        return n

    def _blocks(self, tokens: int) -> int:
        return -(-tokens // self.block_size)

    def _fits(self, req: Request, n: int) -> bool:
        return self._blocks(req.cached + n) - self._blocks(req.cached) <= self.num_free

    def _grow(self, req: Request, n: int) -> None:
        self.num_free -= self._blocks(req.cached + n) - self._blocks(req.cached)
        req.cached += n

    def _preempt(self, req: Request) -> None:
        # Recompute: drop the whole cache; the generated tokens are re-prefilled with the prompt.
        self.num_free += self._blocks(req.cached)
        req.cached = 0
        req.state = State.WAITING
        self.waiting.appendleft(req)  # victims come newest first, so the oldest ends up in front
