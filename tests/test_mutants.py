"""Mutants as anchored edits: loading, drift, materialising, grading one, and `kata mutants`."""

from __future__ import annotations

import subprocess

import pytest
from typer.testing import CliRunner

from harness import catalog, grading, mutants
from harness.cli import app
from harness.store import Store

AUC = catalog.get("auc_roc")
TIES = "ties_count_one"


def kata(*args, input=None):
    return CliRunner().invoke(app, list(args), input=input)


def test_an_anchor_that_drifted_fails_naming_mutant_and_anchor():
    drifted = mutants.Mutant("gone", {}, ("t",), (mutants.Edit("no such line", "x"),))
    with pytest.raises(mutants.MutantError, match=r"'gone', edit 1: the anchor does not occur"):
        mutants.apply(mutants.reference(AUC), drifted)
    twice = mutants.Mutant("twice", {}, ("t",), (mutants.Edit("return", "x"),))
    with pytest.raises(mutants.MutantError, match=r"occurs \d+ times"):
        mutants.apply(mutants.reference(AUC), twice)


def test_edits_apply_in_order_to_the_text_so_far():
    edits = (mutants.Edit("a = 1", "b = 2"), mutants.Edit("b = 2", "c"))
    m = mutants.Mutant("m", {}, ("t",), edits)
    assert mutants.apply("a = 1\n", m) == "c\n"


def test_a_mutant_is_written_outside_the_repository_and_never_into_solutions():
    before = mutants.reference(AUC)
    path = catalog.get("auc_roc").impl_path(f"mutant:{TIES}")
    try:
        assert not path.is_relative_to(catalog.ROOT) and path.name == "auc.py"
        assert path.read_text() == mutants.source(AUC, mutants.get(AUC, TIES)) != before
    finally:
        path.unlink()
        path.parent.rmdir()
    assert mutants.reference(AUC) == before


def hidden_suite(impl: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(grading.pytest_command(AUC, impl, "-q", *extra, hidden_only=True),
                          cwd=catalog.ROOT, capture_output=True, text=True, timeout=120)


def test_grading_a_mutant_runs_only_the_titles_asked_for():
    title = mutants.get(AUC, TIES).caught_by[0]
    proc = hidden_suite(f"mutant:{TIES}", f"--kata-title={title}")
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert f"✗ {title}" in proc.stdout and "deselected" in proc.stdout
    unknown = hidden_suite(f"mutant:{TIES}", "--kata-title=no such title")
    assert unknown.returncode != 0 and "no such title" in unknown.stderr + unknown.stdout


def test_an_unknown_mutant_is_one_clear_failure():
    proc = hidden_suite("mutant:nope")
    assert proc.returncode == 1 and "no mutant named 'nope'" in proc.stdout


def test_kata_mutants_lists_every_mistake_in_each_language():
    for lang in catalog.LANGS:
        result = kata("mutants", "auc_roc", "--lang", lang)
        assert result.exit_code == 0, result.output
        for m in mutants.load(AUC):
            assert m.name in result.output


def test_a_debugging_katas_planted_bugs_are_not_told_before_they_are_earned():
    et = catalog.get("extra_trees_debug")
    planted = next(m for m in mutants.load(et) if m.planted)
    result = kata("mutants", "extra_trees_debug")
    assert planted.name in result.output and planted.mistake["en"][:30] not in result.output


def test_a_mutants_diff_asks_first_and_is_recorded_like_a_solution(monkeypatch):
    monkeypatch.delenv("KATAS_MAINTAINER", raising=False)  # maintainers are never asked
    refused = kata("mutants", "auc_roc", TIES, input="n\n")
    assert refused.exit_code != 0 and "+++" not in refused.output
    assert not Store().revealed("auc_roc")
    shown = kata("mutants", "auc_roc", TIES, input="y\n")
    assert shown.exit_code == 0 and "-    area = np.sum(dfp * (tps - dtp / 2))" in shown.output
    assert Store().revealed("auc_roc")
    again = kata("mutants", "auc_roc", TIES)  # already revealed: no question
    assert again.exit_code == 0 and "+    area = np.sum(dfp * tps)" in again.output
