"""Level 3: acceptance rate, expected tokens and verify: goldens on scripted uniforms, the exact
law of verify's output by enumeration, seeded statistics, bad input."""

import functools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.marks import level

from . import exact, oracle
from .fakes import Recorded, Scripted
from .helpers import identical, integer, raises

grade = level(3, "verify")
TINY = 2.0**-21  # rows may sum to 1 - TINY (within 1e-6); ratios like 1 - 2 TINY stay exact


def verify(impl, drafts, draft, target, *uniforms) -> list[int]:
    """impl.verify on lists turned into arrays, with scripted uniforms; checks the result type."""
    rows = None if draft is None else np.array(draft, dtype=np.float64).reshape(
        len(draft), len(target[0]))
    out = impl.verify(drafts, rows, np.array(target, dtype=np.float64), Scripted(*uniforms))
    assert isinstance(out, list), f"verify must return a list, got {type(out)}"
    return [integer(t) for t in out]


# --- goldens on scripted uniforms --------------------------------------------------------------

EXAMPLE = ([0], [[0.5, 0.5]], [[0.25, 0.75], [1.0, 0.0]])  # drafts, q, p: the ratio is 1/2


@grade("the prompt's example must accept below the ratio and reject at it")
def test_prompt_example(impl):
    assert verify(impl, *EXAMPLE, 0.25, 0.9) == [0, 0]
    assert verify(impl, *EXAMPLE, 0.5, 0.9) == [1]


@grade("verify must draw exactly k + 1 uniforms, whatever it accepts")
def test_draws_k_plus_one(impl):
    q, p = [[0.5, 0.5]] * 3, [[0.25, 0.75]] * 4
    for uniforms in ([0.1, 0.1, 0.1, 0.5], [0.9, 0.1, 0.1, 0.5], [0.1, 0.9, 0.1, 0.5]):
        rng = Scripted(*uniforms)
        impl.verify([0, 0, 0], np.array(q), np.array(p), rng)
        assert rng.drawn == 4
    rng = Scripted(0.5)
    impl.verify([], None, np.array([[0.5, 0.5]]), rng)
    assert rng.drawn == 1


@grade("the last token must be drawn with the last uniform")
def test_last_uniform(impl):
    q = [[0.5, 0.5, 0, 0], [0.25] * 4]
    p = [[0, 0.25, 0.25, 0.5], [0.25] * 4, [1, 0, 0, 0]]
    assert verify(impl, [0, 1], q, p, 0.9, 0.6, 0.2) == [2]  # w = [0, 0, 1/4, 1/2]
    assert verify(impl, [0, 1], q, p, 0.2, 0.2, 0.6) == [3]


@grade("a draft the target gives 0 must never be accepted")
def test_zero_target_rejects(impl):
    assert verify(impl, [0], [[0.5, 0.5]], [[0, 1], [0.5, 0.5]], 0.0, 0.3) == [1]
    assert verify(impl, [1], None, [[1, 0, 0], [0, 0, 1]], 0.0, 0.0) == [0]


@grade("a draft must be accepted while u is below p/q, not q/p")
def test_ratio_p_over_q(impl):
    q, p = [[0.5, 0.5]], [[0.25, 0.75], [0.5, 0.5]]
    assert verify(impl, [1], q, p, 0.8, 0.6) == [1, 1]  # p/q = 3/2: always accepted
    assert verify(impl, [0], q, p, 0.4, 0.6) == [0, 1]  # p/q = 1/2


@grade("a rejection must draw from max(0, p - q)")
def test_residual(impl):
    q, p = [[0.75, 0.25]], [[0.25, 0.75], [0.5, 0.5]]
    assert verify(impl, [0], q, p, 0.5, 0.1) == [1]  # w = [0, 1/2]
    q3, p3 = [[0.5, 0.5, 0]], [[0.25, 0.25, 0.5], [1, 0, 0]]
    assert verify(impl, [0], q3, p3, 0.75, 0.1) == [2]  # w = [0, 0, 1/2]


