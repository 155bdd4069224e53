"""Level 3 scaffolding: a client that records every on_token / on_done against the slot
model's call log, and the checks every stream must pass. Prompt i starts with tag 100 + i,
which the HashModel never emits, so a reset in the log names its request."""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

from .fakes import CrashingSlots

TAG = 100


@dataclass(frozen=True)
class Spec:
    rid: object
    prompt: tuple[int, ...]
    max_tokens: int


def specs_of(lengths: list[int], extra: int = 2) -> list[Spec]:
    return [Spec(f"r{i}", (TAG + i, *range(i % 3, i % 3 + extra)), n)
            for i, n in enumerate(lengths)]


@dataclass
class StreamClient:
    """`events` holds ("token", rid, token, log position) and ("done", rid, outcome, position),
    where position is len(slots.log) when the callback ran."""

    slots: CrashingSlots
    events: list = field(default_factory=list)
    tokens: dict = field(default_factory=dict)
    done: dict = field(default_factory=dict)

    def on_token(self, rid, token):
        self.events.append(("token", rid, token, len(self.slots.log)))
        self.tokens.setdefault(rid, []).append(token)

    def on_done(self, outcome):
        self.events.append(("done", outcome.request_id, outcome, len(self.slots.log)))
        self.done.setdefault(outcome.request_id, []).append(outcome)

    def submit(self, runner, s: Spec) -> None:
        runner.submit(s.rid, list(s.prompt), s.max_tokens, self.on_token, self.on_done)

    def only(self, rid):
        got = self.done.get(rid, [])
        assert len(got) == 1, f"on_done for {rid!r} ran {len(got)} times, not once"
        return got[0]


def run_streams(impl, specs: list[Spec], num_slots: int, max_attempts: int = 3,
                **crashes) -> StreamClient:
    slots = CrashingSlots(impl.WorkerCrash, num_slots, **crashes)
    client = StreamClient(slots)
    runner = impl.StreamingRunner(slots, num_slots=num_slots, max_attempts=max_attempts)
    for s in specs:
        client.submit(runner, s)
    runner.run()
    return client


def solo(client: StreamClient, s: Spec) -> list[int]:
    return client.slots.model.generate(list(s.prompt), s.max_tokens)


def check_streams(client: StreamClient, specs: list[Spec], max_attempts: int) -> None:
    """One on_done each, after its last token; successes carry exactly their uninterrupted
    tokens, failures a prefix of them; attempts within the budget."""
    for s in specs:
        o = client.only(s.rid)
        want, got = solo(client, s), client.tokens.get(s.rid, [])
        assert o.request_id == s.rid
        if o.ok:
            assert got == want, f"{s.rid!r} delivered {got}, uninterrupted run gives {want}"
            assert list(o.result) == want, f"{s.rid!r}: result {o.result!r} != {want}"
            assert 1 <= o.attempts <= max_attempts, f"{s.rid!r}: attempts {o.attempts}"
        else:
            assert got == want[: len(got)] and len(got) < len(want), (
                f"{s.rid!r} failed after delivering {got}: not a prefix of {want}")
            assert o.attempts == max_attempts, f"{s.rid!r}: attempts {o.attempts}"
            assert o.result is None and isinstance(o.error, str) and o.error
        last = max(i for i, e in enumerate(client.events) if e[1] == s.rid)
        assert client.events[last][0] == "done", f"{s.rid!r} got a token after on_done"


def check_reloads(client: StreamClient, specs: list[Spec]) -> None:
    """Every reset loads the prompt plus exactly the tokens already delivered."""
    by_tag = {s.prompt[0]: s for s in specs}
    delivered: dict = {}
    events = iter(client.events)
    pending = next(events, None)
    for j, entry in enumerate(client.slots.log):
        while pending is not None and pending[3] <= j:
            if pending[0] == "token":
                delivered.setdefault(pending[1], []).append(pending[2])
            pending = next(events, None)
        if entry[0] == "reset":
            s = by_tag[entry[2][0]]
            assert entry[2] == (*s.prompt, *delivered.get(s.rid, [])), (
                f"{s.rid!r} was loaded with {list(entry[2])}, not its prompt plus the "
                f"{len(delivered.get(s.rid, []))} tokens already delivered")


def check_delivery(client: StreamClient) -> None:
    """Every token is delivered right after the decode that made it, before the slot model is
    called again, and each decode delivers one token per slot it was given."""
    log = client.slots.log
    counts: dict = {}
    for e in client.events:
        if e[0] == "token":
            assert e[3] > 0 and log[e[3] - 1][0] == "decode", (
                f"a token of {e[1]!r} was delivered after another slot-model call")
            counts[e[3]] = counts.get(e[3], 0) + 1
    for j, entry in enumerate(log):
        if entry[0] == "decode":
            assert counts.get(j + 1, 0) == len(entry[1]), (
                f"decode call with {len(entry[1])} slots delivered {counts.get(j + 1, 0)} tokens")


@st.composite
def stream_workloads(draw):
    """(specs, num_slots, max_attempts, crash settings for CrashingSlots)."""
    n = draw(st.integers(1, 8))
    specs = [Spec(f"r{i}", (TAG + i, *draw(st.lists(st.integers(0, 49), max_size=3))),
                  draw(st.integers(1, 8))) for i in range(n)]
    crashes = {"seed": draw(st.integers(0, 99))}
    kind = draw(st.sampled_from(["decodes", "resets", "random", "poison"]))
    if kind == "decodes":
        crashes["decodes"] = tuple(draw(st.sets(st.integers(1, 30), max_size=8)))
    elif kind == "resets":
        crashes["resets"] = tuple(draw(st.sets(st.integers(1, 20), max_size=6)))
    elif kind == "random":
        crashes["rate"] = draw(st.sampled_from([0.1, 0.3]))
    else:
        crashes["poison"] = (TAG + draw(st.integers(0, n - 1)),)
        crashes["rate"] = 0.1
    return specs, draw(st.integers(1, 4)), draw(st.integers(1, 4)), crashes
