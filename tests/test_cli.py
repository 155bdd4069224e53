"""The `kata` command, driven as a learner would."""

from __future__ import annotations

import re
import shutil

import pytest
from typer.testing import CliRunner

from harness import catalog
from harness.cli import app

runner = CliRunner()
AUC = catalog.get("auc_roc")


def kata(*args, input=None):
    return runner.invoke(app, list(args), input=input)


def test_list_shows_every_kata():
    result = kata("list")
    assert result.exit_code == 0
    for k in catalog.all_katas():
        assert k.name in result.output


@pytest.mark.parametrize("lang, title, third", [("en", "AUC-ROC by hand", "Level 3"),
                                               ("zh-TW", "手刻 AUC-ROC", "第 3 關")])
def test_show_prints_the_prompt_in_each_language(lang, title, third):
    result = kata("show", "auc_roc", "--lang", lang)
    assert result.exit_code == 0 and title in result.output and third in result.output


def test_unknown_kata_and_language_are_clear_errors():
    assert "no kata named 'nope'" in kata("show", "nope").output
    assert "--lang must be one of" in kata("show", "auc_roc", "--lang", "fr").output


def test_grade_prints_a_scorecard_and_records_the_learners_file(tmp_path):
    mine = tmp_path / "auc.py"
    shutil.copy(catalog.get("auc_roc").solution_path, mine)
    result = kata("grade", "auc_roc", "--impl", str(mine))
    assert result.exit_code == 0, result.output
    assert "Level 3" in result.output and "PASSED" in result.output
    from harness.store import Store
    assert [(a.impl, a.via) for a in Store().attempts("auc_roc")] == [(str(mine), "grade")]
    assert f"recorded in {Store().path} (kata grade)" in result.output.replace("\n", "")


def test_grading_the_reference_is_not_recorded_and_says_so():
    result = kata("grade", "auc_roc", "--impl", "solution")
    assert result.exit_code == 0, result.output
    assert "not recorded: only your own files are, not --impl=solution" in result.output
    from harness.store import Store
    assert Store().attempts("auc_roc") == []


def test_grade_of_a_failing_file_exits_non_zero():
    result = kata("grade", "auc_roc", "--impl", "mutant:ties_count_zero")
    assert result.exit_code == 1 and "tied scores must count one half" in result.output


def test_reset_backs_up_the_learners_file(kata_home, tmp_path, monkeypatch):
    stub = tmp_path / "auc.py"
    stub.write_text("# my work in progress\n")
    monkeypatch.setattr(catalog.Kata, "stub_path", property(lambda self: stub))
    monkeypatch.setattr(catalog.Kata, "pristine_stub", lambda self: "# pristine\n")
    result = kata("reset", "auc_roc")
    assert result.exit_code == 0, result.output
    assert stub.read_text() == "# pristine\n"
    backups = list((kata_home / "backups" / "auc_roc").glob("auc-*.py"))
    assert [b.read_text() for b in backups] == ["# my work in progress\n"]
    assert "already the pristine stub" in kata("reset", "auc_roc").output


def test_solution_asks_first_and_records_the_reveal():
    from harness.store import Store
    refused = kata("solution", "auc_roc", input="n\n")
    assert refused.exit_code != 0 and "def roc_auc_score" not in refused.output
    assert not Store().revealed("auc_roc")
    shown = kata("solution", "auc_roc", input="y\n")
    assert shown.exit_code == 0 and "def roc_auc_score" in shown.output
    assert Store().revealed("auc_roc")


