"""What every `kata` command shares: the `--lang` option, the store guard, the default-subcommand
group, the earned check, and click's own words (`--help`, usage errors, `[y/N]`) in the learner's
language.

The commands keep their English help where they are defined; the Chinese comes from the
catalogue (harness/words.toml), keyed by that English. Click wraps help by characters, not
terminal cells, which would print Chinese lines twice too wide, and breaks them only at spaces;
the Chinese pages are laid out here instead, in click's shape (usage, text, arguments, options,
commands), wrapped by cells and between any two Chinese characters (harness.cjk.wrap). Click's
usage errors are said again from the catalogue, rebuilt from what each error holds.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.cells import cell_len
from rich.console import Console
from typer.core import TyperCommand, TyperGroup

from harness import catalog
from harness.catalog import LANGS, Kata
from harness.cjk import wrap
from harness.lang import lang as default_lang
from harness.store import Store, StoreError
from harness.words import catalogue, key, say, translations

try:  # newer Typers vendor click (a plain install has none of its own); older ones use it
    from typer._click import exceptions as clicks
except ImportError:
    from click import exceptions as clicks

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
    if not yes and not confirm(question):
        raise typer.Exit(1)
    store.add_reveal(kata.name)


def kata(name: str) -> Kata:
    """The kata a command names, or click's bad-parameter error listing the known ones."""
    try:
        return catalog.get(name)
    except KeyError:
        known = ", ".join(k.name for k in catalog.all_katas())
        raise typer.BadParameter(say("cli.no_kata", name=name, known=known)) from None


def confirm(question: str, default: bool = False, lang: str | None = None) -> bool:
    """A yes-or-no question, its `[y/N]` and its complaint at any other answer in the learner's
    language (click's confirm says them in English)."""
    while True:
        answer = typer.prompt(f"{question} {say('help.yes' if default else 'help.no', lang)}",
                              default="", show_default=False, prompt_suffix="").strip().lower()
        if answer in ("y", "yes", "n", "no", ""):
            return answer.startswith("y") or (default and not answer)
        typer.echo(say("help.yes_or_no", lang))


def tr(text: str | None) -> str:
    """The Chinese of one help text; a missing one fails a test, and stays English meanwhile."""
    return translations().get(key(text or ""), text or "")


def _extra(text: str) -> str:
    """Click's `[default: x]` and `[required]` after an option's help, from the catalogue."""
    found = re.search(r"\[default: (.*)\]", text)
    parts = [say("help.default", "zh-TW", value=found.group(1))] if found else []
    if "[required]" in text:
        parts.append(say("help.required", "zh-TW"))
    return ("  " + " ".join(parts)) if parts else ""


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


def usage(ctx: typer.Context, width: int) -> list[str]:
    """Click's usage line in the learner's language."""
    if default_lang() == "en":
        return [ctx.get_usage()]
    labels = {say(f"help.{k}", "en"): say(f"help.{k}") for k in ("options_piece", "command_piece")}
    pieces = " ".join(labels.get(p, p) for p in ctx.command.collect_usage_pieces(ctx))
    return wrap(f"{say('help.usage')}{ctx.command_path} {pieces}", width)


def render(command, ctx: typer.Context) -> str:
    """The command's help page in Chinese, in click's layout."""
    width = min(shutil.get_terminal_size().columns, MAX_WIDTH) - 2  # click's margin
    lines = [*usage(ctx, width), ""]
    for paragraph in tr(command.help).split("\n\n"):
        lines += [*("  " + line for line in wrap(paragraph, width - 2)), ""]
    params = command.get_params(ctx)
    for title, arguments in (("help.arguments", True), ("help.options", False)):
        rows = [_param(p, ctx) for p in params if (p.param_type_name == "argument") == arguments]
        lines += _rows(say(title, "zh-TW"), [r for r in rows if r], width)
    if isinstance(command, TyperGroup):
        lines += _rows(say("help.commands", "zh-TW"),
                       [(name, _summary(command.get_command(ctx, name)))
                        for name in command.list_commands(ctx)], width)
    return "\n".join(lines).rstrip("\n")


