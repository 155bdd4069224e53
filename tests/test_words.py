"""One catalogue of words (harness/words.toml): every key in both languages, and under
KATA_LANG=zh-TW every screen in Chinese, but for code, identifiers and the hidden tests' titles."""

from __future__ import annotations

import re
import string
import subprocess
import sys

import pytest
from mockkit import LEVELS, kata, make_run, start
from typer.testing import CliRunner

from harness import catalog, grading, mutants, words
from harness.cli import app
from harness.results import read_json
from harness.session import rubric
from harness.store import Attempt, Store

AUC = catalog.get("auc_roc")
LANGS = ("en", "zh-TW")
# A word of letters only, not part of an identifier, a path, an option or a hyphenated id.
WORD = re.compile(r"(?<![\w./\-:=@])[A-Za-z]{2,}(?![\w./\-=(])")


def fields(text: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(text) if f}


def test_every_key_has_both_languages_with_the_same_fields():
    for key, texts in words.catalogue().items():
        assert set(texts) == set(LANGS), key
        assert all(isinstance(t, str) and t.strip() for t in texts.values()), key
        assert fields(texts["en"]) == fields(texts["zh-TW"]), key
    for text in words.translations().values():
        assert text.strip()


def zh_texts(*metas: dict) -> str:
    """Every zh-TW text of some metadata, however deep."""
    def walk(value, zh=False):
        if isinstance(value, dict):
            for k, v in value.items():
                yield from walk(v, zh or k == "zh-TW")
        elif isinstance(value, list):
            for v in value:
                yield from walk(v, zh)
        elif isinstance(value, str) and zh:
            yield value
    return "\n".join(t for meta in metas for t in walk(meta))


def allowed() -> set[str]:
    """Words a Chinese screen may hold: those our Chinese texts use themselves (kata, pytest,
    technical terms of the katas), the hidden tests' titles and hint categories, mutant names."""
    texts = [t["zh-TW"] for t in words.catalogue().values()] + [*words.translations().values()]
    texts.append(zh_texts(*(k.meta for k in catalog.all_katas())))
    texts += [zh_texts({"zh-TW": [m.mistake["zh-TW"] for m in mutants.load(k)]})
              for k in catalog.all_katas()]
    texts += [" ".join(d.name["zh-TW"] + " " + " ".join(d.anchors["zh-TW"])
                       for d in rubric.dimensions())]
    titles = [t for tests in LEVELS.values() for t, _ in tests]
    found = {w for text in texts for w in WORD.findall(re.sub(r"\{\w+\}", "", text))}
    found |= {w for t in titles for w in WORD.findall(t)} | set(AUC.spec.hints)
    return found | {"stub", "solution"}  # --impl's values


def english(output: str, titles: list[str] = ()) -> list[str]:
    """The English words of a screen outside code (`...`) and the hidden tests' `titles`."""
    prose = re.sub(r"`[^`\n]*`", " ", output)
    for title in titles:
        prose = prose.replace(title, " ")
    return sorted({w for w in WORD.findall(prose)} - allowed())


@pytest.fixture
def zh(monkeypatch):
    monkeypatch.setenv("KATA_LANG", "zh-TW")
    monkeypatch.setenv("KATAS_MAINTAINER", "1")  # the script without its reveal question


def test_kata_bench_prints_its_table_in_chinese_and_saves_it_in_english(zh, tmp_path):
    pytest.importorskip("sklearn", reason="the auc_roc benchmark compares with scikit-learn")
    result = kata("bench", "auc_roc", "--quick", "--out", str(tmp_path))
    assert result.exit_code == 0 and english(result.output) == [], result.output
    assert "| samples |" in (tmp_path / "auc_roc.md").read_text()  # the docs' source


def test_a_mock_in_chinese_grades_in_chinese_whatever_the_shell_says(work, clock, grader,
                                                                     monkeypatch):
    monkeypatch.setenv("KATA_LANG", "en")
    start(work, "--lang", "zh-TW")
    grader.runs.append(make_run(set()))
    kata("mock", "submit")
    assert grader.langs == ["zh-TW"]  # its scorecard, verdicts and "recorded in" the session's


