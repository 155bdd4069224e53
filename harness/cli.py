"""`kata`: list, read, test, grade, reset, reveal and benchmark the katas."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import NoReturn

import typer
from rich.cells import cell_len
from rich.console import Console
from rich.table import Column, Table

from harness import catalog, cjk, command, diagnosis, grading, mutants, render, rules
from harness import progress as history
from harness.bench import Table as BenchTable
from harness.command import LangOpt, language, say_to
from harness.interviewer.commands import interviewer
from harness.loader import ImplError, load_module
from harness.mock.commands import mock
from harness.results import scorecard_lines
from harness.screen import Screen
from harness.session import interview
from harness.store import Store, StoreError, home
from harness.words import say

HELP = """Practice katas for ML and inference coding rounds.

While you code, run `pytest katas/KATA` (or `kata test KATA`): pytest's report, then the kata's
scorecard. `kata grade KATA` prints the scorecard alone. Either way, a full run of your file is
recorded in .kata/progress.db, which `kata list` and `kata progress` read.

KATA_LANG=zh-TW prints this help, and everything else, in Traditional Chinese."""
app = command.App(help=HELP, no_args_is_help=True)
console = Console()
app.add_typer(mock, name="mock")
app.add_typer(interviewer, name="interviewer")

KataArg = typer.Argument(..., metavar="KATA", help="the kata's name, as `kata list` shows it")
ImplOpt = typer.Option("stub", "--impl", help="stub (your file), solution, or a PATH")


def fail(message: str, code: int = 2) -> NoReturn:
    """Say what went wrong, in red, and stop: exit 2 when the command could not run at all."""
    say_to(console, message, "red")
    raise typer.Exit(code)


def _store() -> Store:
    try:
        return command.open_store(console)
    except StoreError as exc:
        fail(str(exc))


@app.command("list")
def list_katas(lang: str = LangOpt) -> None:
    """Every kata, its levels, and your best graded result."""
    lang, store = language(lang), _store()
    revealed = store.reveals()
    rows = []
    for kata in catalog.all_katas():
        try:
            rows.append([kata.name, kata.title(lang), str(kata.num_levels),
                         str(kata.spec.minutes), _best(store, kata, lang, kata.name in revealed)])
        except (KeyError, ValueError) as exc:  # a kata.toml being written, or broken
            rows.append([kata.name, say("cli.incomplete", lang, error=exc), "", "", ""])
    heads = [say(f"cli.col_{c}", lang) for c in ("kata", "title", "levels", "minutes", "best")]
    print_wrapped(heads, rows)


def print_wrapped(heads: list[str], rows: list[list[str]]) -> None:
    """A table whose second column is prose, wrapped here by cells and never inside a word (rich
    would fold "stable" into "st" and "able", or O(n^2) in two), in what the other columns
    leave: each takes its width, 2 of padding and a border."""
    widths = [max(cell_len(line) for cell in column for line in cell.split("\n"))
              for column in zip(heads, *rows, strict=True)]
    room = max(console.width - sum(widths) + widths[1] - 3 * len(heads) - 1, 12)
    table = Table(Column(heads[0], no_wrap=True), *(Column(h, overflow="fold") for h in heads[1:]))
    for row in rows:
        table.add_row(row[0], "\n".join(cjk.wrap(row[1], room)), *row[2:])
    console.print(table)


def _best(store: Store, kata: catalog.Kata, lang: str, revealed: bool) -> str:
    best = store.best(kata.name)
    result = say("cli.best", lang, n=best.best_level, passed=best.passed,
                 total=best.total) if best else "—"
    if best and best.impl != "stub":  # a file of the learner's outside katas/
        result += f"\n{best.impl}"
    if revealed:  # `kata solution` promised that a look is recorded
        result += "\n" + say("cli.solution_seen", lang)
    return result


@app.command()
def show(name: str = KataArg, lang: str = LangOpt,
         level: int = typer.Option(0, show_default=False,
                                   help="show only this level (default: all)")) -> None:
    """The kata's prompt."""
    kata, lang = command.kata(name), language(lang)
    if not 0 <= level <= kata.num_levels:
        raise typer.BadParameter(say("cli.bad_level", kata=kata.name, n=kata.num_levels,
                                     level=level), param_hint="--level")
    _looked("kata show" + (f" --level {level}" if level else ""), kata)
    screen = Screen(console, lang, wrap=True)
    screen.say("cli.show_header", "bold", title=kata.title(lang), minutes=kata.spec.minutes,
               path=f"katas/{kata.name}/{kata.module}.py")
    for spec in kata.spec.levels:
        if level in (0, spec.n):
            screen.rule(f"{say('grade.level', lang, n=spec.n)} · {spec.title(lang)}")
            screen.markdown(spec.prompt(lang))


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def test(ctx: typer.Context, name: str = KataArg, impl: str = ImplOpt) -> None:
    """Run pytest on the kata: examples, then the hidden suite.

    Extra options go to pytest; a full run is recorded in your progress."""
    kata = command.kata(name)
    via = [] if any(a.startswith("--kata-via") for a in ctx.args) else ["--kata-via=test"]
    code = subprocess.call(grading.pytest_command(kata, kata.impl_arg(impl), *via, *ctx.args),
                           cwd=catalog.ROOT)
    raise typer.Exit(code)


