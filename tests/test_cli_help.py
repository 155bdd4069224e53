"""`kata --help` on every page, in both languages, at 80 columns."""

from __future__ import annotations

import re

import pytest
import typer
from rich.cells import cell_len
from typer.testing import CliRunner

from harness import cjk, words
from harness import lang as language
from harness.cli import app

HAN = re.compile(r"[\u3400-\u9fff]")


def pages() -> list[list[str]]:
    group = typer.main.get_command(app)
    return [[]] + [[name] for name in group.commands] + \
        [[sub, name] for sub in ("mock", "interviewer") for name in group.commands[sub].commands]


def texts() -> set[str]:
    """Every help text of every command, argument and option, as the catalogue keys them."""
    def walk(command):
        yield command.help
        for param in command.params:
            yield getattr(param, "help", None)
        for sub in getattr(command, "commands", {}).values():
            yield from walk(sub)
    return {words.key(t) for t in walk(typer.main.get_command(app)) if t}


@pytest.fixture
def help_page(monkeypatch):
    def show(lang: str, page: list[str]) -> str:
        monkeypatch.setenv("KATA_LANG", lang)
        monkeypatch.setenv("COLUMNS", "80")
        result = CliRunner().invoke(app, [*page, "--help"], prog_name="kata")
        assert result.exit_code == 0, (page, result.output)
        return result.output
    return show


@pytest.mark.parametrize("page", pages(), ids=" ".join)
def test_every_help_page_fits_80_columns_and_says_each_default_once(help_page, page):
    output = help_page("en", page)
    listing = output.partition("Commands:")[2]
    for line in output.splitlines():
        assert len(line) <= 80 and "<bool>" not in line, (page, line)
        assert line.count("default") <= 1, (page, line)
    for line in listing.splitlines():  # a command's summary is whole, not cut to "..."
        assert not line.endswith("..."), (page, line)


@pytest.mark.parametrize("page", pages(), ids=" ".join)
def test_every_help_page_reads_in_chinese_within_80_columns(help_page, page):
    output = help_page("zh-TW", page)
    assert output.startswith("用法：kata"), output
    for line in output.splitlines():
        assert cell_len(line) <= 80, (page, line)  # a Chinese character takes two columns
        assert line.count("預設") <= 1 and "default" not in line, (page, line)
    english = {t for t in words.translations() if " " in t}  # whole English sentences
    assert not [t for t in english if t in words.key(output)], page
    assert "選項：" in output and "Show this message" not in output


def test_the_catalogue_translates_every_help_text_and_nothing_else():
    catalogue = set(words.translations())
    assert texts() - catalogue == set(), "add these to harness/words.toml"
    assert catalogue - texts() - {words.key("Show this message and exit.")} == set(), \
        "these are no command's help any more"


@pytest.mark.parametrize("env, lang", [
    ({"KATA_LANG": "zh-TW", "LANG": "en_US.UTF-8"}, "zh-TW"),
    ({"KATA_LANG": "en", "LANG": "zh_TW.UTF-8"}, "en"),
    ({"LANG": "zh_TW.UTF-8"}, "zh-TW"),
    ({"LC_ALL": "C", "LANG": "zh_TW.UTF-8"}, "en"),
    ({"LANG": "zh_CN.UTF-8"}, "en"),
    ({}, "en"),
])
def test_the_help_language_is_kata_lang_then_the_locale(monkeypatch, env, lang):
    for var in ("KATA_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    assert language.lang() == lang


@pytest.mark.parametrize("text, width, lines", [
    ("一二三四五六", 6, ["一二三", "四五六"]),
    ("一二三。四", 6, ["一二", "三。四"]),  # a closing mark never starts a line
    ("執行 `kata list` 看看", 10, ["執行 `kata", "list` 看看"]),  # Latin breaks at spaces
    ("abc", 80, ["abc"]),
])
def test_chinese_help_wraps_by_cells_between_characters(text, width, lines):
    assert cjk.wrap(text, width) == lines
