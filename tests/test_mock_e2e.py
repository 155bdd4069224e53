"""One whole mock interview on auc_roc with the real grader: a wrong file, a file that passes
Level 1 only, then the reference. Four real gradings, about a minute each on a loaded machine."""

from __future__ import annotations

from typer.testing import CliRunner

from harness import catalog
from harness.cli import app
from harness.session.log import Reason, Sessions
from harness.store import Store

runner = CliRunner()
AUC = catalog.get("auc_roc")

# Level 1 by mean ranks (Mann-Whitney), a different method from the reference; no curve yet.
LEVEL_1 = '''
import numpy as np


def roc_curve(y_true, y_score, sample_weight=None):
    raise NotImplementedError


def roc_auc_score(y_true, y_score, sample_weight=None):
    if sample_weight is not None:
        raise NotImplementedError
    positive = np.asarray(y_true) == 1
    scores = np.asarray(y_score, dtype=float)
    _, group, counts = np.unique(scores, return_inverse=True, return_counts=True)
    ranks = (np.cumsum(counts) - (counts - 1) / 2)[group]
    n_pos = positive.sum()
    n_neg = len(ranks) - n_pos
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))
'''
# The same file with ties broken by position instead of shared: a classic Level 1 mistake.
WRONG = LEVEL_1.replace("(np.cumsum(counts) - (counts - 1) / 2)[group]",
                        "np.argsort(np.argsort(scores, kind='stable')) + 1.0")


def kata(*args):
    return runner.invoke(app, list(args))


def test_a_whole_mock_interview_on_auc_roc(tmp_path, kata_home):
    assert WRONG != LEVEL_1
    work = tmp_path / "auc.py"
    work.write_text(WRONG, encoding="utf-8")
    levels = [spec["title"]["en"] for spec in AUC.meta["levels"]]

    started = kata("mock", "auc_roc", "--file", str(work), "--minutes", "60")
    assert started.exit_code == 0, started.output
    assert levels[0] in started.output and levels[1] not in started.output
    assert "counts one half" in kata("mock", "ask", "How do tied scores count?").output

    wrong = kata("mock", "submit", "--hint")
    assert wrong.exit_code == 1, wrong.output
    assert "tied scores must count one half" in wrong.output
    [(category, step)] = Sessions(Store()).current().hints  # the first failing test's category
    assert step == 0 and AUC.meta["hints"][category]["en"][0] in wrong.output
    assert levels[1] not in wrong.output

    work.write_text(LEVEL_1, encoding="utf-8")
    level1 = kata("mock", "submit")
    assert level1.exit_code == 0, level1.output
    assert "Level 1 passed" in level1.output and "Level 2 of 3" in level1.output
    assert levels[1] in level1.output and levels[2] not in level1.output
    assert AUC.meta["hints"]["curve"]["en"][0] in kata("mock", "hint").output

    work.write_text(AUC.solution_path.read_text(encoding="utf-8"), encoding="utf-8")
    level2 = kata("mock", "submit")
    assert level2.exit_code == 0, level2.output
    assert "Level 2 passed" in level2.output and levels[2] in level2.output

    level3 = kata("mock", "submit")
    assert level3.exit_code == 0, level3.output
    for text in ("Level 3 passed", "Every level passes", "Levels passed: 3 of 3",
                 "Hints used: 2", "Questions: 1 asked in your own words, 0 picked from a list or "
                 f"by number, of {len(AUC.meta['questions'])} at the levels you reached",
                 "Follow-up discussion",
                 AUC.meta["followups"][-1]["question"]["en"], AUC.meta["selfcheck"]["en"][-1]):
        assert text in level3.output, text
    zh = kata("mock", "scorecard", "--lang", "zh-TW")
    asked = (f"問題：用自己的話問到 1 題，從清單或用題號挑選 0 題，你到達的關卡共 "
             f"{len(AUC.meta['questions'])} 題")
    for text in ("通過關卡：3 / 3", "使用的提示：2", asked, "追問",
                 AUC.meta["followups"][-1]["question"]["zh-TW"],
                 AUC.meta["selfcheck"]["zh-TW"][-1]):
        assert text in zh.output, text

    session = Sessions(Store()).last_finished()
    assert session.reason == Reason.PASSED and session.hints == [(category, 0), ("curve", 0)]
    times = session.level_times()
    assert [level for level, _, _ in times] == [1, 2, 3]
    assert all(took > 0 for _, _, took in times) and times[-1][1] == session.ended - session.started
    assert work.read_text(encoding="utf-8") == AUC.solution_path.read_text(encoding="utf-8")

    progress = kata("progress")
    assert progress.exit_code == 0, progress.output
    row = next(line for line in progress.output.splitlines() if line.startswith("auc_roc"))
    assert row.split()[:5] == ["auc_roc", "1", "(1", "mock)", "3"]
    chart = kata_home / "progress.png"
    assert str(chart) in progress.output and chart.stat().st_size > 1000
