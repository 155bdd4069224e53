"""Oracles for the hidden suite: solo decoding, an ideal FIFO-refill schedule, call-log checks.

Every prompt starts with a tag token (100 + its index) that no model emits, so a prefix seen
in a model call names its request. Nothing here depends on what the spec leaves open: the
order of prefixes in a call, which free slot a request takes, or callback order in a step.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from hypothesis import strategies as st

from harness.fakes import FakeSlotModel, HashModel, Recorder

TAG = 100

@dataclass(frozen=True)
class Spec:
    """A request as the test sees it; `make` turns it into the implementation's Request."""

    rid: object
    prompt: tuple[int, ...]
    max_tokens: int
    stop_token: int | None = None
    stop_sequence: tuple[int, ...] | None = None


def make(impl, s: Spec):
    if s.stop_sequence is None:  # Level 1's Request has no stop_sequence yet
        return impl.Request(s.rid, list(s.prompt), s.max_tokens, s.stop_token)
    return impl.Request(s.rid, list(s.prompt), s.max_tokens, s.stop_token, list(s.stop_sequence))


@dataclass(frozen=True)
class Solo:
    tokens: list[int]
    reason: str
    stream: list[int]  # every token the model produced for it: one model call each


def solo(model, s: Spec) -> Solo:
    """Decode one request alone, with the kata's stop rules; cross-checked with the fake's own
    `generate`, so the suite and the fakes agree on the rules."""
    stream: list[int] = []
    out: list[int] = []
    reason = "length"
    stop = list(s.stop_sequence or [])
    while len(out) < s.max_tokens:
        token = model([[*s.prompt, *stream]])[0]
        stream.append(token)
        if token == s.stop_token:
            reason = "stop"
            break
        out.append(token)
        if stop and out[-len(stop) :] == stop:
            del out[-len(stop) :]
            reason = "stop"
            break
    stop_list = None if s.stop_sequence is None else list(s.stop_sequence)
    assert out == model.generate(list(s.prompt), s.max_tokens, s.stop_token, stop_list)
    return Solo(out, reason, stream)


def ideal_schedule(costs: list[int], batch_size: int) -> tuple[int, list[int]]:
    """(model calls, step in which each request finishes, 1-based) under ideal FIFO refill:
    at the start of every step free slots take the queue head; a zero-cost request finishes
    during that refill without a slot."""
    queue = deque(enumerate(costs))
    active: dict[int, int] = {}  # request index -> calls still needed
    finish = [0] * len(costs)
    calls = step = 0
    while queue or active:
        step += 1
        while len(active) < batch_size and queue:
            i, cost = queue.popleft()
            if cost == 0:
                finish[i] = step
            else:
                active[i] = cost
        if active:
            calls += 1
            for i in list(active):
                active[i] -= 1
                if active[i] == 0:
                    del active[i]
                    finish[i] = step
    return calls, finish


class Budget:
    """A model that fails once it has been called more often than a correct engine could,
    so an engine stuck in a loop fails fast instead of timing out."""

    def __init__(self, model, limit: int):
        self.model, self.limit, self.calls = model, limit, 0

    def __call__(self, prefixes):
        self.calls += 1
        assert self.calls <= self.limit, f"more than {self.limit} model calls: a loop?"
        return self.model(prefixes)

    def generate(self, *args):
        return self.model.generate(*args)


def owner(prefix: tuple[int, ...], specs: list[Spec]) -> int:
    i = prefix[0] - TAG
    assert 0 <= i < len(specs), f"prefix {list(prefix)} belongs to no request"
    return i


def check_calls(calls, specs: list[Spec], solos: list[Solo], batch_size: int) -> None:
    """Every call: 1..batch_size distinct live prefixes, each its request's prompt plus the
    tokens generated so far; every request sent once per token it needs."""
    sent = [0] * len(specs)
    for n, call in enumerate(calls):
        assert call, f"model call {n} was made with no sequences"
        assert len(call) <= batch_size, f"model call {n} sent {len(call)} > {batch_size}"
        seen = set()
        for prefix in call:
            i = owner(prefix, specs)
            assert i not in seen, f"request {specs[i].rid!r} sent twice in call {n}"
            seen.add(i)
            k = len(prefix) - len(specs[i].prompt)
            stream = solos[i].stream
            assert k < len(stream), f"request {specs[i].rid!r} was sent after it finished"
            assert list(prefix) == [*specs[i].prompt, *stream[:k]], (
                f"call {n} sent a wrong prefix for request {specs[i].rid!r}: {list(prefix)}"
            )
            sent[i] += 1
    for i, s in enumerate(specs):
        assert sent[i] == len(solos[i].stream), (
            f"request {s.rid!r} was sent {sent[i]} times, needs {len(solos[i].stream)}"
        )


