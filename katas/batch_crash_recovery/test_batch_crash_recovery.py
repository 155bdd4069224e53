"""Visible examples. `pytest katas/batch_crash_recovery` also runs the hidden suite on your file."""


def doubler(calls):
    """A run_batch that doubles numbers and crashes whenever it sees "boom"."""

    def run_batch(payloads):
        calls.append(list(payloads))
        if "boom" in payloads:
            raise RuntimeError("the worker died")
        return [2 * p for p in payloads]

    return run_batch


def test_example_from_the_prompt(impl):
    calls, done = [], {}
    runner = impl.BatchRunner(doubler(calls), max_batch_size=2, max_attempts=2)
    for rid, payload in [("a", 1), ("b", "boom"), ("c", 3)]:
        runner.submit(rid, payload, lambda o: done.__setitem__(o.request_id, o))
    runner.run()
    assert calls == [[1, "boom"], [1, "boom"], [3]]
    assert (done["a"].ok, done["a"].attempts) == (False, 2)
    assert (done["b"].ok, done["b"].attempts) == (False, 2)
    assert done["c"] == impl.Outcome("c", True, 6, 1)


def test_a_known_id_is_replayed_not_rerun(impl):
    calls, got = [], []
    runner = impl.BatchRunner(doubler(calls), max_batch_size=4)
    runner.submit("x", 5, got.append)
    runner.run()
    runner.submit("x", 5, got.append)  # the stored outcome comes back inside submit
    assert calls == [[5]]
    assert len(got) == 2 and got[0] is got[1] and got[0].result == 10


def test_bisection_spares_the_innocent(impl):
    calls, done = [], {}
    runner = impl.BatchRunner(doubler(calls), max_batch_size=4, max_attempts=2, bisect=True)
    for i, payload in enumerate([1, 2, "boom", 4]):
        runner.submit(i, payload, lambda o: done.__setitem__(o.request_id, o))
    runner.run()
    # [1,2,boom,4] crashes -> [1,2] ok -> [boom,4] crashes -> [boom] twice -> [4] ok
    assert calls == [[1, 2, "boom", 4], [1, 2], ["boom", 4], ["boom"], ["boom"], [4]]
    assert [done[i].ok for i in range(4)] == [True, True, False, True]
    assert [done[i].attempts for i in range(4)] == [1, 1, 2, 1]


class CountingSlots:
    """A slot model whose next token is the last one plus 1, crashing on chosen decode calls."""

    def __init__(self, crash_exc, crash_on):
        self.crash_exc, self.crash_on = crash_exc, set(crash_on)
        self.tokens, self.decodes = {}, 0

    def reset_slot(self, slot, tokens):
        self.tokens[slot] = list(tokens)

    def decode(self, slots):
        self.decodes += 1
        if self.decodes in self.crash_on:
            self.tokens.clear()  # every slot's cache is lost
            raise self.crash_exc("the worker died")
        out = [self.tokens[s][-1] + 1 for s in slots]
        for s, t in zip(slots, out, strict=True):
            self.tokens[s].append(t)
        return out


def test_a_stream_resumes_without_repeating_a_token(impl):
    slots = CountingSlots(impl.WorkerCrash, crash_on=[3])
    streamed, done = [], []
    runner = impl.StreamingRunner(slots, num_slots=2)
    runner.submit("s", [10], 4, lambda rid, t: streamed.append(t), done.append)
    runner.run()
    assert streamed == [11, 12, 13, 14]  # the third decode crashed; nothing was sent twice
    assert len(done) == 1 and (done[0].ok, done[0].attempts) == (True, 2)
    assert list(done[0].result) == [11, 12, 13, 14]
