"""Visible examples. `pytest katas/speculative_sampling` also runs the hidden suite on your file."""

import math

import numpy as np


class Uniforms:
    """An rng whose random() and random(n) return these values in order."""

    def __init__(self, *values: float):
        self.values = list(values)

    def random(self, size=None):
        if size is None:
            return self.values.pop(0)
        drawn, self.values = self.values[:size], self.values[size:]
        return np.array(drawn)


HALF_QUARTERS = np.array([0.0, -math.log(2), -math.log(2)])  # softmax: [1/2, 1/4, 1/4]


def test_level1_filters_at_their_boundaries(impl):
    np.testing.assert_allclose(impl.probs(HALF_QUARTERS), [0.5, 0.25, 0.25], atol=1e-12)
    assert impl.probs(HALF_QUARTERS, top_p=0.5).tolist() == [1.0, 0.0, 0.0]
    np.testing.assert_allclose(impl.probs(HALF_QUARTERS, top_p=0.75), [0.5, 0.25, 0.25])
    np.testing.assert_allclose(impl.probs(HALF_QUARTERS, min_p=0.5), [0.5, 0.25, 0.25])
    np.testing.assert_allclose(impl.probs(np.array([3.0, 2.0, 2.0, 0.0]), top_k=2)[3], 0.0)


def test_level1_sample_and_greedy(impl):
    assert impl.sample(HALF_QUARTERS, impl.SamplingParams(), Uniforms(0.5)) == 1
    rng = Uniforms()
    assert impl.sample(np.array([1.0, 4.0, 4.0]), impl.SamplingParams(temperature=0), rng) == 1


def test_level2_rows_do_not_see_each_other(impl):
    logits = np.array([[0.0, 1.0, 2.0], [-1000.0, -1001.0, -1002.0]])
    got = impl.batch_probs(logits, [1.0, 0.5], [0, 2], [1.0, 1.0], [0.0, 0.0])
    assert got[0].tobytes() == impl.probs(logits[0]).tobytes()
    assert got[1].tobytes() == impl.probs(logits[1], 0.5, 2, 1.0, 0.0).tobytes()
    tokens = impl.batch_sample(logits, [1.0, 0], [0, 0], [1.0, 1.0], [0.0, 0.0],
                               [Uniforms(0.99), Uniforms()])
    assert tokens.tolist() == [2, 0]


def test_level3_the_prompt_example(impl):
    q, p = np.array([[0.5, 0.5]]), np.array([[0.25, 0.75], [1.0, 0.0]])
    assert impl.verify([0], q, p, Uniforms(0.25, 0.9)) == [0, 0]
    assert impl.verify([0], q, p, Uniforms(0.5, 0.9)) == [1]
    assert impl.acceptance_rate(p[0], q[0]) == 0.75
    assert impl.expected_tokens(0.5, 3) == 1.875