class Outcome:
    """Runs an engine step by step and keeps what each callback got and when."""

    def __init__(self, engine, specs: list[Spec], impl):
        self.engine, self.specs = engine, specs
        self.got: dict[object, list] = {s.rid: [] for s in specs}
        self.step_of: dict[object, int] = {}
        self.steps = 0
        for s in specs:
            engine.submit(make(impl, s), self.callback_for(s.rid))

    def callback_for(self, rid):
        def callback(completion):
            self.got[rid].append(completion)
            self.step_of.setdefault(rid, self.steps)

        return callback

    def run(self, max_steps: int) -> None:
        while self.engine.num_active or self.engine.num_waiting:
            self.steps += 1
            assert self.steps <= max_steps, f"still busy after {max_steps} steps"
            self.engine.step()

    def check_solo(self, solos: list[Solo]) -> None:
        for s, want in zip(self.specs, solos, strict=True):
            got = self.got[s.rid]
            assert len(got) == 1, f"callback of {s.rid!r} ran {len(got)} times, expected once"
            c = got[0]
            assert c.request_id == s.rid, f"completion for {s.rid!r} says {c.request_id!r}"
            assert list(c.tokens) == want.tokens, f"{s.rid!r}: {list(c.tokens)} != {want.tokens}"
            assert c.finish_reason == want.reason, f"{s.rid!r}: {c.finish_reason} != {want.reason}"


@st.composite
def workloads(draw, stop_sequences: bool = True):
    """A random request mix and batch size, with a small vocabulary so stops do happen."""
    vocab = draw(st.integers(2, 8))
    tokens = st.integers(0, vocab - 1)
    n = draw(st.integers(0, 9))
    specs = []
    for i in range(n):
        prompt = (TAG + i, *draw(st.lists(tokens, max_size=4)))
        stop_sequence = None
        if stop_sequences:
            stop_sequence = draw(st.none() | st.lists(tokens, min_size=1, max_size=3).map(tuple))
        specs.append(Spec(f"r{i}", prompt, draw(st.integers(0, 10)),
                          draw(st.none() | tokens), stop_sequence))
    batch_size = draw(st.integers(1, n + 3))
    model = HashModel(vocab_size=vocab, seed=draw(st.integers(0, 3)))
    return specs, batch_size, model


def run_stateless(impl, specs, batch_size, model):
    """Decode `specs` with DecodingEngine; returns (outcome, recorder, solos)."""
    solos = [solo(model, s) for s in specs]
    recorder = Recorder(Budget(model, sum(len(x.stream) for x in solos) + 1))
    outcome = Outcome(impl.DecodingEngine(recorder, batch_size), specs, impl)
    outcome.run(max_steps=len(specs) + sum(len(x.stream) for x in solos) + 1)
    return outcome, recorder, solos


class LoggedSlots(FakeSlotModel):
    """FakeSlotModel that also keeps resets and decodes in one ordered log."""

    def __init__(self, model_next, num_slots: int, limit: int = 10_000):
        super().__init__(model_next, num_slots)
        self.log: list[tuple] = []
        self.limit = limit

    def reset_slot(self, slot: int, prompt: list[int]) -> None:
        super().reset_slot(slot, prompt)
        self.log.append(("reset", slot, tuple(prompt)))

    def decode(self, slots: list[int]) -> list[int]:
        assert len(self.decodes) < self.limit, f"more than {self.limit} decodes: a loop?"
        out = super().decode(slots)
        self.log.append(("decode", tuple(slots)))
        return out


def check_slot_log(log, specs: list[Spec], solos: list[Solo], batch_size: int) -> None:
    """A reset hands a free slot to a request; the slot is then decoded exactly once per token
    that request needs, never after it finishes; zero-token requests never take a slot."""
    remaining: dict[int, int] = {}  # slot -> decodes its request still needs
    holder: dict[int, object] = {}
    resets = [0] * len(specs)
    for event in log:
        if event[0] == "reset":
            _, slot, prompt = event
            i = owner(prompt, specs)
            assert prompt == specs[i].prompt, f"slot {slot} reset with a wrong prompt"
            assert remaining.get(slot, 0) == 0, (
                f"slot {slot} was reset while request {holder[slot]!r} still needed it"
            )
            resets[i] += 1
            remaining[slot], holder[slot] = len(solos[i].stream), specs[i].rid
        else:
            slots = event[1]
            assert slots, "decode was called with no slots"
            assert len(slots) <= batch_size, f"decode of {len(slots)} slots > {batch_size}"
            for slot in slots:
                assert remaining.get(slot, 0) > 0, (
                    f"slot {slot} was decoded without a live request reset into it"
                )
                remaining[slot] -= 1
    for i, s in enumerate(specs):
        want = 1 if solos[i].stream else 0
        assert resets[i] == want, f"request {s.rid!r} took a slot {resets[i]} times, not {want}"
