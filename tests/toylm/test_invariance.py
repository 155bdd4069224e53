"""Greedy tokens never depend on batch company, padding, batch size or caching."""

import pytest

pytest.importorskip("torch", reason="ToyLM needs torch (pip install -e '.[torch]')")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=30)
prompts = st.lists(st.integers(0, 127), min_size=1, max_size=24)


def solo(model, prefix: list[int]) -> int:
    return model.model_next([prefix])[0]


@SETTINGS
@given(batch=st.lists(prompts, min_size=1, max_size=6), steps=st.integers(1, 5))
def test_model_next_batch_invariant(model, batch, steps):
    seqs = [list(p) for p in batch]
    for _ in range(steps):
        for seq, token in zip(seqs, model.model_next(seqs), strict=True):
            assert token == solo(model, seq)
            seq.append(token)


@SETTINGS
@given(data=st.data(), num_slots=st.integers(1, 4))
def test_slot_cache_matches_stateless(model, data, num_slots):
    """Random interleaving of resets and batched decodes over a few slots."""
    cache = model.slot_cache(num_slots)
    seqs: dict[int, list[int]] = {}
    slot = st.integers(0, num_slots - 1)
    for _ in range(data.draw(st.integers(1, 12))):
        if not seqs or data.draw(st.booleans()):
            s, prompt = data.draw(slot), data.draw(prompts)
            cache.reset_slot(s, prompt)
            seqs[s] = list(prompt)
        else:
            slots = data.draw(st.lists(st.sampled_from(sorted(seqs)), min_size=1, unique=True))
            for s, token in zip(slots, cache.decode(slots), strict=True):
                assert token == solo(model, seqs[s])
                seqs[s].append(token)


@SETTINGS
@given(data=st.data())
def test_sequence_cache_matches_stateless(model, data):
    """Chunked prefills of varying sizes, batched prefills, decodes and frees, interleaved."""
    cache = model.sequence_cache()
    seqs: dict[int, list[int]] = {}  # sequences whose prompt is complete
    next_id = 0
    for _ in range(data.draw(st.integers(1, 10))):
        action = data.draw(st.sampled_from(["start", "decode", "free"] if seqs else ["start"]))
        if action == "start":  # one or more new prompts, fed in random chunks
            new = data.draw(st.lists(prompts, min_size=1, max_size=3))
            ids = list(range(next_id, next_id + len(new)))
            next_id += len(new)
            fed = dict.fromkeys(ids, 0)
            while any(fed[i] < len(p) for i, p in zip(ids, new, strict=True)):
                chunks = {}
                for i, p in zip(ids, new, strict=True):
                    if fed[i] < len(p):
                        size = data.draw(st.integers(1, len(p) - fed[i]))
                        chunks[i] = p[fed[i] : fed[i] + size]
                        fed[i] += size
                if len(chunks) == 1:
                    cache.prefill(*chunks.popitem())
                else:
                    cache.prefill_batch(chunks)
            seqs.update(zip(ids, map(list, new), strict=True))
        elif action == "decode":
            ids = data.draw(st.lists(st.sampled_from(sorted(seqs)), min_size=1, unique=True))
            for i, token in zip(ids, cache.decode(ids), strict=True):
                assert token == solo(model, seqs[i])
                seqs[i].append(token)
        else:
            i = data.draw(st.sampled_from(sorted(seqs)))
            cache.free(i)
            del seqs[i]
        assert len(cache) == len(seqs) and all(i in cache for i in seqs)