def test_bench_prints_ratios_and_saves_the_table(tmp_path):
    pytest.importorskip("sklearn", reason="the auc_roc benchmark compares with scikit-learn")
    result = kata("bench", "auc_roc", "--quick", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "ratio" in result.output
    assert "| samples |" in (tmp_path / "auc_roc.md").read_text()


def test_a_revealed_solution_shows_in_list_and_progress(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert "solution seen" not in kata("list").output
    assert "solutions you have looked at" not in kata("progress").output
    assert kata("solution", "auc_roc", "--yes").exit_code == 0
    lines = kata("list").output.splitlines()
    start = next(i for i, line in enumerate(lines) if "auc_roc" in line)
    end = next(i for i, line in enumerate(lines) if i > start and "_" in line.split("│")[1])
    assert "solution seen" in "\n".join(lines[start:end]), "\n".join(lines)
    assert "\n".join(lines).count("solution seen") == 1
    progress = kata("progress")
    assert "Reference solutions you have looked at (`kata solution`): auc_roc (" in \
        " ".join(progress.output.split())
    assert all(len(line) <= 80 for line in progress.output.splitlines())
    zh = kata("progress", "--lang", "zh-TW")
    assert "你看過的參考解答" in zh.output and "auc_roc" in zh.output


def test_show_in_chinese_joins_lines_wrapped_inside_a_sentence(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # no wrapping by the terminal, only by the source
    cjk = re.compile(r"[\u4e00-\u9fff]")
    for name in ("auc_roc", "prefill_decode_scheduler"):
        wraps = []  # the two characters either side of each line break inside a Chinese sentence
        for spec in catalog.get(name).meta["levels"]:
            lines = spec["prompt"]["zh-TW"].split("\n")
            wraps += [(a[-1], b.strip()[0]) for a, b in zip(lines, lines[1:], strict=False)
                      if a and b.strip() and cjk.match(a[-1]) and cjk.match(b.strip()[0])]
        assert wraps, name
        shown = kata("show", name, "--lang", "zh-TW").output
        for a, b in wraps:
            assert f"{a} {b}" not in shown and f"{a}\n{b}" not in shown, (name, a, b)


@pytest.mark.parametrize("level", ["5", "-1"])
def test_show_of_a_level_the_kata_does_not_have_is_an_error(level):
    result = kata("show", "auc_roc", "--level", level)
    assert result.exit_code == 2 and "auc_roc has levels 1 to 3" in result.output
    assert "AUC-ROC by hand" not in result.output  # no header for a prompt that is not shown


def test_kata_list_at_80_columns_wraps_titles_and_results_never_cutting_a_word(monkeypatch):
    from harness.store import Attempt, Store

    store = Store()
    for k in catalog.all_katas():  # the widest "your best" there is
        store.add_attempt(Attempt(k.name, "stub", 1.0, 3, 999, 999, {}))
        store.add_reveal(k.name)
    for lang in catalog.LANGS:
        result = kata("list", "--lang", lang)
        assert result.exit_code == 0 and "…" not in result.output, result.output
        titles = "".join(line.split("│")[2].replace(" ", "") for line in
                         result.output.splitlines() if line.startswith("│"))
        for k in catalog.all_katas():
            assert k.title(lang).replace(" ", "") in titles, (lang, k.title(lang))


@pytest.mark.parametrize("lang", catalog.LANGS)
def test_code_in_a_prompt_is_never_wrapped_and_prose_still_is(lang):
    result = kata("show", "paged_kv_cache", "--lang", lang)  # not a terminal: 80 columns
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    levels = catalog.get("paged_kv_cache").meta["levels"]
    prompt = "\n".join(spec["prompt"][lang] for spec in levels)
    code = [line for block in re.findall(r"```\w*\n(.*?)```", prompt, re.S)
            for line in block.splitlines() if line.strip()]
    assert max(map(len, code)) > 80
    for line in code:
        assert line.rstrip() in lines, line
    assert all(len(line) <= 80 for line in lines if line not in code)


def test_kata_show_names_levels_in_the_prompts_language():
    assert "第 1 關 · " in kata("show", "auc_roc", "--lang", "zh-TW").output
    assert "Level 1 · " in kata("show", "auc_roc").output


def test_kata_lang_is_the_default_of_every_lang_option(monkeypatch):
    monkeypatch.setenv("KATA_LANG", "zh-TW")
    assert "手刻 AUC-ROC" in kata("show", "auc_roc").output
    assert "AUC-ROC by hand" in kata("show", "auc_roc", "--lang", "en").output
    monkeypatch.setenv("KATA_LANG", "en")
    assert "AUC-ROC by hand" in kata("show", "auc_roc").output
