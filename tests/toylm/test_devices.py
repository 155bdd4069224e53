import random

import pytest

torch = pytest.importorskip("torch", reason="ToyLM needs torch (pip install -e '.[torch]')")
if not torch.cuda.is_available():
    pytest.skip(
        "no CUDA device: the CPU-vs-CUDA check runs on a GPU machine", allow_module_level=True
    )

from harness.toylm import ToyLM  # noqa: E402


def test_cpu_and_cuda_give_the_same_tokens(model):
    gpu = ToyLM(device="cuda")
    assert gpu.device.type == "cuda"
    assert torch.equal(gpu.weights.tok_emb.cpu(), model.weights.tok_emb)
    rng = random.Random(3)
    prompts = [[rng.randrange(128) for _ in range(rng.randint(1, 40))] for _ in range(16)]
    assert [gpu.generate(p, 12) for p in prompts[:4]] == [
        model.generate(p, 12) for p in prompts[:4]
    ]

    slots = list(range(len(prompts)))
    cpu_slots, gpu_slots, gpu_seqs = model.slot_cache(16), gpu.slot_cache(16), gpu.sequence_cache()
    for s, p in zip(slots, prompts, strict=True):
        cpu_slots.reset_slot(s, p)
        gpu_slots.reset_slot(s, p)
        gpu_seqs.prefill(s, p)
    for _ in range(24):
        expected = cpu_slots.decode(slots)
        assert gpu_slots.decode(slots) == expected
        assert gpu_seqs.decode(slots) == expected


def test_cuda_float32_logits_stay_close(model):
    gpu = ToyLM(device="cuda", dtype=torch.float32)
    prompts = [[1, 2, 3], list(range(50)), [7]]
    torch.testing.assert_close(
        gpu.logits(prompts).cpu().double(), model.logits(prompts), rtol=0, atol=1e-3
    )
