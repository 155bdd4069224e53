"""Failure signatures and the likely mistake per submit (harness.signatures, harness.diagnosis).

The signatures are computed by `tools/signatures.py` from the collected grader; these tests read
the stored files only: a stale file fails here without regrading anything.
"""

from __future__ import annotations

import pytest

from harness import catalog, diagnosis, mutants, signatures

KATAS = catalog.all_katas()
TOP1 = 0.95  # goal: a mutant's own failures rank it (or an equal signature) first
AUC = catalog.get("auc_roc")


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_signatures_are_current(kata):
    why = signatures.stale(kata)
    assert why is None, f"{why}: run `nice -n 15 python tools/signatures.py {kata.name}`"
    stored = signatures.load(kata)
    assert set(stored.signatures) == {m.name for m in mutants.load(kata)}
    for name, titles in stored.signatures.items():
        assert titles <= set(stored.tests), f"{name} fails a title the suite no longer has"


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_each_mutants_own_failures_rank_it_first(kata):
    if signatures.stale(kata):
        pytest.skip("missing or stale signatures: test_signatures_are_current says which")
    rate = diagnosis.top1(kata)
    print(f"{kata.name}: top-1 {rate.hits}/{rate.total} ({rate.share:.1%}); "
          f"{len(rate.shared)} groups of mutants share a signature")
    assert rate.share >= TOP1, f"{kata.name}: top-1 {rate.share:.1%}; missed {rate.missed}"


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_every_test_a_mutant_names_is_one_it_fails(kata):
    """caught_by is a claim about the suite; the signature, the whole suite's verdict, checks it
    (test_katas only asks that one of the named tests fails)."""
    if signatures.stale(kata):
        pytest.skip("missing or stale signatures: test_signatures_are_current says which")
    stored = signatures.load(kata)
    wrong = [f"{m.name}: {t!r}" for m in mutants.load(kata) for t in m.caught_by
             if t not in stored.signatures[m.name]]
    assert not wrong, "named in caught_by but passed:\n" + "\n".join(wrong)


def test_a_submit_gets_at_most_two_likely_mistakes_best_first():
    _, found = diagnosis.mistakes(AUC)
    ones = [m for m in found if m.signature and m.level == 1]
    a, b = next((a, b) for a in ones for b in ones
                if not a.signature <= b.signature and not b.signature <= a.signature)
    failing = a.signature | b.signature
    levels = range(1, AUC.num_levels + 1)
    shown = diagnosis.likely(AUC, failing, levels)
    assert 1 <= len(shown) <= 2 and shown == diagnosis.rank(AUC, failing, levels)[:2]
    assert [s.score for s in shown] == sorted((s.score for s in shown), reverse=True)
    assert all(0 < s.score <= 1 and s.explained + s.unexplained == len(failing & set(
        signatures.load(AUC).tests)) for s in shown)
    assert diagnosis.likely(AUC, failing, levels) == shown  # deterministic


def test_an_exact_signature_scores_1_and_nothing_failing_gives_nothing():
    _, found = diagnosis.mistakes(AUC)
    m = next(m for m in found if m.signature)
    [best, *_] = diagnosis.rank(AUC, m.signature, range(1, AUC.num_levels + 1))
    assert best.score == 1 and (best.unexplained, best.added) == (0, 0)
    assert diagnosis.likely(AUC, [], range(1, AUC.num_levels + 1)) == []


def test_only_the_open_levels_mistakes_and_tests_count():
    tests, found = diagnosis.mistakes(AUC)
    level2 = next(m for m in found if m.level == 2 and m.signature)
    assert all(r.level == 1 for r in diagnosis.rank(AUC, level2.signature, [1]))
    level1_titles = {t for t, lvl in tests.items() if lvl == 1}
    assert not diagnosis.rank(AUC, level2.signature - level1_titles, [1])
