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


def wide_list(monkeypatch) -> str:
    """`kata list` on a terminal wide enough that no path is folded."""
    from rich.console import Console

    from harness import cli

    monkeypatch.setattr(cli, "console", Console(width=400))
    return CliRunner().invoke(app, ["list"]).output


def test_a_run_of_any_file_of_the_learners_shows_in_kata_list_and_progress_with_its_path(
        tmp_path, monkeypatch):
    mine = tmp_path / "auc.py"
    mine.write_text(AUC.solution_path.read_text(encoding="utf-8"), encoding="utf-8")
    last = pytest_run(f"--impl={mine}")[-1].strip()
    assert last == f"recorded in {Store().path} (pytest)", last
    [attempt] = Store().attempts("auc_roc")
    assert attempt.impl == str(mine.resolve()) and attempt.best_level == AUC.num_levels
    listed = wide_list(monkeypatch)
    assert f"level {AUC.num_levels} ({attempt.passed}/{attempt.total})" in listed, listed
    assert str(mine.resolve()) in listed, listed
    from harness import progress

    [row] = [r for r in progress.rows(Store().attempts(), []) if r.kata == "auc_roc"]
    assert (row.graded, row.best_level) == (1, AUC.num_levels)


def test_the_reference_by_its_path_is_not_recorded():
    last = pytest_run(f"--impl={AUC.solution_path}")[-1].strip()
    assert last.startswith("not recorded: only your own files are"), last
    assert Store().attempts("auc_roc") == []


def test_a_mock_submit_of_a_file_outside_katas_counts_in_kata_list(tmp_path, monkeypatch):
    from harness.store import Attempt

    mine = str(tmp_path / "auc.py")
    Store().add_attempt(Attempt("auc_roc", mine, 1.0, 2, 30, 40, {"1": [20, 20]}, "mock"))
    assert Store().best("auc_roc").impl == mine
    listed = wide_list(monkeypatch)
    assert "level 2 (30/40)" in listed and mine in listed, listed
