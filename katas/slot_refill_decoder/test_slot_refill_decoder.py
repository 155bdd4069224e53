"""Visible examples. `pytest katas/slot_refill_decoder` also runs the hidden suite on your file."""


def count_up(prefixes):
    """A toy model: the next token is the last one plus 1, modulo 10."""
    return [(p[-1] + 1) % 10 for p in prefixes]


def decode_all(impl, engine, requests):
    done = {}
    for r in requests:
        engine.submit(r, lambda c: done.__setitem__(c.request_id, (c.tokens, c.finish_reason)))
    engine.run()
    return done


def test_example_from_the_prompt(impl):
    requests = [
        impl.Request("a", [1], max_tokens=3),
        impl.Request("b", [5], max_tokens=10, stop_token=8),
        impl.Request("c", [7], max_tokens=10, stop_sequence=[9, 0]),
    ]
    done = decode_all(impl, impl.DecodingEngine(count_up, batch_size=2), requests)
    assert done == {"a": ([2, 3, 4], "length"), "b": ([6, 7], "stop"), "c": ([8], "stop")}


def test_a_freed_slot_is_refilled_at_the_next_step(impl):
    calls = []

    def model_next(prefixes):
        calls.append(sorted(prefixes))
        return count_up(prefixes)

    requests = [impl.Request("short", [0], 1), impl.Request("long", [3], 3),
                impl.Request("next", [6], 1)]
    decode_all(impl, impl.DecodingEngine(model_next, batch_size=2), requests)
    # "short" finishes in step 1, so "next" joins "long" in step 2.
    assert calls == [[[0], [3]], [[3, 4], [6]], [[3, 4, 5]]]


def test_step_by_step_counts(impl):
    engine = impl.DecodingEngine(count_up, batch_size=2)
    for i in range(3):
        engine.submit(impl.Request(i, [i], max_tokens=2), lambda c: None)
    assert (engine.num_active, engine.num_waiting) == (0, 3)
    assert engine.step() == 2
    assert (engine.num_active, engine.num_waiting) == (2, 1)


def test_max_tokens_zero_completes_without_the_model(impl):
    def model_next(prefixes):
        raise AssertionError("no request needs the model here")

    done = decode_all(impl, impl.DecodingEngine(model_next, 4), [impl.Request("z", [1], 0)])
    assert done == {"z": ([], "length")}


def test_slot_engine(impl):
    class Slots:  # a KV-cache stand-in: each slot remembers its tokens
        def __init__(self):
            self.tokens = {}

        def reset_slot(self, slot, prompt):
            self.tokens[slot] = list(prompt)

        def decode(self, slots):
            out = count_up([self.tokens[s] for s in slots])
            for s, t in zip(slots, out, strict=True):
                self.tokens[s].append(t)
            return out

    requests = [impl.Request(i, [i], max_tokens=2 + i) for i in range(4)]
    done = decode_all(impl, impl.SlotDecodingEngine(Slots(), batch_size=2), requests)
    assert done == {0: ([1, 2], "length"), 1: ([2, 3, 4], "length"),
                    2: ([3, 4, 5, 6], "length"), 3: ([4, 5, 6, 7, 8], "length")}
