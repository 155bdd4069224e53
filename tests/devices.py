"""The devices an end-to-end test runs on: the CPU always, CUDA only where a GPU is present."""

import pytest
import torch

DEVICES = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(
        not torch.cuda.is_available(), reason="no CUDA device: runs on a GPU machine")),
]