@grade("an all-zero residual must fall back to the target row")
def test_zero_residual(impl):
    q, p = [[0.5, 0.5, 0]], [[0.5, 0.5 - TINY, 0], [0.25, 0.25, 0.5]]
    assert verify(impl, [1], q, p, 1 - 2 * TINY, 0.875) == [1]
    assert verify(impl, [1], q, p, 1 - 2 * TINY, 0.25) == [0]


@grade("rows must be used as given, not renormalised")
def test_rows_as_given(impl):
    q, p = [[0.5, 0.5]], [[0.5 - TINY, 0.5 - TINY], [0.5, 0.5]]
    assert verify(impl, [0], q, p, 1 - 2 * TINY, 0.25) == [0]  # rejected at ratio 1 - 2 TINY
    assert verify(impl, [0], q, p, 1 - 4 * TINY, 0.25) == [0, 0]


@grade("positions after a rejection must not be looked at")
def test_stop_at_first_rejection(impl):
    q, p = [[0.5, 0.5]] * 2, [[0.25, 0.75], [1, 0], [0.5, 0.5]]
    assert verify(impl, [0, 0], q, p, 0.9, 0.1, 0.3) == [1]
    assert verify(impl, [0, 1], q, p, 0.1, 0.1, 0.3) == [0, 0]


@grade("when every draft is accepted a bonus token must come from the last target row")
def test_bonus(impl):
    q, p = [[0.5, 0.5]], [[1, 0], [0.25, 0.75]]
    assert verify(impl, [0], q, p, 0.3, 0.5) == [0, 1]
    assert verify(impl, [0], q, p, 0.3, 0.1) == [0, 0]
    q2, p2 = [[0.5, 0.5], [0.5, 0.5]], [[1, 0], [0, 1], [0.5, 0.5]]
    assert verify(impl, [0, 1], q2, p2, 0.9, 0.9, 0.6) == [0, 1, 1]


@grade("k = 0 must draw one uniform and sample the first target row")
def test_no_drafts(impl):
    for drafts in ([], (), np.array([], dtype=np.int64)):
        rng = Scripted(0.1)
        out = impl.verify(drafts, None, np.array([[0.25, 0.75]]), rng)
        assert [integer(t) for t in out] == [0] and rng.drawn == 1
    assert verify(impl, [], None, [[0.25, 0.75]], 0.5) == [1]


@grade("verify must take 300 drafts")
def test_many_drafts(impl):
    out = verify(impl, [0] * 300, None, [[1.0, 0.0]] * 301, *[0.5] * 301)
    assert out == [0] * 301


@grade("k = 0 must accept an empty (0, V) draft_probs")
def test_no_drafts_empty_rows(impl):
    assert verify(impl, [], np.zeros((0, 2)), [[0.25, 0.75]], 0.1) == [0]


@grade("an n-gram draft must be accepted with probability p(x) and resampled without x")
def test_ngram(impl):
    p = [[0.25, 0.75], [0.5, 0.5]]
    assert verify(impl, [0], None, p, 0.1, 0.6) == [0, 1]
    assert verify(impl, [0], None, p, 0.3, 0.1) == [1]  # w = [0, 3/4]
    p3 = [[0.5, 0.25, 0.25], [0, 1, 0], [1, 0, 0]]
    assert verify(impl, [1, 1], None, p3, 0.2, 0.5, 0.0) == [1, 1, 0]


