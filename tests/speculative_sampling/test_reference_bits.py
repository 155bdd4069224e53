"""The reference's batch_sample, rewritten for speed (blocks of rows sorted by what they ask for,
a partition for top-p's head, draws over the kept tokens only), gives the tokens it gave before,
for the seeds of its benchmark's mixed rows; and each row's bits are the row's own: equal to a
loop of sample and of probs."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from harness import catalog
from harness.loader import load_module
from harness.suites.speculative_sampling.bench import mixed_rows

KATA = catalog.get("speculative_sampling")

# sha256 (first 16 hex digits) of three successive batch_sample calls' tokens, as int64, from the
# reference before the rewrite.
BEFORE = {(64, 7): "0bfffe23af118bea", (64, 1_000): "8dd20107080e31e4",
          (16, 32_000): "54a0d0b490bd603c"}


@pytest.fixture(scope="module")
def reference():
    return load_module(KATA.solution_path, "speculative_sampling_reference")


def case(batch: int, vocab: int) -> tuple[np.ndarray, list]:
    return np.random.default_rng(vocab).standard_normal((batch, vocab)) * 3, mixed_rows(batch)


@pytest.mark.parametrize("batch, vocab", list(BEFORE))
def test_batch_sample_gives_the_tokens_it_gave_before(reference, batch, vocab):
    logits, cols = case(batch, vocab)
    rngs = [np.random.default_rng(i) for i in range(batch)]
    tokens = [reference.batch_sample(logits, *cols, rngs) for _ in range(3)]
    digest = hashlib.sha256(np.concatenate(tokens).astype("<i8").tobytes()).hexdigest()
    assert digest[:16] == BEFORE[batch, vocab]


@pytest.mark.parametrize("batch, vocab", list(BEFORE))
def test_each_row_is_its_own_sample_and_probs(reference, batch, vocab):
    logits, cols = case(batch, vocab)
    tokens = reference.batch_sample(logits, *cols, [np.random.default_rng(i) for i in range(batch)])
    probs = reference.batch_probs(logits, *cols)
    for i in range(batch):
        row = [c[i] for c in cols]
        alone = reference.sample(logits[i], reference.SamplingParams(*row),
                                 np.random.default_rng(i))
        assert tokens[i] == alone
        assert probs[i].tobytes() == reference.probs(logits[i], *row).tobytes()
