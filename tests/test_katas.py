"""Meta-tests over every kata: the reference passes, the stub and every mutant fail.

The in-process checks come first (anchors apply, mutants compile, titles exist), the gradings in
child processes after, so a drifted mutant is reported in seconds. Each grading is forked from a
warm grader (harness.warm): hundreds of mutants would otherwise spend most of their time
importing the same libraries.
"""

from __future__ import annotations

import functools

import pytest

from harness import catalog, grading, metadata, mutants, rules

KATAS = catalog.all_katas()


def _mutants(kata: catalog.Kata) -> list[mutants.Mutant]:
    try:
        return mutants.load(kata)
    except mutants.MutantError:  # reported by test_mutants_are_anchored_edits
        return []


MUTANTS = [(k, m) for k in KATAS for m in _mutants(k)]


@functools.cache
def hidden_tests(kata: catalog.Kata) -> dict[str, str]:
    """title -> hint category of every hidden test, as the grader collects them."""
    run, output = grading.grade(kata, "solution", "--collect-only", hidden_only=True,
                                warm=True)
    assert run.results, output[-2000:]
    return {r.title: r.hint for r in run.results}


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_metadata_is_complete_in_both_languages(kata):
    assert metadata.problems(kata.meta, set(hidden_tests(kata).values())) == []


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_mutants_are_anchored_edits(kata):
    found = mutants.load(kata)  # a malformed file raises, naming the mutant
    assert len(found) >= 6, f"{kata.name} needs at least 6 mutants, has {len(found)}"
    reference = mutants.reference(kata)
    titles = hidden_tests(kata)
    for mutant in found:
        text = mutants.source(kata, mutant)  # a drifted anchor raises, naming it
        compile(text, f"mutant:{mutant.name}", "exec")
        assert text != reference, f"mutant {mutant.name!r} changes nothing"
        unknown = [t for t in mutant.caught_by if t not in titles]
        assert not unknown, f"mutant {mutant.name!r} names no hidden test titled {unknown[0]!r}"


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_rule_map_covers_the_prompt_and_every_rule_has_a_mutant(kata):
    found = rules.problems(kata, rules.load(kata), mutants.load(kata))
    assert not found, f"{kata.name}'s rule map is incomplete:\n" + "\n".join(found)


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_reference_solution_passes_everything(kata):
    run, output = grading.grade(kata, "solution", warm=True)
    assert run.passed, output[-3000:]
    assert run.hidden_total > 0 and set(run.level_counts()) >= set(range(1, kata.num_levels + 1))


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_pristine_stub_fails(kata, tmp_path):
    stub = tmp_path / f"{kata.module}.py"
    stub.write_text(kata.pristine_stub(), encoding="utf-8")
    run, output = grading.grade(kata, str(stub), "-x", warm=True)
    assert not run.passed and run.import_error is None, output[-3000:]


@pytest.mark.parametrize("kata, mutant", MUTANTS, ids=[f"{k.name}-{m.name}" for k, m in MUTANTS])
def test_mutant_is_caught_by_the_tests_it_names(kata, mutant):
    titles = [f"--kata-title={t}" for t in mutant.caught_by]
    run, output = grading.grade(kata, f"mutant:{mutant.name}", "-x", *titles, hidden_only=True,
                                warm=True)
    assert run.import_error is None, run.import_error
    caught = [r for r in run.results if r.failed and r.title in mutant.caught_by]
    assert caught, f"{mutant.name} survived {list(mutant.caught_by)}: {mutant.mistake['en']}"