@grade("verify must not modify its arguments")
def test_arguments_untouched(impl):
    drafts = np.array([0, 1])
    q = np.array([[0.5, 0.5, 0.0], [0.25, 0.5, 0.25]])
    p = np.array([[0.25, 0.5, 0.25], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
    before = drafts.copy(), q.copy(), p.copy()
    for uniforms in ((0.9, 0.1, 0.5), (0.1, 0.9, 0.5), (0.1, 0.1, 0.5)):
        impl.verify(drafts, q, p, Scripted(*uniforms))
        impl.verify(drafts, None, p, Scripted(*uniforms))  # an n-gram drafter's rejections too
    for got, want in zip((drafts, q, p), before, strict=True):
        identical(got, want)


# --- properties ----------------------------------------------------------------------------------

uniforms = st.one_of(st.sampled_from([0.0, 0.5, 0.999999]),
                     st.floats(0, 1, exclude_max=True, allow_subnormal=False))


@st.composite
def greedy_cases(draw):
    """One-hot target rows, positive draft rows, drafts anywhere, and k + 1 uniforms."""
    vocab, k = draw(st.integers(2, 5)), draw(st.integers(0, 4))
    argmaxes = draw(st.lists(st.integers(0, vocab - 1), min_size=k + 1, max_size=k + 1))
    drafts = draw(st.lists(st.integers(0, vocab - 1), min_size=k, max_size=k))
    weights = draw(st.lists(st.lists(st.integers(1, 9), min_size=vocab, max_size=vocab),
                            min_size=k, max_size=k))
    q = [[w / sum(row) for w in row] for row in weights]
    return vocab, argmaxes, drafts, q if draw(st.booleans()) else None, draw(
        st.lists(uniforms, min_size=k + 1, max_size=k + 1))


@grade("one-hot targets must give the longest argmax prefix, then the next argmax")
@settings(max_examples=150)
@given(case=greedy_cases())
def test_greedy_targets(impl, case):
    vocab, argmaxes, drafts, q, u = case
    p = [oracle.one_hot(a, vocab) for a in argmaxes]
    n = next((i for i, (x, a) in enumerate(zip(drafts, argmaxes, strict=False)) if x != a),
             len(drafts))
    assert verify(impl, drafts, q, p, *u) == drafts[:n] + [argmaxes[n]]


@st.composite
def random_cases(draw):
    vocab, k = draw(st.integers(1, 5)), draw(st.integers(0, 4))
    target = [draw(exact.sixteenths(vocab)) for _ in range(k + 1)]
    q = [draw(exact.sixteenths(vocab)) for _ in range(k)]
    drafts = [draw(st.sampled_from([x for x in range(vocab) if row[x] > 0])) for row in q]
    return drafts, q if draw(st.booleans()) else None, target, draw(
        st.lists(uniforms, min_size=k + 1, max_size=k + 1))


@grade("verify must return 1 to k + 1 tokens led by accepted drafts")
@settings(max_examples=150)
@given(case=random_cases())
def test_output_shape(impl, case):
    drafts, q, p, u = case
    out = verify(impl, drafts, q, p, *u)
    assert 1 <= len(out) <= len(drafts) + 1
    assert out[:-1] == drafts[:len(out) - 1]
    assert 0 <= out[-1] < len(p[0])


# --- exactness without noise --------------------------------------------------------------------


def alphas(target, draft, fixed) -> list[float]:
    if draft is None:
        return [target[i][x] for i, x in enumerate(fixed)]
    return [oracle.alpha(p, q) for p, q in zip(target, draft, strict=False)]


@grade("verify must reach position j + 1 with probability prod of alpha_i, exactly")
@settings(max_examples=40)
@given(case=exact.cases())
def test_exact_reach(impl, case):
    target, draft, fixed = case
    found = exact.law(impl, target, draft, fixed)
    assert math.isclose(sum(found.values()), 1, abs_tol=1e-9)
    a = alphas(target, draft, fixed)
    for j in range(len(target)):
        assert math.isclose(exact.reach(found, j), math.prod(a[:j]), abs_tol=1e-9), j


@grade("each output token must follow its target row, whatever came before it")
@settings(max_examples=40)
@given(case=exact.cases())
def test_exact_marginals(impl, case):
    target, draft, fixed = case
    found = exact.law(impl, target, draft, fixed)
    prefixes = {out[:j] for out in found for j in range(len(out)) if found[out] > 1e-12}
    for prefix in prefixes:
        got = exact.next_token(found, prefix, len(target[0]))
        np.testing.assert_allclose(got, target[len(prefix)], atol=1e-9, err_msg=str(prefix))


# --- seeded statistics ---------------------------------------------------------------------------

CALLS, VOCAB, K = 20_000, 8, 3


def statistics_case() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Target rows p (K + 1, V), draft rows q (K, V) far from them (alphas 0.29, 0.58, 0.48), and
    CALLS draft sequences drawn from q."""
    rng = np.random.default_rng(2024)
    p = rng.dirichlet(np.ones(VOCAB), K + 1)
    q = rng.dirichlet(np.ones(VOCAB), K)
    draws = rng.random((CALLS, K, 1))
    drafts = np.minimum((draws >= np.cumsum(q, axis=1)).sum(axis=2), VOCAB - 1)
    return p, q, drafts


@functools.cache
def run_statistics(impl) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(p, q, the law of the first token, the output lengths) of CALLS seeded verify calls."""
    p, q, drafts = statistics_case()
    rng = np.random.default_rng(7)
    outs = [impl.verify(list(map(int, x)), q, p, rng) for x in drafts]
    first = np.bincount([int(o[0]) for o in outs], minlength=VOCAB) / CALLS
    lengths = np.array([len(o) for o in outs])
    return p, q, first, lengths


@grade("over 20,000 seeded calls the first token must follow p_1", timeout=60)
def test_first_token_statistics(impl):
    p, _, first, _ = run_statistics(impl)
    # Bretagnolle-Huber-Carol: P(TV >= 0.03) <= 2^8 exp(-20,000 * 0.06^2 / 2) < 1e-13 for a
    # correct verify; resampling from p instead of the residual lands 0.13 away.
    assert 0.5 * np.abs(first - p[0]).sum() <= 0.03


@grade("over 20,000 seeded calls the mean length must be sum_j prod_{i<=j} alpha_i", timeout=60)
def test_length_statistics(impl):
    p, q, _, lengths = run_statistics(impl)
    a = [oracle.alpha(list(p[i]), list(q[i])) for i in range(K)]
    mean = sum(math.prod(a[:j]) for j in range(K + 1))
    # Bernstein with |L - mean| <= 3 and Var(L) = 0.90: P(|avg - mean| >= 0.05) < 1e-11.
    assert abs(lengths.mean() - mean) <= 0.05


# --- acceptance_rate and expected_tokens -------------------------------------------------------


@grade("acceptance_rate must be the sum of the entrywise minima", "theory")
def test_acceptance_rate(impl):
    half = np.array([0.5, 0.5])
    assert impl.acceptance_rate(half, half) == pytest.approx(1, abs=1e-12)
    assert impl.acceptance_rate(np.array([1, 0]), np.array([0, 1])) == pytest.approx(0, abs=1e-12)
    assert impl.acceptance_rate(half, np.array([0.25, 0.75])) == pytest.approx(0.75, abs=1e-12)
    assert impl.acceptance_rate(np.array([0.2, 0.3, 0.5]), np.array([0.5, 0.3, 0.2])) == \
        pytest.approx(0.7, abs=1e-12)


@grade("acceptance_rate must match the minima summed one token at a time", "theory")
@settings(max_examples=100)
@given(vocab=st.integers(1, 8), data=st.data())
def test_acceptance_rate_property(impl, vocab, data):
    p, q = (data.draw(exact.sixteenths(vocab)) for _ in range(2))
    got = impl.acceptance_rate(np.array(p), np.array(q))
    assert isinstance(got, float | np.floating)
    assert got == pytest.approx(oracle.alpha(p, q), abs=1e-12)


def exact_sum(alpha: float, k: int) -> float:
    """sum_{j=0..k} alpha^j for the double alpha, in exact rationals."""
    a = Fraction(float(alpha))
    return float((1 - a ** (k + 1)) / (1 - a))


@grade("expected_tokens must sum alpha^j for j = 0..k", "theory")
@pytest.mark.parametrize("alpha, k", [(0.5, 3), (0.5, 0), (0.0, 0), (0.0, 5), (0.25, 1),
                                      (0.9, 1000), (0.999, 1000), (0.7, 8), (1e-300, 4),
                                      (1 - 1e-12, 4), (1 - 1e-9, 1000), (np.float32(0.5), 2)])
def test_expected_tokens(impl, alpha, k):
    assert impl.expected_tokens(alpha, k) == pytest.approx(exact_sum(alpha, k), rel=1e-8)


@grade("expected_tokens must be k + 1 at alpha = 1", "theory")
@pytest.mark.parametrize("alpha, k", [(1, 0), (1.0, 1), (1.0, 7), (np.float64(1), 1000)])
def test_expected_tokens_at_one(impl, alpha, k):
    assert impl.expected_tokens(alpha, k) == pytest.approx(k + 1, rel=1e-8)


# --- bad input ------------------------------------------------------------------------------------

P2 = np.array([[0.25, 0.75], [0.5, 0.5]])  # target rows for k = 1, V = 2
Q1 = np.array([[0.5, 0.5]])


def rejects(impl, drafts, draft, target) -> None:
    """A ValueError. The uniforms are small, so a verify that misses the fault accepts and
    returns; whether anything was drawn first is its own test."""
    raises(impl.verify, drafts, draft, target, Scripted(*[0.01] * 8))


@grade("draft tokens that are not integers must raise ValueError", "errors")
@pytest.mark.parametrize("drafts", [[0.0], [True], [np.bool_(False)], np.array([0.0]),
                                    np.array([True]), np.array([[0]]), np.array(0), [None], "0",
                                    None, 0],
                         ids=["float", "True", "np.False_", "float array", "bool array",
                              "2-D array", "0-d array", "None token", "str", "None", "int"])
def test_bad_drafts(impl, drafts):
    rejects(impl, drafts, None, P2)


@grade("a draft token outside [0, V) must raise ValueError", "errors")
@pytest.mark.parametrize("token", [-1, -2, 2, 7, np.int64(-1)])
def test_draft_out_of_range(impl, token):
    rejects(impl, [token], None, P2)
    rejects(impl, [token], Q1, P2)
    rejects(impl, np.array([token]), Q1, P2)


@grade("target_probs of the wrong shape must raise ValueError", "errors")
@pytest.mark.parametrize("target", [P2[:1], np.vstack([P2, P2[:1]]), P2[0], P2[None],
                                    np.ones((2, 1, 1)), np.zeros((2, 0))],
                         ids=["k rows", "k + 2 rows", "1-D", "3-D", "3-D of k + 1 rows", "V = 0"])
def test_target_shape(impl, target):
    rejects(impl, [0], Q1, target)
    rejects(impl, [0], None, target)


@grade("draft_probs of the wrong shape must raise ValueError", "errors")
@pytest.mark.parametrize("draft", [np.zeros((0, 2)), np.vstack([Q1, Q1]), Q1[0], Q1[None],
                                   np.array([[0.5, 0.5, 0.0]]), np.array([[1.0]])],
                         ids=["k - 1 rows", "k + 1 rows", "1-D", "3-D", "V + 1", "V - 1"])
def test_draft_shape(impl, draft):
    rejects(impl, [0], draft, P2)


@grade("probabilities of a dtype that is not integer or floating must raise ValueError",
       "errors")
def test_probability_dtype(impl):
    onehot = np.array([[True, False], [False, True]])
    rejects(impl, [0], None, onehot)
    rejects(impl, [0], onehot[:1], P2)
    rejects(impl, [0], Q1.astype(complex), P2)
    rejects(impl, [0], None, P2.astype(object))
    raises(lambda: impl.acceptance_rate(onehot[0], onehot[0]))


@grade("a NaN or infinite probability must raise ValueError", "errors")
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_probability_not_finite(impl, bad):
    target, draft = P2.copy(), np.array([[0.5, 0.5], [0.5, 0.5]])
    target[1, 1] = bad
    rejects(impl, [0], Q1, target)
    draft[1, 0] = bad
    rejects(impl, [0, 0], draft, np.vstack([P2, P2[:1]]))


@grade("a negative probability must raise ValueError", "errors")
def test_negative_probability(impl):
    rejects(impl, [0], Q1, np.array([[0.25, 0.75], [1.5, -0.5]]))
    rejects(impl, [0], np.array([[1.25, -0.25]]), P2)
    rejects(impl, [0], None, np.array([[-0.25, 1.25], [0.5, 0.5]]))


@grade("a row whose sum is off 1 by more than 1e-6 must raise ValueError", "errors")
@pytest.mark.parametrize("total", [0.99, 1 - 2e-6, 1 + 2e-6, 2.0, 0.0])
def test_row_sums(impl, total):
    rejects(impl, [0], Q1, np.array([[0.25, 0.75], [0.5 * total, 0.5 * total]]))
    rejects(impl, [0], Q1 * total, P2)
    rejects(impl, [], None, np.array([[0.25 * total, 0.75 * total]]))


@grade("rows within 1e-6 of summing to 1 must be accepted", "errors")
@pytest.mark.parametrize("total", [1 - 5e-7, 1 + 5e-7, 1 - 1e-15])
def test_row_sums_within_tolerance(impl, total):
    assert verify(impl, [0], Q1 * total, P2 * total, 0.1, 0.1) == [0, 0]
    assert verify(impl, [], None, [[0.1] * 10], 0.95) == [9]


@grade("a draft its own distribution gives 0 must raise ValueError", "errors")
def test_impossible_draft(impl):
    rejects(impl, [1], np.array([[1.0, 0.0]]), P2)
    q = np.array([[0.5, 0.5], [0.0, 1.0]])
    rejects(impl, [0, 0], q, np.vstack([P2, P2[:1]]))


@grade("a verify call that raises must draw nothing", "errors")
def test_verify_raises_before_drawing(impl):
    for drafts, draft, target in (([2], None, P2), ([0], Q1, P2[:1]), ([1], [[1.0, 0.0]], P2),
                                  ([0], Q1, P2 * 0.5), ([0.0], None, P2)):
        rng = Recorded(0)
        raises(impl.verify, drafts, None if draft is None else np.array(draft), target, rng)
        assert rng.drawn == 0


@grade("acceptance_rate must reject what verify rejects in a row", "errors")
@pytest.mark.parametrize("bad", [np.array([1.5, -0.5]), np.array([math.nan, 1.0]),
                                 np.array([0.5, 0.4]), np.array([True, False]), np.zeros(0)],
                         ids=["negative", "NaN", "sum 0.9", "bool", "empty"])
def test_acceptance_rate_rows(impl, bad):
    good = np.full(len(bad), 1 / max(len(bad), 1))
    raises(lambda: impl.acceptance_rate(bad, good))
    raises(lambda: impl.acceptance_rate(good, bad))


@grade("acceptance_rate must reject distributions of different lengths or not 1-D", "errors")
def test_acceptance_rate_shapes(impl):
    raises(lambda: impl.acceptance_rate(np.array([0.5, 0.5]), np.array([1.0])))
    raises(lambda: impl.acceptance_rate(np.array([1.0]), np.array([0.25, 0.25, 0.5])))
    raises(lambda: impl.acceptance_rate(np.array([0.5, 0.5]), np.array([0.25, 0.25, 0.5])))
    raises(lambda: impl.acceptance_rate(np.array([[0.5, 0.5]]), np.array([[0.5, 0.5]])))
    raises(lambda: impl.acceptance_rate(np.array(1.0), np.array(1.0)))


@grade("expected_tokens must reject alpha that is not a real in [0, 1]", "errors")
@pytest.mark.parametrize("alpha", [-0.1, 1.1, 1 + 1e-12, math.nan, math.inf, True, "0.5",
                                   None])
def test_expected_tokens_bad_alpha(impl, alpha):
    raises(lambda: impl.expected_tokens(alpha, 3))


@grade("expected_tokens must reject k that is not an integer >= 0", "errors")
@pytest.mark.parametrize("k", [-1, -5, 2.0, 2.5, True, None, "3", np.float64(3)])
def test_expected_tokens_bad_k(impl, k):
    raises(lambda: impl.expected_tokens(0.5, k))
