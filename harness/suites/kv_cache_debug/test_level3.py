"""Level 3: chunks of several tokens on a cache, and continuations that share one."""

import numpy as np
import torch
from hypothesis import given

from harness.marks import level

from .helpers import (
    TOL,
    Batch,
    assert_rows_match,
    batches,
    examples,
    fed_logits,
    model,
    own,
)

grade = level(3)

# Row 0 is left-padded by two steps, row 1 has none.
ROWS = Batch(np.array([[0, 0, 5, 17, 3, 42, 8], [11, 0, 47, 2, 29, 13, 6]]),
             np.array([[0, 0, 1, 1, 1, 1, 1], [1] * 7]), [3, 2, 1, 1])


@grade("a chunk of several tokens on a cache must give the full forward's logits", hint="chunks")
def test_a_chunk_on_a_cache(impl):
    gpt = model(impl)
    chunked = fed_logits(gpt, ROWS)
    one_shot = fed_logits(gpt, Batch(ROWS.ids, ROWS.mask, [7]))
    assert np.abs(chunked - one_shot)[ROWS.mask == 1].max() <= TOL
    assert_rows_match(gpt, ROWS.ids, ROWS.mask, chunked)


@grade("any split into chunks, under any mask, must give finite logits and each row's plain "
       "forward at its real positions", hint="chunks")
@examples(60)
@given(batches("any"))
def test_any_split_under_any_mask(impl, batch):
    gpt = model(impl)
    logits = fed_logits(gpt, batch)
    assert np.isfinite(logits).all()
    assert_rows_match(gpt, batch.ids, batch.mask, logits)


@grade("two continuations from one cache must not disturb each other", hint="cache")
def test_two_continuations_of_one_cache(impl):
    # A prompt, one decoded token, then two different chunks from that cache, each continued by
    # one more token: a chat forked into two replies, or two speculative drafts.
    gpt = model(impl)
    prompt, token = [[5, 17, 3], [11, 0, 47]], [[42], [2]]
    branches = {"a": [[8, 8], [29, 13]], "b": [[30, 1], [6, 6]]}
    _, cache = gpt.forward(torch.tensor(prompt))
    _, cache = gpt.forward(torch.tensor(token), None, cache)
    forks = {name: gpt.forward(torch.tensor(chunk), None, cache)[1]
             for name, chunk in branches.items()}
    for name, chunk in branches.items():
        logits, _ = gpt.forward(torch.tensor([[7], [7]]), None, forks[name])
        for b in range(2):
            want = own(gpt, (*prompt[b], *token[b], *chunk[b], 7))[-1]
            gap = np.abs(logits[b, 0].numpy() - want).max()
            assert gap <= TOL, f"branch {name}, row {b}: off by {gap:.3g}"
