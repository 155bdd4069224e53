"""What `pytest katas/<kata>` prints: the scorecard last; the hidden suite stays out of sight."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import textwrap

import pytest

from harness import catalog, grading, results

AUC = catalog.get("auc_roc")
# Passes the examples' perfect ranking only; fails most hidden tests.
HALF_RIGHT = """
    def roc_auc_score(y_true, y_score, sample_weight=None):
        return 1.0

    def roc_curve(y_true, y_score, sample_weight=None):
        raise NotImplementedError
    """


def pytest_on(impl: str, *extra: str) -> str:
    proc = subprocess.run(grading.pytest_command(AUC, impl, *extra), cwd=catalog.ROOT,
                          capture_output=True, text=True,
                          env={"COLUMNS": "80", "PATH": "", "KATA_HOME": os.environ["KATA_HOME"]})
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


@pytest.fixture(scope="module")
def half_right(tmp_path_factory):
    """pytest on HALF_RIGHT with some options: its output, run once per process for each set of
    options, since several tests read the same run."""
    path = tmp_path_factory.mktemp("learner") / "auc.py"
    path.write_text(textwrap.dedent(HALF_RIGHT), encoding="utf-8")
    return functools.cache(lambda *extra: pytest_on(str(path), *extra))


def test_the_scorecard_is_the_last_thing_printed(half_right):
    out = half_right()
    lines = out.rstrip().splitlines()
    assert "FAILED: " in lines[-2] and "hidden tests" in lines[-2], out[-3000:]
    assert lines[-1].strip().startswith("recorded in "), out[-3000:]  # the scorecard's last line
    scorecard = out.rindex("kata scorecard")
    assert " failed" in out[:scorecard].splitlines()[-2], out[-3000:]  # pytest's own count first


def test_hidden_node_ids_show_only_with_reveal(half_right):
    out = half_right()
    assert "harness/suites/auc_roc/test_level1.py::" not in out, out[-3000:]
    assert "FAILED katas/auc_roc/test_auc_roc.py::" in out  # the learner's visible examples stay
    assert "tied scores must count one half" in out.split("kata scorecard")[-1]
    assert "harness/suites/auc_roc/test_level1.py::" in half_right("--reveal")


def test_an_examples_only_run_says_the_hidden_suite_did_not_run():
    examples = AUC.folder / f"test_{AUC.name}.py"
    proc = subprocess.run([sys.executable, "-m", "pytest", str(examples), "--impl=solution"],
                          cwd=catalog.ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:]
    *_, last, recorded = proc.stdout.rstrip().splitlines()
    assert recorded.strip().startswith("not recorded"), recorded
    assert "0/0" not in last and "best level" not in last, last
    assert re.search(r"PASSED: (\d+)/\1 examples", last) and "hidden suite did not run" in last


def test_progress_lines_name_the_hidden_level_not_its_file(half_right):
    out = half_right()
    assert "harness/suites" not in out, out[-3000:]
    assert "auc_roc · hidden Level 1 " in out and "auc_roc · hidden Level 3 " in out
    assert "harness/suites/auc_roc/test_level1.py " in half_right("--reveal")


def test_a_level_blocked_by_a_lower_one_says_so_and_how_it_did():
    result = results.TestResult  # not imported by name: pytest would try to collect it
    run = results.KataRun("auc_roc", "stub", results=[
        result("a", 1, "one", "h", outcome="failed", verdict="wrong answer"),
        result("b", 1, "two", "h"), result("c", 2, "three", "h"),
        result("d", 3, "four", "h"), result("e", 3, "five", "h")])
    last = results.scorecard_lines(run)[-1][0]
    assert last == ("  FAILED: 4/5 hidden tests, best level 0 — Level 1 must pass in full before "
                    "Levels 2–3 count (1/1, 2/2)")
    run.results[0].outcome = "passed"
    run.results[2].outcome = "failed"
    last = results.scorecard_lines(run)[-1][0]
    assert last == ("  FAILED: 4/5 hidden tests, best level 1 — Level 2 must pass in full before "
                    "Level 3 counts (2/2)")
