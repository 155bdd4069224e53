"""One torch thread for the ToyLM on a CPU."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch


@contextmanager
def one_thread() -> Iterator[None]:
    """The ToyLM's ops are tiny: extra threads gain nothing and, on a busy machine, their
    spinning slows every op down many times over."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