@app.command()
def grade(name: str = KataArg, impl: str = ImplOpt,
          reveal: bool = typer.Option(False, help="also show pytest's full output")) -> None:
    """The scorecard alone, recorded in your progress.

    `pytest katas/KATA` records a full run too, with pytest's report around it."""
    kata = command.kata(name)
    try:
        run, output = grading.grade(kata, impl, *(["--reveal"] if reveal else []), via="grade")
    except grading.GradingError as exc:
        fail(str(exc))
    if reveal:
        console.print(output, highlight=False, markup=False)
    for line, ok in scorecard_lines(run):
        say_to(console, line, "green" if ok else "red")
    raise typer.Exit(0 if run.passed else 1)


@app.command()
def reset(name: str = KataArg) -> None:
    """Restore the stub; your file is backed up first."""
    kata = command.kata(name)
    try:
        pristine = kata.pristine_stub()
    except FileNotFoundError as exc:
        fail(say("cli.cannot_reset", error=exc))
    if kata.stub_path.exists():
        if kata.stub_path.read_text(encoding="utf-8") == pristine:
            say_to(console, say("cli.pristine", file=kata.stub_path.name))
            return
        stamp = time.strftime("%Y%m%d-%H%M%S")
        backup = home() / "backups" / kata.name / f"{kata.module}-{stamp}.py"
        backup.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(kata.stub_path, backup)
        say_to(console, say("cli.backed_up", path=backup))
    kata.stub_path.write_text(pristine, encoding="utf-8")
    say_to(console, say("cli.restored", path=kata.stub_path))


@app.command()
def solution(name: str = KataArg,
             yes: bool = typer.Option(False, "--yes", help="do not ask before revealing")) -> None:
    """Show the reference solution (asks, and records it)."""
    kata = command.kata(name)
    if not yes and not command.confirm(say("cli.reveal_solution", kata=kata.name)):
        raise typer.Exit(1)
    _store().add_reveal(kata.name)
    _looked("kata solution", kata)
    render.print_code(console, kata.solution_path.read_text(encoding="utf-8"), "python")


def _looked(what: str, kata: catalog.Kata) -> None:
    """In an open pair session on the kata, the interviewer sees the look, and the candidate is
    told so."""
    if interview.look(what, kata.name):
        say_to(console, say("interviewer.visible"), "yellow")


def print_table(table: BenchTable, title: str) -> None:
    """A table too wide for the terminal is stacked, one `column: value` line per cell."""
    shown = Table(*table.columns, title=title)
    for row in table.rows:
        shown.add_row(*row)
    if render.fits(console, shown, console.width):
        console.print(shown)
        return
    console.print(title, style="bold", highlight=False, markup=False)
    for row in table.rows:
        console.print(say("cli.cell", column=table.columns[0], value=row[0]), style="bold",
                      highlight=False, markup=False)
        for column, cell in zip(table.columns[1:], row[1:], strict=True):
            console.print("  " + say("cli.cell", column=column, value=cell), highlight=False,
                          markup=False)


