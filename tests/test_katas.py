"""Meta-tests over every kata: the reference passes, the stub and every mutant fail."""

from __future__ import annotations

import ast

import pytest

from harness import catalog, grading, metadata

KATAS = catalog.all_katas()
MUTANTS = [(k, m) for k in KATAS for m in k.mutants]


def hint_categories(kata: catalog.Kata) -> set[str]:
    """The hint category of every hidden test, as the grader collects them."""
    run, output = grading.grade(kata, "solution", "--collect-only", hidden_only=True)
    assert run.results, output[-2000:]
    return {r.hint for r in run.results}


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_metadata_is_complete_in_both_languages(kata):
    assert metadata.problems(kata.meta, hint_categories(kata)) == []


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_reference_solution_passes_everything(kata):
    run, output = grading.grade(kata, "solution")
    assert run.passed, output[-3000:]
    assert run.hidden_total > 0 and set(run.level_counts()) >= set(range(1, kata.num_levels + 1))


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_pristine_stub_fails(kata, tmp_path):
    stub = tmp_path / f"{kata.module}.py"
    try:
        stub.write_text(kata.pristine_stub(), encoding="utf-8")
    except FileNotFoundError:  # a kata not committed yet: its working file is the stub
        stub.write_bytes(kata.stub_path.read_bytes())
    run, output = grading.grade(kata, str(stub), "-x")
    assert not run.passed and run.import_error is None, output[-3000:]


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_kata_ships_enough_named_mutants(kata):
    assert len(kata.mutants) >= 6
    for mutant in kata.mutants:
        doc = ast.get_docstring(ast.parse(mutant.read_text(encoding="utf-8")))
        assert doc and doc.strip(), f"{mutant.name} needs a docstring naming its mistake"


@pytest.mark.parametrize("kata, mutant", MUTANTS, ids=[f"{k.name}-{m.stem}" for k, m in MUTANTS])
def test_mutant_fails_a_hidden_test(kata, mutant):
    run, output = grading.grade(kata, str(mutant), "-x", hidden_only=True)
    assert run.import_error is None, run.import_error
    mistake = ast.get_docstring(ast.parse(mutant.read_text(encoding="utf-8")))
    assert any(r.failed for r in run.results if r.level > 0), f"{mutant.name} survived: {mistake}"

