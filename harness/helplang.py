"""The learner's language, and `kata`'s own help in it: English, or Traditional Chinese when
`KATA_LANG` (or the locale: `LC_ALL`, `LC_MESSAGES`, `LANG`) says zh-TW. Every `--lang` left out
defaults to it too.

The translations live in `help.toml`, keyed by the English text, as gettext keys its catalogues,
so the commands keep their English help where they are defined. Click wraps help by characters,
not terminal cells, which would print Chinese lines twice too wide, and breaks them only at
spaces; the Chinese pages are laid out here instead, in click's shape (usage, text, arguments,
options, commands), wrapped by cells and between any two Chinese characters."""

from __future__ import annotations

import os
import re
import shutil
from functools import cache
from pathlib import Path

import typer
from rich.cells import cell_len
from typer.core import TyperCommand, TyperGroup

from harness import catalog, tomlfile

CATALOGUE = Path(__file__).with_name("help.toml")
WORDS = {"[OPTIONS]": "[選項]", "COMMAND [ARGS]...": "指令 [參數]...", "[required]": "[必填]",
         "[default: ": "[預設："}
MAX_WIDTH = 80  # click's default max_content_width


def lang() -> str:
    """zh-TW when KATA_LANG or the locale asks for Traditional Chinese, else en: the default of
    every `--lang`, and the language of `--help`."""
    if os.environ.get("KATA_LANG") in catalog.LANGS:
        return os.environ["KATA_LANG"]
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if value := os.environ.get(var):
            return "zh-TW" if re.match(r"zh[_-](TW|HK|Hant)", value) else "en"
    return "en"


def key(text: str) -> str:
    """A text as the catalogue keys it: its words, whatever the wrapping."""
    return " ".join(text.split())


@cache  # read once: every help text of a page looks it up
def translations() -> dict[str, str]:
    return {key(t["en"]): t["zh-TW"].strip() for t in tomlfile.read(CATALOGUE)["text"]}


def tr(text: str | None) -> str:
    """The Chinese of one help text; a missing one fails a test, and stays English meanwhile."""
    return translations().get(key(text or ""), text or "")


def _replace(text: str) -> str:
    for en, zh in WORDS.items():
        text = text.replace(en, zh)
    return text


# A Chinese character or full-width mark may end a line anywhere; a run of other text only at a
# space. Closing marks never start a line (kinsoku).
WIDE = "\u3000-\u303f\u3400-\u9fff\uff00-\uffef"  # CJK marks, ideographs, full-width forms
TOKEN = re.compile(f"[{WIDE}]|[^\\s{WIDE}]+|\\s+")
CLOSING = set("，。、；：！？）」』")


def wrap(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` terminal cells (a Chinese character takes two)."""
    lines, line = [], []
    for token in TOKEN.findall(" ".join(text.split())):
        if cell_len("".join(line) + token) > width and "".join(line).strip():
            carry = [line.pop()] if token in CLOSING and line else []
            lines.append("".join(line).rstrip())
            line = carry
        if line or not token.isspace():
            line.append(token)
    return [*lines, "".join(line).rstrip()]


def _paragraph(text: str, width: int, indent: int = 2) -> list[str]:
    return [" " * indent + line for line in wrap(text, width - indent)]


def _rows(title: str, rows: list[tuple[str, str]], width: int) -> list[str]:
    if not rows:
        return []
    left = max(cell_len(name) for name, _ in rows) + 4  # two to indent, two between columns
    lines = [f"{title}："]
    for name, text in rows:
        wrapped = wrap(text, width - left)
        lines.append(f"  {name}".ljust(left) + wrapped[0])
        lines += [" " * left + more for more in wrapped[1:]]
    return [*lines, ""]


def _param(param, ctx: typer.Context) -> tuple[str, str] | None:
    record = param.get_help_record(ctx)
    if record is None:
        return None
    names, text = record
    own = param.help or ""
    return names, tr(own) + _replace(text[len(own):]) if text.startswith(own) else _replace(text)


def _summary(command) -> str:
    """The first sentence of the command's Chinese help, as click's listing takes the first
    sentence of the English."""
    first = tr(command.help).split("\n\n")[0]
    return first.split("。")[0] + "。" if "。" in first else first


def render(command, ctx: typer.Context) -> str:
    """The command's help page in Chinese, in click's layout."""
    width = min(shutil.get_terminal_size().columns, MAX_WIDTH) - 2  # click's margin
    usage = " ".join(_replace(p) for p in command.collect_usage_pieces(ctx))
    lines = [*wrap(f"用法：{ctx.command_path} {usage}", width), ""]
    for paragraph in tr(command.help).split("\n\n"):
        lines += [*_paragraph(paragraph, width), ""]
    records = [(p, _param(p, ctx)) for p in command.get_params(ctx)]
    lines += _rows("參數", [r for p, r in records if r and p.param_type_name == "argument"], width)
    lines += _rows("選項", [r for p, r in records if r and p.param_type_name != "argument"], width)
    if isinstance(command, TyperGroup):
        lines += _rows("指令", [(name, _summary(command.get_command(ctx, name)))
                               for name in command.list_commands(ctx)], width)
    return "\n".join(lines).rstrip("\n")


class Localized:
    """Mixed into a command class: `--help` in the learner's language."""

    def get_help(self, ctx: typer.Context) -> str:
        return render(self, ctx) if lang() == "zh-TW" else super().get_help(ctx)


class Command(Localized, TyperCommand):
    pass


class Group(Localized, TyperGroup):
    pass


class App(typer.Typer):
    """A Typer app whose commands speak the learner's language in `--help`. Its help is plain, as
    click prints it: rich's panels give every flag a type column ("--help <bool>")."""

    def __init__(self, *, cls: type[Group] = Group, **kwargs) -> None:
        super().__init__(cls=cls, add_completion=False, rich_markup_mode=None, **kwargs)

    def command(self, *args, cls: type[Command] = Command, **kwargs):
        return super().command(*args, cls=cls, **kwargs)