@app.command()
def bench(name: str = KataArg, impl: str = typer.Option("solution", "--impl"),
          quick: bool = typer.Option(False, help="small sizes, a few seconds"),
          out: Path = typer.Option(None, help="folder for the Markdown table and plots")) -> None:
    """Time an implementation against the kata's named baseline."""
    kata = command.kata(name)
    try:
        module = load_module(kata.impl_path(impl), f"kata_impl_{kata.name}", api=kata.api)
        runner = load_module(kata.bench_path, f"kata_bench_{kata.name}")
    except ImplError as exc:
        fail(str(exc))
    if out:
        out.mkdir(parents=True, exist_ok=True)
    try:
        table = runner.main(module, quick=quick, out=out)
    except NotImplementedError as exc:
        fail(say("cli.not_everything", impl=impl, error=repr(exc)), code=1)
    shown = table.said(language(None))  # what --out saves stays English, the docs' source
    print_table(shown, f"{kata.name} · {impl}")
    for note in shown.notes + ([say("cli.quick")] if quick else []):
        console.print(note, highlight=False, markup=False)
    if out:
        table.save(out / f"{kata.name}.md", f"{kata.title('en')}: benchmark")


@app.command()
def progress(lang: str = LangOpt) -> None:
    """Your history: a table per kata and a chart over time."""
    store = _store()
    try:
        history.report(console, store, language(lang))
    except StoreError as exc:
        fail(str(exc))


@app.command("mutants")
def mutants_(name: str = KataArg,
             mutant: str = typer.Argument(None, metavar="MUTANT",
                                          help="a mutant's name: show it as a diff"),
             lang: str = LangOpt,
             rule_map: bool = typer.Option(False, "--rules", help="maintainers: every rule of "
                                           "the prompt, the mutants that break it and the "
                                           "hidden tests that catch them"),
             yes: bool = typer.Option(False, "--yes", help="do not ask before revealing")) -> None:
    """The kata's classic mistakes; with MUTANT, one as a diff."""
    kata, lang = command.kata(name), language(lang)
    try:
        found = mutants.load(kata)
        chosen = mutants.get(kata, mutant) if mutant else None
        rule_list = rules.load(kata) if rule_map else []
    except (mutants.MutantError, rules.RuleError) as exc:
        fail(str(exc))
    except KeyError as exc:
        raise typer.BadParameter(exc.args[0]) from exc
    store = _store()
    _looked(" ".join(["kata mutants", *([mutant] if mutant else []),
                      *(["--rules"] if rule_map else [])]), kata)
    if chosen is None and not rule_map:
        earned = command.earned(store, kata)
        # A debugging kata's planted bugs are the puzzle: named, but not told, until earned.
        print_wrapped([say("cli.col_mutant", lang), say("cli.col_mistake", lang)],
                      [[m.name, say("cli.planted_hidden", lang) if m.planted and not earned
                        else m.mistake[lang]] for m in found])
        return
    command.reveal(store, kata, say("cli.reveal_rules" if rule_map else "cli.reveal_diff", lang),
                   yes)
    if rule_map:
        print_rule_map(kata, rule_list, found, lang)
        return
    say_to(console, chosen.mistake[lang])
    say_to(console, say("cli.caught_by", lang, titles="; ".join(chosen.caught_by)))
    render.print_code(console, mutants.diff(kata, chosen), "diff")


def print_rule_map(kata: catalog.Kata, rule_list: list[rules.Rule],
                   found: list[mutants.Mutant], lang: str) -> None:
    """Rule -> the mutants that break it -> the hidden tests that catch them, level by level.
    The rules quote the English prompt, which the rule map is checked against."""
    screen = Screen(console, lang)
    for spec in kata.spec.levels:
        screen.rule(f"{say('grade.level', lang, n=spec.n)} · {spec.title(lang)}")
        for rule in (r for r in rule_list if r.level == spec.n):
            kind = "" if rule.kind == "rule" else f" ({rule.kind})"
            screen.text(f"{rule.id}{kind}", "bold")
            screen.text(f"  “{rule.quote}”")
            if rule.why:
                screen.say("cli.why", "dim", why=rule.why)
            for m in (m for m in found if rule.id in m.rules):
                screen.text(f"  {m.name} → {'; '.join(m.caught_by)}")
    problems = rules.problems(kata, rule_list, found)
    done, total = rules.covered(rule_list, found)
    screen.say("cli.rules_covered", "green" if not problems else "red", done=done, total=total)
    for problem in problems:
        screen.text(f"  ✗ {problem}", "red")
    try:
        rate = diagnosis.top1(kata)
    except diagnosis.NoSignatures as exc:
        screen.say("cli.no_signatures", "yellow", error=exc)
        return
    screen.say("cli.top1", hits=rate.hits, total=rate.total, share=rate.share,
               shared=len(rate.shared))
