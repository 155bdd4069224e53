"""Hypothesis stateful testing: random add_request/step sequences, checked after every step.

The machine keeps its own account of every request, built only from the plans it saw (tokens
cached, tokens generated, the waiting queue), and checks the scheduler's public answers
(plans, state(), free_blocks, has_unfinished) against it. `checks` picks which rules a test
enforces, so each test names one behaviour; "oracle" also compares every plan with the
independent simulator in oracle.py.
"""

from __future__ import annotations

import math

from hypothesis import Phase, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from .oracle import Config, Oracle, plan_of

ALL_CHECKS = frozenset({"budget", "transitions", "fcfs", "blocks", "liveness", "oracle"})


@st.composite
def configs(draw, *, chunked: bool | None, blocks: bool) -> Config:
    budget = draw(st.integers(1, 12))
    max_running = draw(st.none() | st.integers(1, budget))
    chunk = draw(st.booleans()) if chunked is None else chunked
    if not blocks:
        return Config(budget, max_running, chunk)
    # Few small blocks, so that decodes run out of them and preempt often.
    block_size = draw(st.integers(1, 3))
    num_blocks = draw(st.integers(max(1, math.ceil(2 / block_size)), 6))
    return Config(budget, max_running, chunk, num_blocks, block_size)


def fit(c: Config, prompt_len: int, max_new_tokens: int) -> tuple[int, int]:
    """Fold a drawn request into the sizes add_request must accept under `c`."""
    total = math.inf  # the largest prompt_len + max_new_tokens allowed
    if c.num_kv_blocks is not None:
        total = c.num_kv_blocks * c.block_size
        if not c.chunked_prefill:
            total = min(total, c.token_budget + 1)
    max_prompt = int(min(16, total - 1, math.inf if c.chunked_prefill else c.token_budget))
    p = 1 + (prompt_len - 1) % max_prompt  # modulo, not min: keep small and large both common
    m = 1 + (max_new_tokens - 1) % int(min(6, total - p))
    assert c.valid(p, m)
    return p, m


SIZES = st.tuples(st.integers(1, 16), st.integers(1, 6))  # folded by fit() to the config


