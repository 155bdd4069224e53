"""Level 3: chunks of several tokens on a cache, and continuations that share one."""

import numpy as np
import torch
from hypothesis import example, given

from harness.marks import level

from .helpers import (
    MEANS,
    TOL,
    Batch,
    assert_same_real_logits,
    batches,
    examples,
    fed_logits,
    model,
    one_shot,
)

grade = level(3)

# Row 0 is left-padded by two steps, row 1 has none.
ROWS = Batch(np.array([[0, 0, 5, 17, 3, 42, 8], [11, 0, 47, 2, 29, 13, 6]]),
             np.array([[0, 0, 1, 1, 1, 1, 1], [1] * 7]), [3, 2, 1, 1])


@grade("any split into chunks on the cache, under any mask, must give the logits of one forward "
       "over the whole batch", hint="chunks")
@examples(60)
@given(batches("any"))
@example(ROWS)
def test_any_split_into_chunks(impl, batch):
    # With wq zero, attention is the mean of the values each query may see: the keys a chunk's
    # queries see show, and positions and the scale of the scores play no part.
    gpt = model(impl, MEANS)
    assert_same_real_logits(fed_logits(gpt, batch), fed_logits(gpt, one_shot(batch)), batch.mask)


@grade("two continuations from one cache must not disturb each other", hint="cache")
def test_two_continuations_of_one_cache(impl):
    # A prompt, one decoded token, then two different chunks from that cache, each continued by
    # one more token: a chat forked into two replies, or two speculative drafts. Each branch must
    # give what it gives when it is the only continuation of a cache built the same way.
    gpt = model(impl)
    prompt, token = [[5, 17, 3], [11, 0, 47]], [[42], [2]]
    branches = {"a": [[8, 8], [29, 13]], "b": [[30, 1], [6, 6]]}

    def start():
        _, cache = gpt.forward(torch.tensor(prompt))
        return gpt.forward(torch.tensor(token), None, cache)[1]

    def finish(cache) -> np.ndarray:
        logits, _ = gpt.forward(torch.tensor([[7], [7]]), None, cache)
        return logits[:, 0].detach().cpu().numpy()

    shared = start()
    forks = {name: gpt.forward(torch.tensor(chunk), None, shared) for name, chunk in
             branches.items()}
    got = {name: (logits.detach().cpu().numpy(), finish(cache))
           for name, (logits, cache) in forks.items()}
    for name, chunk in branches.items():
        logits, cache = gpt.forward(torch.tensor(chunk), None, start())
        want = (logits.detach().cpu().numpy(), finish(cache))
        for what, a, b in zip(("its chunk", "the next token"), got[name], want, strict=True):
            same = (np.abs(a - b) <= TOL) | (np.isnan(a) & np.isnan(b))
            assert same.all(), f"branch {name}, {what}: off its lone run"
