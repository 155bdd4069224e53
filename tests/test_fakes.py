import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.fakes import FakeSlotModel, HashModel, Recorder, ScriptedModel
from harness.stopping import generate_with

SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=200)
tokens = st.lists(st.integers(0, 49), min_size=1, max_size=12)


# --- HashModel --------------------------------------------------------------------------


def test_hash_model_is_deterministic_and_seeded():
    a, b, other = HashModel(), HashModel(), HashModel(seed=1)
    prefixes = [[1, 2, 3], [1, 2], [3, 2, 1], [7] * 40]
    assert a(prefixes) == b(prefixes)
    assert a(prefixes) != other(prefixes)
    assert all(0 <= t < 50 for t in a(prefixes))
    assert HashModel(vocab_size=7)([[5, 5]])[0] < 7


def test_hash_model_is_pinned():
    # A stable hash: the same tokens on every run and machine (Python's hash() is salted).
    assert HashModel().generate([1, 2, 3], 8) == HASH_GOLDEN


HASH_GOLDEN = [7, 4, 39, 32, 12, 39, 0, 9]


def test_hash_model_depends_on_the_whole_prefix():
    m = HashModel(vocab_size=1000)
    assert len(set(m([[0, i, 5] for i in range(50)]))) > 40


@SETTINGS
@given(batch=st.lists(tokens, max_size=6))
def test_hash_model_is_batch_invariant(batch):
    m = HashModel()
    assert m(batch) == [m([p])[0] for p in batch]


# --- the stop rules, through generate_with ------------------------------------------------


def scripted(plan: list[int], prompt: tuple[int, ...] = (1,)) -> ScriptedModel:
    return ScriptedModel({prompt: plan})


@pytest.mark.parametrize(
    ("plan", "kwargs", "expected"),
    [
        ([5, 6, 7, 8], {"max_tokens": 3}, [5, 6, 7]),
        ([5, 6, 7, 8], {"max_tokens": 0}, []),
        ([5, 6, 7, 8], {"max_tokens": 9, "stop_token": 7}, [5, 6]),
        ([7, 6], {"max_tokens": 9, "stop_token": 7}, []),
        ([5, 6, 7, 8], {"max_tokens": 9, "stop_sequence": [6, 7]}, [5]),
        ([6, 7, 8], {"max_tokens": 9, "stop_sequence": [6, 7]}, []),
        ([5, 6, 5, 6, 7], {"max_tokens": 9, "stop_sequence": [5, 6, 7]}, [5, 6]),
        # the stop sequence is matched before the length limit, so it is removed
        ([5, 6, 7, 8], {"max_tokens": 3, "stop_sequence": [6, 7]}, [5]),
        # the stop token wins over a stop sequence it would complete
        ([5, 6, 7], {"max_tokens": 9, "stop_token": 7, "stop_sequence": [6, 7]}, [5, 6]),
        # a stop token is checked before appending, so it never counts towards max_tokens
        ([5, 9], {"max_tokens": 1, "stop_token": 9}, [5]),
    ],
)
def test_stop_rules(plan, kwargs, expected):
    assert scripted(plan).generate([1], **kwargs) == expected


def test_stop_sequence_is_matched_in_generated_tokens_only():
    m = scripted([8, 9], prompt=(6, 7))
    assert m.generate([6, 7], 2, stop_sequence=[7, 8]) == [8, 9]


def test_generate_with_rejects_bad_limits():
    with pytest.raises(ValueError, match="max_tokens"):
        generate_with(HashModel(), [1], -1)
    with pytest.raises(ValueError, match="stop_sequence"):
        generate_with(HashModel(), [1], 3, stop_sequence=[])


def test_generate_with_makes_one_solo_call_per_token():
    rec = Recorder(HashModel())
    out = generate_with(rec, [4, 4], 5)
    assert rec.batch_sizes == [1] * 5
    assert rec.calls[-1] == [(4, 4, *out[:-1])]


# --- ScriptedModel ------------------------------------------------------------------------


def test_scripted_model_follows_plans_longest_prompt_first():
    m = ScriptedModel({(1,): [10, 11], (1, 2): [20, 21], (3,): [30]})
    assert m([[1], [1, 10], [1, 2], [1, 2, 20], [3]]) == [10, 11, 20, 21, 30]


