"""The grader on learner code that hangs, crashes, leaks threads or does not import."""

from __future__ import annotations

import subprocess
import textwrap
import time

import pytest

from harness import catalog, grading

AUC = catalog.get("auc_roc")


def learner_file(tmp_path, body: str):
    path = tmp_path / "auc.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def test_hanging_implementation_is_graded_to_the_end(tmp_path):
    path = learner_file(tmp_path, """
        def roc_auc_score(y_true, y_score, sample_weight=None):
            while True:
                pass

        def roc_curve(y_true, y_score, sample_weight=None):
            while True:
                pass
        """)
    start = time.monotonic()
    run, output = grading.grade(AUC, str(path), "--kata-timeout=0.2")
    assert time.monotonic() - start < 120
    hidden = [r for r in run.results if r.level > 0]
    assert hidden and all(r.failed for r in hidden)
    assert all("timed out after 0.2 s — deadlock or infinite loop?" in r.verdict for r in hidden)
    assert "timed out after 0.2 s" in output


def test_a_file_that_does_not_import_gives_one_clear_error(tmp_path):
    path = learner_file(tmp_path, "def roc_auc_score(y_true, y_score:\n    pass\n")
    run, output = grading.grade(AUC, str(path))
    assert run.import_error and "SyntaxError" in run.import_error and "line 1" in run.import_error
    assert output.count("does not import") <= 3, output  # the failure, its summary, the scorecard
    assert "1 failed" in output
    assert all(r.failed for r in run.results)


def test_a_missing_name_is_one_clear_failure_not_a_collection_error(tmp_path):
    path = learner_file(tmp_path, "def roc_curve(y_true, y_score, sample_weight=None):\n"
                                  "    raise NotImplementedError\n")
    run, output = grading.grade(AUC, str(path))
    assert "error" not in output.lower().split("kata scorecard")[0].splitlines()[-1]
    assert run.import_error and "roc_auc_score" in run.import_error
    assert "roc_curve" not in run.import_error.split("roc_auc_score")[0]  # only what is missing
    assert "raised AttributeError" not in output and "1 failed" in output


def test_threads_left_running_do_not_keep_the_run_alive(tmp_path):
    path = learner_file(tmp_path, """
        import threading

        def roc_auc_score(y_true, y_score, sample_weight=None):
            threading.Thread(target=threading.Event().wait).start()  # never ends, not daemon
            return 0.5

        def roc_curve(y_true, y_score, sample_weight=None):
            raise NotImplementedError
        """)
    run, _ = grading.grade(AUC, str(path), "-k", "all_tied")
    assert [r.outcome for r in run.results if r.level > 0] == ["passed"]


def test_hidden_failures_show_title_and_hint_but_no_source(tmp_path):
    mutant = AUC.suite_dir / "mutants" / "ties_count_zero.py"
    run, output = grading.grade(AUC, str(mutant), "-k", "ties_count_half")
    assert "✗ tied scores must count one half — wrong answer  [hint: ties]" in output
    assert "assert close(" not in output and "Falsifying example" not in output
    _, revealed = grading.grade(AUC, str(mutant), "-k", "ties_count_half", "--reveal")
    assert "assert close(" in revealed
    assert "Failing test case" in revealed or "Falsifying example" in revealed


def test_pytest_on_the_kata_folder_exits_non_zero_for_the_stub():
    proc = subprocess.run(grading.pytest_command(AUC, "solution", "-q", "-k", "tie"),
                          cwd=catalog.ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert "kata scorecard" in proc.stdout


@pytest.mark.parametrize("impl", ["solution", "stub"])
def test_impl_option_picks_the_file(impl):
    assert AUC.impl_path(impl).name == "auc.py"
    assert AUC.impl_path(impl).parent.name == "auc_roc"
