"""End to end: a speculative decoding loop on the kata's own functions, with bigram tables for the
draft and the target (V = 3, k = 2). Drafts come from `sample` over the draft's row, the rows from
`probs`, the verdict from `verify`; over 20,000 seeded runs the first three tokens must follow the
target's own law, and a verify that resamples from the target instead of the residual must not.

NumPy only: no torch, no GPU."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from harness import catalog, mutants
from harness.loader import load_module

KATA = catalog.get("speculative_sampling")
K, LENGTH, RUNS, START = 2, 3, 20_000, 0
TARGET = np.array([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3], [0.3, 0.3, 0.4]])  # row: previous token
DRAFT = np.array([[0.1, 0.7, 0.2], [0.5, 0.2, 0.3], [0.1, 0.1, 0.8]])


def generate(impl, rows_p: np.ndarray, rows_q: np.ndarray, rng: np.random.Generator) -> tuple:
    """The first LENGTH tokens after START, K drafts per verify call."""
    out, previous = [], START
    params = impl.SamplingParams()
    while len(out) < LENGTH:
        drafts, context = [], previous
        for _ in range(K):
            context = int(impl.sample(np.log(DRAFT[context]), params, rng))
            drafts.append(context)
        contexts = [previous, *drafts]
        out += impl.verify(drafts, rows_q[contexts[:K]], rows_p[contexts], rng)
        previous = int(out[-1])
    return tuple(int(t) for t in out[:LENGTH])


def distance_to_target(impl) -> float:
    """Total variation between the empirical law of the first LENGTH tokens and the target's."""
    rows_p = np.array([impl.probs(np.log(row)) for row in TARGET])
    rows_q = np.array([impl.probs(np.log(row)) for row in DRAFT])
    rng = np.random.default_rng(11)
    counts: dict[tuple, int] = {}
    for _ in range(RUNS):
        seq = generate(impl, rows_p, rows_q, rng)
        counts[seq] = counts.get(seq, 0) + 1
    exact = {seq: math.prod(TARGET[a, b] for a, b in zip((START, *seq), seq, strict=False))
             for seq in itertools.product(range(3), repeat=LENGTH)}
    return 0.5 * sum(abs(counts.get(seq, 0) / RUNS - w) for seq, w in exact.items())


def test_speculative_loop_follows_the_target(reference):
    # Bretagnolle-Huber-Carol over the 27 sequences: P(TV >= 0.05) <= 2^27 exp(-20,000 * 0.1^2 / 2)
    # < 1e-35 for a correct verify.
    assert distance_to_target(reference) <= 0.05


@pytest.mark.parametrize("name", ["resample_from_target"])
def test_a_biased_verify_is_visible(name):
    bad = load_module(mutants.materialise(KATA, name), f"speculative_mutant_{name}")
    assert distance_to_target(bad) > 0.1
