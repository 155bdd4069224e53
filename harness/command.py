"""What every `kata` command shares: the `--lang` option, the store guard, the default-subcommand
group, the earned check, and `--help` in the learner's language.

The commands keep their English help where they are defined; the Chinese comes from the
catalogue (harness/words.toml), keyed by that English. Click wraps help by characters, not
terminal cells, which would print Chinese lines twice too wide, and breaks them only at spaces;
the Chinese pages are laid out here instead, in click's shape (usage, text, arguments, options,
commands), wrapped by cells and between any two Chinese characters (harness.cjk.wrap).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.cells import cell_len
from rich.console import Console
from typer.core import TyperCommand, TyperGroup

from harness.catalog import LANGS, Kata
from harness.cjk import wrap
from harness.lang import lang as default_lang
from harness.store import Store, StoreError
from harness.words import key, say, translations

MAX_WIDTH = 80  # click's default max_content_width
LangOpt = typer.Option(None, "--lang", show_default=False,
                       help="en or zh-TW (default: KATA_LANG, else en)")
SessionLangOpt = typer.Option(None, "--lang", help="en or zh-TW (default: the session's language)")


def checked_lang(lang: str | None) -> str | None:
    """A `--lang` as given (None: left out), refused unless it is one we speak."""
    if lang is not None and lang not in LANGS:
        raise typer.BadParameter(say("lang.bad", langs=", ".join(LANGS), got=lang))
    return lang


def language(lang: str | None) -> str:
    """A `--lang`, or the learner's language where it is left out."""
    return checked_lang(lang) or default_lang()


def say_to(console: Console, text: str, style: str | None = None) -> None:
    """Plain text as it is: titles and hints hold brackets that are not rich markup."""
    console.print(text, style=style, markup=False, highlight=False, soft_wrap=True)


def open_store(console: Console) -> Store:
    """The progress store, saying so when a broken one was moved aside."""
    store = Store()
    if store.notice:
        say_to(console, store.notice, "yellow")
    return store


@contextmanager
def guard(console: Console, interrupted: str | None = None) -> Iterator[None]:
    """A store busy with another command is a clear message (exit 2), never a traceback; so is
    Ctrl-C where `interrupted` names what to say."""
    try:
        yield
    except StoreError as exc:
        say_to(console, say("store.busy", error=exc), "red")
        raise typer.Exit(2) from exc
    except KeyboardInterrupt as exc:
        if interrupted is None:
            raise
        say_to(console, interrupted, "yellow")
        raise typer.Exit(130) from exc


def maintainer() -> bool:
    return os.environ.get("KATAS_MAINTAINER") == "1"


def earned(store: Store, kata: Kata) -> bool:
    """Whether the learner may see the kata's answers freely: passed in full, or revealed."""
    best = store.best(kata.name)
    return (best is not None and best.best_level == kata.num_levels) or store.revealed(kata.name)


def reveal(store: Store, kata: Kata, question: str, yes: bool) -> None:
    """Ask before showing answers the learner has not earned, and record the look."""
    if earned(store, kata) or maintainer():
        return
    if not yes and not typer.confirm(question):
        raise typer.Exit(1)
    store.add_reveal(kata.name)


def tr(text: str | None) -> str:
    """The Chinese of one help text; a missing one fails a test, and stays English meanwhile."""
    if key(text or "") == say("help.help_option", "en"):
        return say("help.help_option", "zh-TW")
    return translations().get(key(text or ""), text or "")


def _piece(piece: str) -> str:
    """One of click's usage pieces in Chinese: its own labels from the catalogue."""
    labels = {say(f"help.{k}", "en"): say(f"help.{k}", "zh-TW")
              for k in ("options_piece", "command_piece")}
    return labels.get(piece, piece)


def _extra(text: str) -> str:
    """Click's `[default: x]` and `[required]` after an option's help, from the catalogue."""
    found = re.search(r"\[default: (.*)\]", text)
    parts = [say("help.default", "zh-TW", value=found.group(1))] if found else []
    if "[required]" in text:
        parts.append(say("help.required", "zh-TW"))
    return ("  " + " ".join(parts)) if parts else ""


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
    return names, tr(own) + _extra(text[len(own):] if text.startswith(own) else text)


def _summary(command) -> str:
    """The first sentence of the command's Chinese help, as click's listing takes the first
    sentence of the English."""
    first = tr(command.help).split("\n\n")[0]
    return first.split("。")[0] + "。" if "。" in first else first


def render(command, ctx: typer.Context) -> str:
    """The command's help page in Chinese, in click's layout."""
    width = min(shutil.get_terminal_size().columns, MAX_WIDTH) - 2  # click's margin
    usage = " ".join(_piece(p) for p in command.collect_usage_pieces(ctx))
    lines = [*wrap(f"{say('help.usage', 'zh-TW')}{ctx.command_path} {usage}", width), ""]
    for paragraph in tr(command.help).split("\n\n"):
        lines += [*_paragraph(paragraph, width), ""]
    records = [(p, _param(p, ctx)) for p in command.get_params(ctx)]
    lines += _rows(say("help.arguments", "zh-TW"),
                   [r for p, r in records if r and p.param_type_name == "argument"], width)
    lines += _rows(say("help.options", "zh-TW"),
                   [r for p, r in records if r and p.param_type_name != "argument"], width)
    if isinstance(command, TyperGroup):
        lines += _rows(say("help.commands", "zh-TW"),
                       [(name, _summary(command.get_command(ctx, name)))
                        for name in command.list_commands(ctx)], width)
    return "\n".join(lines).rstrip("\n")


class Localized:
    """Mixed into a command class: `--help` in the learner's language."""

    def get_help(self, ctx: typer.Context) -> str:
        return render(self, ctx) if default_lang() == "zh-TW" else super().get_help(ctx)


class Command(Localized, TyperCommand):
    pass


class Group(Localized, TyperGroup):
    pass


class DefaultGroup(Group):
    """`kata GROUP [ARGS]` means `kata GROUP DEFAULT [ARGS]` when ARGS does not start with one of
    its subcommands: a group cannot take an optional positional argument next to its
    subcommands (click would read `submit` as a kata name). Typer ships its own click, so
    nothing here imports `click` (a plain install does not have it)."""
    default = ""
    usage = ""  # DEFAULT's arguments
    when_empty = False  # no ARGS at all means DEFAULT too (else: the group's help)

    def collect_usage_pieces(self, ctx: typer.Context) -> list[str]:
        return [self.usage, "|", say("help.command_piece", "en")]

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:
        if (args or self.when_empty) and (not args or (
                args[0] not in self.commands and args[0] not in ctx.help_option_names)):
            args = [self.default, *args]
        return super().parse_args(ctx, args)


class App(typer.Typer):
    """A Typer app whose commands speak the learner's language in `--help`. Its help is plain, as
    click prints it: rich's panels give every flag a type column ("--help <bool>")."""

    def __init__(self, *, cls: type[Group] = Group, **kwargs) -> None:
        super().__init__(cls=cls, add_completion=False, rich_markup_mode=None, **kwargs)

    def command(self, *args, cls: type[Command] = Command, **kwargs):
        return super().command(*args, cls=cls, **kwargs)