class SchedulerMachine(RuleBasedStateMachine):
    def __init__(self, impl, config_strategy, checks):
        super().__init__()
        self.impl, self.configs, self.checks = impl, config_strategy, frozenset(checks)
        self.sched = None
        self.busy = True  # a rule in progress: teardown must not pile a second failure on top

    # -- rules ---------------------------------------------------------------------------

    @initialize(data=st.data())
    def setup(self, data):
        self.busy = True
        self.c = data.draw(self.configs, label="config")
        self.sched = self.c.make(self.impl)
        self.oracle = Oracle(self.c)
        self.ids: list = []
        self.size: dict = {}  # id -> (prompt_len, max_new_tokens)
        self.generated: dict = {}
        self.cached: dict = {}
        self.queue: list = []  # the waiting queue as the plans say it must be
        self.admitted: dict = {}  # id -> number of its latest admission
        self.counter = 0
        self.done: set = set()
        assert not self.sched.has_unfinished()
        if self.c.num_kv_blocks is None:
            assert self.sched.free_blocks is None
        else:
            assert self.sched.free_blocks == self.c.num_kv_blocks
        self.busy = False

    # Listed first on purpose: the simplest choice Hypothesis makes is then "add and step".
    @rule(sizes=st.lists(SIZES, min_size=1, max_size=3), k=st.integers(1, 3))
    def add_and_step(self, sizes, k):
        self.busy = True
        for prompt_len, max_new_tokens in sizes:
            self.add_one(*fit(self.c, prompt_len, max_new_tokens))
        for _ in range(k):
            self.run_one_step()
        self.busy = False

    @rule(sizes=st.lists(SIZES, min_size=1, max_size=3))
    def add(self, sizes):
        self.busy = True
        for prompt_len, max_new_tokens in sizes:
            self.add_one(*fit(self.c, prompt_len, max_new_tokens))
        self.busy = False

    def add_one(self, p, m):
        n = len(self.ids)
        rid = n if n % 2 == 0 else f"req-{n}"  # ids of mixed types: any hashable is an id
        note(f"add_request({rid!r}, prompt_len={p}, max_new_tokens={m})")
        self.sched.add_request(rid, p, m)
        self.oracle.add(rid, p, m)
        self.ids.append(rid)
        self.size[rid] = (p, m)
        self.generated[rid] = self.cached[rid] = 0
        self.queue.append(rid)
        assert self.sched.state(rid) == self.impl.State.WAITING
        assert self.sched.has_unfinished()

    @rule(k=st.integers(1, 3))
    def step(self, k):
        self.busy = True
        for _ in range(k):
            self.run_one_step()
        self.busy = False

    def teardown(self):
        if self.busy or self.sched is None:
            return
        bound = sum(p + 2 * m for i, (p, m) in self.size.items() if i not in self.done) + 1
        steps = 0
        while self.sched.has_unfinished() and steps < bound:
            self.run_one_step()
            steps += 1
        if "liveness" in self.checks:
            assert not self.sched.has_unfinished(), f"requests still unfinished after {bound} steps"
            for i in self.ids:
                assert self.generated[i] == self.size[i][1]
        for i in self.done:  # finished for good
            assert self.sched.state(i) == self.impl.State.FINISHED

    # -- one step, checked ---------------------------------------------------------------

    def run_one_step(self):
        S, c, on = self.impl.State, self.c, self.checks
        live = [i for i in self.ids if i not in self.done]  # done ones are checked at the end
        before = {i: self.sched.state(i) for i in live}
        step_plan = self.sched.step()
        plan = plan_of(step_plan)
        note(f"step() -> {step_plan!r}")
        after = {i: self.sched.state(i) for i in live}
        newly = [i for i in self.queue if i in plan.prefill and before[i] == S.WAITING]

        if "budget" in on:
            assert step_plan.num_tokens == sum(plan.prefill.values()) + len(step_plan.decode)
            assert step_plan.num_tokens <= c.token_budget, "over the token budget"
            running = [i for i in live if after[i] in (S.PREFILL, S.DECODE)]
            # a request finishing in this step held its slot for the whole step
            assert len(running) + len(plan.finished) <= c.running_limit, "over max_running"

        if "transitions" in on:
            for field in (step_plan.decode, step_plan.finished, step_plan.preempted):
                assert len(list(field)) == len(set(field)), "an id listed twice"
            scheduled = set(plan.prefill) | plan.decode | plan.finished | plan.preempted
            assert not scheduled & self.done, "a finished request was scheduled again"
            assert not set(plan.prefill) & plan.decode
            assert plan.finished <= plan.decode
            for i in plan.decode:
                p, m = self.size[i]
                assert before[i] == S.DECODE, f"{i!r} decoded while {before[i]}"
                assert self.cached[i] == p + self.generated[i], "decode before the whole prompt"
                assert (i in plan.finished) == (self.generated[i] + 1 == m)
                assert after[i] == (S.FINISHED if i in plan.finished else S.DECODE)
            for i, n in plan.prefill.items():
                p, _ = self.size[i]
                assert before[i] in (S.WAITING, S.PREFILL)
                start = 0 if before[i] == S.WAITING else self.cached[i]
                left = p + self.generated[i] - start
                assert 1 <= n <= left, f"{i!r} prefilled {n} tokens, {left} were left"
                assert after[i] == (S.DECODE if n == left else S.PREFILL)
            for i in plan.preempted:
                assert before[i] in (S.PREFILL, S.DECODE)
                assert after[i] == S.WAITING
            for i in live:
                if i not in scheduled:
                    assert after[i] == before[i]

        if "fcfs" in on:
            admitted = {i for i in plan.prefill if before[i] == S.WAITING}
            assert admitted == set(self.queue[: len(admitted)]), "admission skipped the queue"

        # Update the account from the plan.
        self.queue = [i for i in self.queue if i not in newly]
        for i in newly:
            self.counter += 1
            self.admitted[i] = self.counter
            self.cached[i] = 0
        for i, n in plan.prefill.items():
            self.cached[i] += n
        for i in plan.decode:
            self.cached[i] += 1
            self.generated[i] += 1
        victims = sorted(plan.preempted, key=lambda i: self.admitted[i])
        for i in victims:
            self.cached[i] = 0
        self.queue = victims + self.queue
        self.done |= plan.finished

        if "blocks" in on:
            if c.num_kv_blocks is None:
                assert self.sched.free_blocks is None
            else:
                held = sum(math.ceil(self.cached[i] / c.block_size) for i in live
                           if i not in self.done and i not in self.queue)
                assert held <= c.num_kv_blocks, "more blocks in use than exist"
                assert self.sched.free_blocks == c.num_kv_blocks - held

        if "oracle" in on:
            expected = self.oracle.step()
            assert plan == expected, f"expected {expected}"
            got = {i: s.name.lower() for i, s in after.items()}  # values: the lifecycle test
            assert got == {i: self.oracle.state[i] for i in live}
            assert self.sched.free_blocks == self.oracle.free_blocks()
            assert self.sched.has_unfinished() == self.oracle.has_unfinished()


def run_machine(impl, config_strategy, checks, *, max_examples: int = 20) -> None:
    """Run random add/step sequences under the grading profile.

    Only the size is set here, and shrinking is off: shrinking a failing stateful run can take
    longer than the test's time limit, and a timeout would hide the real verdict. The first
    failing run is reported as it is (its steps show with --reveal).
    """
    run_state_machine_as_test(
        lambda: SchedulerMachine(impl, config_strategy, checks),
        settings=settings(max_examples=max_examples, stateful_step_count=20,
                          phases=[Phase.explicit, Phase.reuse, Phase.generate]),
    )
