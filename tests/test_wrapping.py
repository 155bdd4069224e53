"""Chinese wraps like Chinese: `kata show` and `kata mutants` at 80 columns keep every word whole
and cut no line."""

from __future__ import annotations

import io
import re
from collections import Counter

import pytest
from rich.cells import cell_len
from rich.console import Console
from typer.testing import CliRunner

from harness import catalog, cjk
from harness.cli import app
from harness.screen import Screen

WORD = re.compile(r"[A-Za-z0-9_]+")


def show(monkeypatch, name: str, columns: int, command: str = "show") -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    result = CliRunner().invoke(app, [command, name, "--lang", "zh-TW"])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("name", [k.name for k in catalog.all_katas()])
def test_kata_show_in_chinese_keeps_every_word_whole_at_80_columns(monkeypatch, name):
    wide, narrow = show(monkeypatch, name, 400), show(monkeypatch, name, 80)
    assert Counter(WORD.findall(narrow)) == Counter(WORD.findall(wide))
    prompts = "\n".join(level["prompt"]["zh-TW"] for level in catalog.get(name).meta["levels"])
    code = {line.strip() for block in re.findall(r"```\w*\n(.*?)```", prompts, re.S)
            for line in block.splitlines()}
    prose = re.sub(r"```\w*\n.*?```", "", prompts, flags=re.S)
    long_code = [" ".join(span.split()) for span in re.findall(r"`([^`]+)`", prose)
                 if cell_len(span) > 60]
    for line in narrow.splitlines():
        if line.strip() not in code and cell_len(line) > 80:  # only code wider than a line runs on
            assert any(span in line for span in long_code), line
        assert not line.lstrip() or line.lstrip()[0] not in "，。、；：！？）」』", line


@pytest.mark.parametrize("name", [k.name for k in catalog.all_katas()])
def test_kata_mutants_in_chinese_keeps_every_word_whole_at_80_columns(monkeypatch, name):
    wide, narrow = (show(monkeypatch, name, columns, "mutants") for columns in (400, 80))
    assert Counter(WORD.findall(narrow)) == Counter(WORD.findall(wide))
    assert max(cell_len(line) for line in narrow.splitlines()) <= 80


def test_a_title_too_long_for_its_rule_goes_whole_below_it():
    out = io.StringIO()
    screen = Screen(Console(file=out, width=40), "en")
    screen.rule("Level 1 · Routing")
    long = "Level 2 of 3 · Overload: priorities, a bounded queue, shedding, a retry budget"
    screen.rule(long)
    short, *rest = out.getvalue().splitlines()
    assert "Level 1 · Routing" in short and short.startswith("─")
    assert Counter(WORD.findall("\n".join(rest))) == Counter(WORD.findall(long))  # never cut
    assert all(cell_len(line) <= 40 for line in rest) and "…" not in "".join(rest)


@pytest.mark.parametrize("text, width, lines", [
    ("請用 Batch 物件", 8, ["請用", "Batch 物", "件"]),  # never inside a word
    ("e2e_p50、e2e_p99 兩個", 9, ["e2e_p50、", "e2e_p99", "兩個"]),
    ("值為 0,table 是", 8, ["值為", "0,table", "是"]),  # an ASCII comma stays with its word
    ("（例如）", 4, ["（例", "如）"]),
])
def test_a_line_breaks_beside_chinese_or_at_spaces_only(text, width, lines):
    assert cjk.wrap(text, width) == lines
