"""Every full graded run of the learner's file lands in the progress store, however it was run."""

from __future__ import annotations

import subprocess
import sys

from typer.testing import CliRunner

from harness import catalog, grading
from harness.cli import app
from harness.store import Store

AUC = catalog.get("auc_roc")


def pytest_run(*extra: str) -> list[str]:
    """pytest katas/auc_roc on the learner's own file, as a learner types it: its output lines."""
    proc = subprocess.run(grading.pytest_command(AUC, "stub", "-q", *extra), cwd=catalog.ROOT,
                          capture_output=True, text=True, timeout=300)
    return proc.stdout.rstrip().splitlines()


def test_a_full_pytest_run_is_recorded_and_shows_in_kata_list():
    last = pytest_run()[-1].strip()
    assert last == f"recorded in {Store().path} (pytest)", last
    [attempt] = Store().attempts("auc_roc")
    assert (attempt.impl, attempt.via) == ("stub", "pytest") and attempt.total > 0
    listed = CliRunner().invoke(app, ["list"]).output  # only auc_roc has a result to show
    assert f"level {attempt.best_level}" in listed, listed
    assert f"({attempt.passed}/{attempt.total})" in listed, listed


def test_a_run_of_part_of_the_hidden_suite_is_not_a_result_and_says_why():
    for extra in (["-k", "ties"], ["-x"], ["--kata-title=tied scores must count one half"]):
        last = pytest_run(*extra)[-1].strip()
        assert last == ("not recorded: only part of the hidden suite ran "
                        "(-k, -m, -x, --kata-title)"), (extra, last)
    assert Store().attempts("auc_roc") == []


def test_kata_test_and_kata_grade_record_how_they_ran():
    subprocess.run([sys.executable, "-m", "harness", "test", "auc_roc", "-q"], cwd=catalog.ROOT,
                   capture_output=True, timeout=300)
    CliRunner().invoke(app, ["grade", "auc_roc"])
    assert [a.via for a in Store().attempts("auc_roc")] == ["test", "grade"]


def test_two_runs_at_once_are_both_recorded():
    command = grading.pytest_command(AUC, "stub", "-q")
    runs = [subprocess.Popen(command, cwd=catalog.ROOT, stdout=subprocess.PIPE, text=True)
            for _ in range(2)]
    outputs = [run.communicate(timeout=300)[0] for run in runs]
    assert all("recorded in" in out.splitlines()[-1] for out in outputs), outputs
    assert len(Store().attempts("auc_roc")) == 2
