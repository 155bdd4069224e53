import random

import pytest

pytest.importorskip("torch", reason="ToyLM needs torch (pip install -e '.[torch]')")


def random_prompt(rng: random.Random, n: int) -> list[int]:
    return [rng.randrange(128) for _ in range(n)]


def test_slot_reset_mid_generation_discards_the_old_request(model):
    rng = random.Random(1)
    long_prompt, short_prompt, other = (random_prompt(rng, n) for n in (40, 3, 10))
    cache = model.slot_cache(2)
    cache.reset_slot(0, long_prompt)
    cache.reset_slot(1, other)
    out = {0: [], 1: []}
    for _ in range(5):
        for s, t in zip([0, 1], cache.decode([0, 1]), strict=True):
            out[s].append(t)
    cache.reset_slot(0, short_prompt)  # shorter: stale keys past its end must stay unseen
    new = [cache.decode([0, 1])[0] for _ in range(8)]
    assert out[0] == model.generate(long_prompt, 5)
    assert new == model.generate(short_prompt, 8)


def test_slot_decode_of_a_subset_leaves_other_slots_alone(model):
    cache = model.slot_cache(3)
    for s in range(3):
        cache.reset_slot(s, [s + 1, s + 2])
    got = {s: [] for s in range(3)}
    for slots in ([2], [0, 2], [1], [2, 1, 0], [0]):
        for s, t in zip(slots, cache.decode(slots), strict=True):
            got[s].append(t)
    for s in range(3):
        assert got[s] == model.generate([s + 1, s + 2], len(got[s]))
    assert cache.decode([]) == []


def test_sequence_cache_grows_rows_and_context(model):
    # More sequences than the pool's first 8 rows, prompts past its first 64 positions.
    rng = random.Random(2)
    cache = model.sequence_cache()
    prompts = {f"seq{i}": random_prompt(rng, rng.randint(1, 130)) for i in range(12)}
    for seq_id, prompt in prompts.items():
        for start in range(0, len(prompt), 50):
            cache.prefill(seq_id, prompt[start : start + 50])
    ids = list(prompts)
    out = {i: [] for i in ids}
    for _ in range(4):
        for i, t in zip(ids, cache.decode(ids), strict=True):
            out[i].append(t)
    assert all(out[i] == model.generate(prompts[i], 4) for i in ids)
    assert len(cache) == 12


def test_freed_row_is_reused_without_stale_state(model):
    cache = model.sequence_cache()
    cache.prefill("a", list(range(60)))
    cache.decode(["a"])
    cache.free("a")
    assert "a" not in cache and len(cache) == 0
    cache.prefill("b", [5, 4])  # lands on a's old row
    assert [cache.decode(["b"])[0] for _ in range(5)] == model.generate([5, 4], 5)


def test_prefill_generates_nothing_and_decode_starts_after_the_prompt(model):
    cache = model.sequence_cache()
    cache.prefill("x", [1, 2])
    cache.prefill("x", [3])
    assert cache.decode(["x"]) == model.model_next([[1, 2, 3]])


def test_prefill_after_decode_continues_the_same_sequence(model):
    cache = model.sequence_cache()
    cache.prefill(7, [10, 11])
    first = cache.decode([7])
    cache.prefill(7, [12, 13])  # e.g. a second chat turn
    assert cache.decode([7]) == model.model_next([[10, 11, *first, 12, 13]])


def test_prefill_batch_of_single_tokens(model):
    cache = model.sequence_cache()
    cache.prefill_batch({"a": [4], "b": [5], "c": [6, 7]})
    assert cache.decode(["c", "a", "b"]) == model.model_next([[6, 7], [4], [5]])