def _message(error: clicks.UsageError) -> str:
    """What click says of a usage error, rebuilt from the catalogue and what the error holds;
    click's own message where it holds no more than that (a plain `ctx.fail`)."""
    if isinstance(error, clicks.NoSuchOption):
        possible = say("help.possible", options=", ".join(sorted(error.possibilities))) \
            if error.possibilities else ""
        return say("help.no_such_option", name=error.option_name) + possible
    if isinstance(error, clicks.MissingParameter):  # no `kata` parameter has choices to list
        if error.param is None or error.message:
            return error.format_message()
        return say(f"help.missing_{error.param.param_type_name}", name=error.param.get_error_hint())
    if isinstance(error, clicks.BadParameter):
        hint = error.param_hint or (error.param and error.param.get_error_hint())
        message = _conversion(error) or error.message
        if hint is None:
            return say("help.invalid", message=message)
        hint = hint if isinstance(hint, str) else " / ".join(repr(h) for h in hint)
        return say("help.invalid_for", name=hint, message=message)
    if isinstance(error, clicks.BadOptionUsage) and error.message.endswith("an argument."):
        return say("help.needs_value", name=error.option_name)
    return error.format_message()


def _conversion(error: clicks.BadParameter) -> str | None:
    """Typer converts values with pydantic, whose English says why; the catalogue says what was
    wanted. None for our own errors, already in the learner's words."""
    errors = getattr(error.__cause__, "errors", None)
    if errors is None:
        return None
    first = errors()[0]
    found = f"conversion.{first.get('type')}"
    return say(found if found in catalogue() else "conversion.other", got=first.get("input"))


class Mistake(clicks.UsageError):
    """A usage error of click's in the learner's words: the usage line, where to find help, the
    error."""

    def __init__(self, error: clicks.UsageError) -> None:
        super().__init__(_message(error), error.ctx)

    def show(self, file=None) -> None:
        lines = [say("help.error", message=self.message)]
        if self.ctx is not None:
            helps = say("help.try", command=self.ctx.command_path,
                        option=self.ctx.help_option_names[0])
            lines = [*usage(self.ctx, MAX_WIDTH), helps, "", *lines]
        typer.echo("\n".join(lines), err=True)


@contextmanager
def _in_words() -> Iterator[None]:
    try:
        yield
    except (Mistake, clicks.NoArgsIsHelpError):
        raise
    except clicks.UsageError as error:
        raise Mistake(error) from error
    except typer.Abort as abort:  # a question's answer never came: Ctrl-C, or no more input
        typer.echo(say("help.aborted"), err=True)
        raise typer.Exit(1) from abort


class Localized:
    """Mixed into a command class: `--help` and leftover arguments in the learner's language."""

    def get_help(self, ctx: typer.Context) -> str:
        return render(self, ctx) if default_lang() == "zh-TW" else super().get_help(ctx)

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:
        """Click's complaint at arguments left over, from the catalogue."""
        strict, ctx.allow_extra_args = not ctx.allow_extra_args, True
        rest = super().parse_args(ctx, args)
        ctx.allow_extra_args = not strict
        if rest and strict and not ctx.resilient_parsing:
            ctx.fail(say("help.extra_arguments", args=" ".join(rest)))
        return rest


class Command(Localized, TyperCommand):
    pass


class Group(Localized, TyperGroup):
    """Click's usage errors, raised while the group or a command under it parses its arguments or
    runs, come out in the learner's words."""

    def make_context(self, *args, **kwargs) -> typer.Context:
        with _in_words():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: typer.Context):
        with _in_words():
            return super().invoke(ctx)

    def resolve_command(self, ctx: typer.Context, args: list[str]):
        try:
            return super().resolve_command(ctx, args)
        except clicks.UsageError as error:
            if type(error) is not clicks.UsageError:  # an option where a command should be
                raise
            names = [args[0], *difflib.get_close_matches(args[0], list(self.commands))]
            names = [say("help.quoted", name=name) for name in names]
            text = say("help.no_such_command", name=names[0])
            if names[1:]:
                text += say("help.did_you_mean", names=", ".join(names[1:]))
            raise clicks.UsageError(text, ctx) from error


class DefaultGroup(Group):
    """`kata GROUP [ARGS]` means `kata GROUP DEFAULT [ARGS]` when ARGS does not start with one of
    its subcommands: a group cannot take an optional positional argument next to its
    subcommands (click would read `submit` as a kata name)."""
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
    """A Typer app whose commands speak the learner's language in `--help` and usage errors. Its
    help is plain, as click prints it: rich's panels give every flag a type column ("--help
    <bool>")."""

    def __init__(self, *, cls: type[Group] = Group, **kwargs) -> None:
        super().__init__(cls=cls, add_completion=False, rich_markup_mode=None, **kwargs)

    def command(self, *args, cls: type[Command] = Command, **kwargs):
        return super().command(*args, cls=cls, **kwargs)
