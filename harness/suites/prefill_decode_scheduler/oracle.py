"""An independent, deliberately plain simulator of the spec, for exact comparisons.

Everything is a dict keyed by request id; running order is an admission counter, recomputed
by sorting every time it is needed. Slow and obvious on purpose.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class Config:
    token_budget: int
    max_running: int | None = None
    chunked_prefill: bool = False
    num_kv_blocks: int | None = None
    block_size: int = 16

    @property
    def running_limit(self) -> int:
        return self.token_budget if self.max_running is None else self.max_running

    def kwargs(self) -> dict:
        """The settings, each passed only when it is not the default: a Level 1 run calls no
        parameter that Levels 2 and 3 add."""
        kw = dict(max_running=self.max_running, chunked_prefill=self.chunked_prefill,
                  num_kv_blocks=self.num_kv_blocks, block_size=self.block_size)
        defaults = dict(max_running=None, chunked_prefill=False, num_kv_blocks=None)
        if self.num_kv_blocks is None:
            defaults["block_size"] = self.block_size  # no blocks: block_size is never read
        return {k: v for k, v in kw.items() if k not in defaults or v != defaults[k]}

    def make(self, impl):
        return impl.Scheduler(self.token_budget, **self.kwargs())

    def valid(self, prompt_len: int, max_new_tokens: int) -> bool:
        """Whether add_request must accept this request (the spec's ValueError rules)."""
        if prompt_len < 1 or max_new_tokens < 1:
            return False
        if not self.chunked_prefill and prompt_len > self.token_budget:
            return False
        if self.num_kv_blocks is not None:
            if math.ceil((prompt_len + max_new_tokens) / self.block_size) > self.num_kv_blocks:
                return False
            if not self.chunked_prefill and prompt_len + max_new_tokens - 1 > self.token_budget:
                return False
        return True


@dataclass
class Plan:
    prefill: dict
    decode: set
    finished: set
    preempted: set = field(default_factory=set)


def plan_of(step_plan) -> Plan:
    """An implementation's StepPlan, with the orders the spec leaves open thrown away."""
    return Plan(dict(step_plan.prefill), set(step_plan.decode), set(step_plan.finished),
                set(step_plan.preempted))


class Oracle:
    def __init__(self, config: Config):
        self.c = config
        self.prompt: dict = {}
        self.limit: dict = {}
        self.generated: dict = {}
        self.cached: dict = {}
        self.state: dict = {}  # "waiting" | "prefill" | "decode" | "finished"
        self.admitted: dict = {}  # id -> admission counter (latest admission)
        self.queue: list = []
        self.live: set = set()  # ids in "prefill" or "decode"
        self.counter = 0

    # -- derived -------------------------------------------------------------------------

    def running(self) -> list:
        return sorted(self.live, key=lambda i: self.admitted[i])

    def blocks(self, tokens: int) -> int:
        return math.ceil(tokens / self.c.block_size)

    def free_blocks(self):
        if self.c.num_kv_blocks is None:
            return None
        return self.c.num_kv_blocks - sum(self.blocks(self.cached[i]) for i in self.running())

    def extra_blocks(self, i, n: int) -> int:
        return self.blocks(self.cached[i] + n) - self.blocks(self.cached[i])

    def has_room(self, i, n: int) -> bool:
        free = self.free_blocks()
        return free is None or self.extra_blocks(i, n) <= free

    def has_unfinished(self) -> bool:
        return any(s != "finished" for s in self.state.values())

    # -- transitions ---------------------------------------------------------------------

    def add(self, i, prompt_len: int, max_new_tokens: int) -> None:
        self.prompt[i], self.limit[i] = prompt_len, max_new_tokens
        self.generated[i], self.cached[i], self.state[i] = 0, 0, "waiting"
        self.queue.append(i)

    def step(self) -> Plan:
        plan = Plan({}, set(), set())
        budget = self.c.token_budget
        victims = []
        for i in [r for r in self.running() if self.state[r] == "decode"]:
            if self.state[i] != "decode":
                continue
            while self.state[i] == "decode" and not self.has_room(i, 1):
                v = self.running()[-1]
                victims.append((self.admitted[v], v))
                self.state[v], self.cached[v] = "waiting", 0
                self.live.discard(v)
                plan.preempted.add(v)
            if self.state[i] != "decode":
                continue
            self.cached[i] += 1
            self.generated[i] += 1
            plan.decode.add(i)
            budget -= 1
            if self.generated[i] == self.limit[i]:
                plan.finished.add(i)
        self.queue = [v for _, v in sorted(victims)] + self.queue

        if not victims:
            partial = [r for r in self.running() if self.state[r] == "prefill"]
            assert len(partial) <= 1
            for i in partial + list(self.queue):
                new = self.state[i] == "waiting"
                if new and len(self.running()) >= self.c.running_limit:
                    break
                left = self.prompt[i] + self.generated[i] - self.cached[i]
                n = min(left, budget) if self.c.chunked_prefill else left
                if n < 1 or n > budget or not self.has_room(i, n):
                    break
                if new:
                    assert self.queue[0] == i
                    self.queue.pop(0)
                    self.counter += 1
                    self.admitted[i] = self.counter
                    self.live.add(i)
                self.cached[i] += n
                budget -= n
                plan.prefill[i] = n
                self.state[i] = "prefill" if n < left else "decode"

        for i in plan.finished:
            self.state[i] = "finished"
            self.live.discard(i)
        return plan