def test_scripted_model_errors_name_the_prefix():
    m = ScriptedModel({(1,): [10]})
    with pytest.raises(AssertionError, match=r"no scripted prompt is a prefix of \[2, 1\]"):
        m([[2, 1]])
    with pytest.raises(AssertionError, match=r"exhausted.*\[1, 10\]"):
        m([[1, 10]])


# --- Recorder -----------------------------------------------------------------------------


def test_recorder_keeps_every_call():
    rec = Recorder(HashModel())
    assert rec.num_calls == 0
    first = rec([[1, 2], [3]])
    rec([[4]])
    assert first == HashModel()([[1, 2], [3]])
    assert rec.calls == [[(1, 2), (3,)], [(4,)]]
    assert rec.batch_sizes == [2, 1]
    assert rec.num_calls == 2


def test_recorder_returns_a_list():
    rec = Recorder(lambda prefixes: tuple(len(p) for p in prefixes))
    assert rec([[1, 2]]) == [2]


# --- FakeSlotModel ------------------------------------------------------------------------


def test_fake_slot_model_matches_solo_decoding():
    model = HashModel()
    slots = FakeSlotModel(model, num_slots=2)
    slots.reset_slot(0, [1, 2])
    slots.reset_slot(1, [3])
    out = {0: [], 1: []}
    for batch in ([0, 1], [1], [1, 0], [0]):
        for s, t in zip(batch, slots.decode(batch), strict=True):
            out[s].append(t)
    assert out[0] == model.generate([1, 2], 3)
    assert out[1] == model.generate([3], 3)
    assert slots.resets == [(0, (1, 2)), (1, (3,))]
    assert slots.decodes == [[0, 1], [1], [1, 0], [0]]


def test_fake_slot_model_batches_through_model_next():
    rec = Recorder(HashModel())
    slots = FakeSlotModel(rec, num_slots=3)
    for s in range(3):
        slots.reset_slot(s, [s])
    slots.decode([2, 0])
    assert rec.calls == [[(2,), (0,)]]


def test_a_forgotten_reset_shows_up_as_different_tokens():
    model = HashModel()
    slots = FakeSlotModel(model, num_slots=1)
    slots.reset_slot(0, [1, 2])
    slots.decode([0])
    # The caller meant to start [5, 6] in slot 0 but forgot reset_slot: it continues [1, 2, ..].
    stale = [slots.decode([0])[0] for _ in range(4)]
    assert stale != model.generate([5, 6], 4)
    slots.reset_slot(0, [5, 6])
    assert [slots.decode([0])[0] for _ in range(4)] == model.generate([5, 6], 4)


def test_fake_slot_model_errors():
    slots = FakeSlotModel(HashModel(), num_slots=2)
    with pytest.raises(ValueError, match=r"slot 2 is out of range \[0, 2\)"):
        slots.reset_slot(2, [1])
    with pytest.raises(ValueError, match="slot -1 is out of range"):
        slots.decode([-1])
    with pytest.raises(ValueError, match="slot 1 was decoded before any reset_slot"):
        slots.decode([1])
    with pytest.raises(ValueError, match="empty prompt"):
        slots.reset_slot(0, [])
    slots.reset_slot(0, [1])
    with pytest.raises(ValueError, match="duplicate"):
        slots.decode([0, 0])
    assert slots.decodes == []
    assert slots.decode([]) == []


@SETTINGS
@given(data=st.data(), num_slots=st.integers(1, 4))
def test_fake_slot_model_interleaved_matches_generate(data, num_slots):
    model = HashModel()
    slots = FakeSlotModel(model, num_slots)
    live: dict[int, tuple[list[int], list[int]]] = {}
    for _ in range(data.draw(st.integers(1, 15))):
        if not live or data.draw(st.booleans()):
            s, prompt = data.draw(st.integers(0, num_slots - 1)), data.draw(tokens)
            slots.reset_slot(s, prompt)
            live[s] = (prompt, [])
        else:
            batch = data.draw(st.lists(st.sampled_from(sorted(live)), min_size=1, unique=True))
            for s, t in zip(batch, slots.decode(batch), strict=True):
                live[s][1].append(t)
    for prompt, out in live.values():
        assert out == model.generate(prompt, len(out))