def test_a_grading_asked_for_chinese_speaks_chinese_whatever_the_shell_says(tmp_path,
                                                                           monkeypatch):
    monkeypatch.setenv("KATA_LANG", "en")
    mine = tmp_path / "auc.py"
    mine.write_text(AUC.pristine_stub(), encoding="utf-8")
    run, output = grading.grade(AUC, str(mine), via="mock", lang="zh-TW")
    assert "kata 成績單" in output and run.recorded.startswith("已記錄在") and run.stored


def test_the_scorecard_list_and_progress_are_chinese(zh, tmp_path):
    stub = tmp_path / "auc.py"
    stub.write_text(AUC.pristine_stub(), encoding="utf-8")
    report = tmp_path / "results.json"
    run = subprocess.run([sys.executable, "-m", "pytest", str(AUC.folder), f"--impl={stub}", "-q",
                          f"--kata-json={report}"],
                         cwd=catalog.ROOT, capture_output=True, text=True, timeout=600)
    titles = sorted({r.title for r in read_json(report)[0].results}, key=len, reverse=True)
    card = run.stdout[run.stdout.index("kata 成績單") - 30:]
    assert english(card, titles) == [], card
    graded = kata("grade", "auc_roc", "--impl", str(stub))
    assert graded.exit_code == 1 and english(graded.output, titles) == [], graded.output
    Store().add_attempt(Attempt("auc_roc", "stub", 1.0, 1, 12, 73, {}))
    for screen in (["list"], ["progress"]):
        result = kata(*screen)
        assert result.exit_code == 0 and english(result.output) == [], result.output


def test_every_mock_and_interviewer_screen_is_chinese(zh, work, clock, grader):
    outputs = [start(work).output]
    for command in (["status"], ["questions"], ["ask", "要怎麼處理同分"], ["ask", "天氣好嗎"],
                    ["hint"], ["spec"]):
        outputs.append(kata("mock", *command).output)
    runs = [make_run(set()), make_run({1}), make_run({1, 2, 3})]
    for r in (r for run in runs for r in run.results if r.verdict):  # as a zh-TW grader says it
        r.verdict = words.say("grade.wrong", "zh-TW")
    grader.runs += runs
    outputs += [kata("mock", "submit", "--hint").output, kata("mock", "hint").output]
    clock.advance(60)
    outputs += [kata("mock", "submit").output, kata("mock", "submit").output,
                kata("mock", "scorecard").output]
    start(work, "--pair")
    for command in (["hint", "ties"], ["answered", "1"], ["script", "auc_roc"],
                    ["score", "--dimension", "communication=3", "--evidence", "清楚",
                     "--covered", "1.1", "--notes", "很好"]):
        outputs.append(kata("interviewer", *command).output)
    outputs.append(kata("mock", "end").output)
    outputs += [kata("interviewer", "report").output, kata("progress").output]
    for output in outputs:
        assert english(output) == [], output


@pytest.mark.parametrize("args", [["show", "--bogus"], ["show"], ["mutants"], ["shwo"],
                                  ["show", "auc_roc", "--level"], ["show", "auc_roc", "extra"],
                                  ["mock", "--bogus"], ["interviewer", "script", "--nope"],
                                  ["show", "auc_roc", "--level", "1.5"],
                                  ["mock", "start", "auc_roc", "--minutes", "三十"]])
def test_click_says_its_usage_errors_in_chinese(zh, args):
    result = CliRunner().invoke(app, args, prog_name="kata")
    assert result.exit_code == 2 and "錯誤：" in result.output, result.output
    syntax = re.sub(r"^用法：.*$", "", result.output, flags=re.M)  # the command's, as typed
    assert english(syntax) == [], result.output


def test_a_confirmation_asks_in_chinese(zh):
    result = kata("solution", "auc_roc", input="好\nn\n")
    assert result.exit_code == 1 and "[y 是／N 否，預設否]" in result.output, result.output
    assert english(result.output) == [], result.output
