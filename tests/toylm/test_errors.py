import pytest

pytest.importorskip("torch", reason="ToyLM needs torch (pip install -e '.[torch]')")

from harness.toylm import ToyLM  # noqa: E402


@pytest.fixture(scope="module")
def small():
    return ToyLM(max_context=8, device="cpu")


def test_bad_prompts(model):
    with pytest.raises(ValueError, match="empty prompt"):
        model.model_next([[1], []])
    with pytest.raises(ValueError, match=r"token 300 is outside the vocabulary \[0, 128\)"):
        model.model_next([[1, 300]])
    with pytest.raises(ValueError, match="token -1 is outside"):
        model.generate([-1], 3)
    with pytest.raises(ValueError, match="empty prompt"):
        model.generate([], 0)


def test_context_overflow(small):
    assert len(small.generate([1] * 5, 3)) == 3  # 8 tokens in all: fits
    with pytest.raises(ValueError, match="context overflow: 9 tokens exceed max_context=8"):
        small.generate([1] * 5, 4)
    with pytest.raises(ValueError, match="context overflow"):
        small.model_next([[1] * 8])
    slots = small.slot_cache(1)
    with pytest.raises(ValueError, match="context overflow: 9 tokens"):
        slots.reset_slot(0, [1] * 9)
    slots.reset_slot(0, [1] * 7)
    slots.decode([0])
    with pytest.raises(ValueError, match="context overflow"):
        slots.decode([0])
    seqs = small.sequence_cache()
    seqs.prefill("a", [1] * 6)
    with pytest.raises(ValueError, match="context overflow"):
        seqs.prefill("a", [1] * 3)


def test_slot_errors(model):
    cache = model.slot_cache(2)
    with pytest.raises(ValueError, match=r"slot 2 is out of range \[0, 2\)"):
        cache.reset_slot(2, [1])
    with pytest.raises(ValueError, match="slot -1 is out of range"):
        cache.decode([-1])
    with pytest.raises(ValueError, match="slot 1 was decoded before any reset_slot"):
        cache.decode([1])
    cache.reset_slot(0, [1])
    with pytest.raises(ValueError, match="duplicate"):
        cache.decode([0, 0])
    with pytest.raises(ValueError, match="token 128 is outside"):
        cache.reset_slot(0, [128])
    with pytest.raises(ValueError, match="num_slots"):
        model.slot_cache(0)


def test_sequence_errors(model):
    cache = model.sequence_cache()
    with pytest.raises(ValueError, match="unknown sequence id 'nope'"):
        cache.decode(["nope"])
    with pytest.raises(ValueError, match="unknown sequence id 3"):
        cache.free(3)
    cache.prefill("empty", [])
    with pytest.raises(ValueError, match="sequence 'empty' has no tokens"):
        cache.decode(["empty"])
    with pytest.raises(ValueError, match="token 500 is outside"):
        cache.prefill_batch({"a": [1], "b": [500]})
    assert "a" not in cache  # a bad batch changes nothing
    cache.prefill("a", [1])
    with pytest.raises(ValueError, match="duplicate"):
        cache.decode(["a", "a"])


def test_bad_shape():
    with pytest.raises(ValueError, match="not divisible"):
        ToyLM(d_model=10, n_heads=4, device="cpu")
