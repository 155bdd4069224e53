"""`kata`: list, read, test, grade, reset, reveal and benchmark the katas."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Column, Table

from harness import catalog, diagnosis, grading, helplang, mutants, render, rules
from harness.bench import Table as BenchTable
from harness.interviewer.commands import interviewer
from harness.loader import ImplError, load_module
from harness.mock import progress as mock_progress
from harness.mock.commands import mock
from harness.results import KataRun, scorecard_lines
from harness.store import Store, StoreError, home

HELP = """Practice katas for ML and inference coding rounds.

While you code, run `pytest katas/KATA` (or `kata test KATA`): pytest's report, then the kata's
scorecard. `kata grade KATA` prints the scorecard alone. Either way, a full run of your file is
recorded in .kata/progress.db, which `kata list` and `kata progress` read.

KATA_LANG=zh-TW prints this help, and everything else, in Traditional Chinese."""
app = helplang.App(help=HELP, no_args_is_help=True)
console = Console()
app.add_typer(mock, name="mock")
app.add_typer(interviewer, name="interviewer")

KataArg = typer.Argument(..., metavar="KATA", help="the kata's name, as `kata list` shows it")
ImplOpt = typer.Option("stub", "--impl", help="stub (your file), solution, or a PATH")
LangOpt = typer.Option(None, "--lang", show_default=False,
                       help="en or zh-TW (default: KATA_LANG, else en)")


def _kata(name: str) -> catalog.Kata:
    try:
        return catalog.get(name)
    except KeyError as exc:
        raise typer.BadParameter(exc.args[0]) from exc


def _lang(lang: str | None) -> str:
    lang = lang or helplang.lang()
    if lang not in catalog.LANGS:
        raise typer.BadParameter(f"--lang must be one of {', '.join(catalog.LANGS)}, got {lang!r}")
    return lang


def _store() -> Store:
    try:
        store = Store()
    except StoreError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    if store.notice:
        console.print(f"[yellow]{store.notice}[/yellow]")
    return store


@app.command("list")
def list_katas(lang: str = LangOpt) -> None:
    """Every kata, its levels, and your best graded result."""
    lang, store = _lang(lang), _store()
    # Titles wrap, and a word too long for its column folds, never cut to "…".
    table = Table(Column("kata", no_wrap=True), Column("title", overflow="fold"), "levels", "min",
                  Column("your best", overflow="fold"))
    revealed = store.reveals()
    for kata in catalog.all_katas():
        try:
            kata.meta["levels"]
        except (KeyError, ValueError) as exc:  # a kata.toml being written, or broken
            table.add_row(kata.name, f"[red]kata.toml is incomplete: {exc}[/red]", "", "", "")
            continue
        best = store.best(kata.name)
        result = f"level {best.best_level} ({best.passed}/{best.total})" if best else "—"
        if best and best.impl != "stub":  # a file of the learner's outside katas/
            result += f"\n{best.impl}"
        if kata.name in revealed:  # `kata solution` promised that a look is recorded
            result += "\nsolution seen"
        table.add_row(kata.name, kata.title(lang), str(kata.num_levels),
                      str(kata.meta["minutes"]), result)
    console.print(table)


@app.command()
def show(name: str = KataArg, lang: str = LangOpt,
         level: int = typer.Option(0, show_default=False,
                                   help="show only this level (default: all)")) -> None:
    """The kata's prompt."""
    kata, lang = _kata(name), _lang(lang)
    if not 0 <= level <= kata.num_levels:
        raise typer.BadParameter(f"{kata.name} has levels 1 to {kata.num_levels}, got {level} "
                                 "(leave --level out to show them all)", param_hint="--level")
    console.print(f"[bold]{kata.title(lang)}[/bold]  ({kata.meta['minutes']} min)  "
                  f"katas/{kata.name}/{kata.module}.py")
    for n, spec in enumerate(kata.meta["levels"], start=1):
        if level in (0, n):
            console.rule(f"{level_label(n, lang)} · {spec['title'][lang]}")
            render.print_markdown(console, spec["prompt"][lang], lang)


def level_label(n: int, lang: str) -> str:
    return f"第 {n} 關" if lang == "zh-TW" else f"Level {n}"


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def test(ctx: typer.Context, name: str = KataArg, impl: str = ImplOpt) -> None:
    """Run pytest on the kata: examples, then the hidden suite.

    Extra options go to pytest; a full run is recorded in your progress."""
    kata = _kata(name)
    via = [] if any(a.startswith("--kata-via") for a in ctx.args) else ["--kata-via=test"]
    code = subprocess.call(grading.pytest_command(kata, kata.impl_arg(impl), *via, *ctx.args),
                           cwd=catalog.ROOT)
    raise typer.Exit(code)


def print_scorecard(run: KataRun) -> None:
    for line, ok in scorecard_lines(run):
        console.print(line, style="green" if ok else "red", highlight=False, soft_wrap=True)


@app.command()
def grade(name: str = KataArg, impl: str = ImplOpt,
          reveal: bool = typer.Option(False, help="also show pytest's full output")) -> None:
    """The scorecard alone, recorded in your progress.

    `pytest katas/KATA` records a full run too, with pytest's report around it."""
    kata = _kata(name)
    try:
        run, output = grading.grade(kata, impl, *(["--reveal"] if reveal else []), via="grade")
    except grading.GradingError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    if reveal:
        console.print(output, highlight=False, markup=False)
    print_scorecard(run)
    raise typer.Exit(0 if run.passed else 1)


@app.command()
def reset(name: str = KataArg) -> None:
    """Restore the stub; your file is backed up first."""
    kata = _kata(name)
    try:
        pristine = kata.pristine_stub()
    except FileNotFoundError as exc:
        console.print(f"[red]cannot reset: {exc}[/red]")
        raise typer.Exit(2) from exc
    if kata.stub_path.exists():
        if kata.stub_path.read_text(encoding="utf-8") == pristine:
            console.print(f"{kata.stub_path.name} is already the pristine stub")
            return
        stamp = time.strftime("%Y%m%d-%H%M%S")
        backup = home() / "backups" / kata.name / f"{kata.module}-{stamp}.py"
        backup.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(kata.stub_path, backup)
        console.print(f"your file is saved as {backup}", soft_wrap=True)
    kata.stub_path.write_text(pristine, encoding="utf-8")
    console.print(f"restored the stub in {kata.stub_path}")


@app.command()
def solution(name: str = KataArg,
             yes: bool = typer.Option(False, "--yes", help="do not ask before revealing")) -> None:
    """Show the reference solution (asks, and records it)."""
    kata = _kata(name)
    if not yes and not typer.confirm(f"Reveal the reference solution of {kata.name}? "
                                     "It is recorded in your progress."):
        raise typer.Exit(1)
    _store().add_reveal(kata.name)
    print_code(kata.solution_path.read_text(encoding="utf-8"), "python")


def print_code(code: str, lexer: str) -> None:
    render.print_code(console, code, lexer)


QUICK_NOTE = ("--quick: small sizes, a smoke test; timings at this size vary from run to run. "
              "Run without --quick for figures to compare.")


def print_table(table: BenchTable, title: str) -> None:
    """A table too wide for the terminal is stacked, one `column: value` line per cell: rich
    would otherwise cut its cells and headers to "…"."""
    shown = Table(*table.columns, title=title)
    for row in table.rows:
        shown.add_row(*row)
    unbounded = console.options.update_width(10_000)  # its natural width, not the terminal's
    if console.measure(shown, options=unbounded).maximum <= console.width:
        console.print(shown)
        return
    console.print(title, style="bold", highlight=False, markup=False)
    for row in table.rows:
        console.print(f"{table.columns[0]}: {row[0]}", style="bold", highlight=False,
                      markup=False)
        for column, cell in zip(table.columns[1:], row[1:], strict=True):
            console.print(f"  {column}: {cell}", highlight=False, markup=False)


@app.command()
def bench(name: str = KataArg, impl: str = typer.Option("solution", "--impl"),
          quick: bool = typer.Option(False, help="small sizes, a few seconds"),
          out: Path = typer.Option(None, help="folder for the Markdown table and plots")) -> None:
    """Time an implementation against the kata's named baseline."""
    kata = _kata(name)
    try:
        module = load_module(kata.impl_path(impl), f"kata_impl_{kata.name}", api=kata.api)
        runner = load_module(kata.bench_path, f"kata_bench_{kata.name}")
    except ImplError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    if out:
        out.mkdir(parents=True, exist_ok=True)
    try:
        table = runner.main(module, quick=quick, out=out)
    except NotImplementedError as exc:
        console.print(f"[red]{impl} does not implement everything yet ({exc!r}); "
                      "try --impl solution[/red]")
        raise typer.Exit(1) from exc
    print_table(table, f"{kata.name} · {impl}")
    for note in table.notes + ([QUICK_NOTE] if quick else []):
        console.print(note, highlight=False, markup=False)
    if out:
        table.save(out / f"{kata.name}.md", f"{kata.title('en')}: benchmark")


@app.command()
def progress(lang: str = LangOpt) -> None:
    """Your history: a table per kata and a chart over time."""
    mock_progress.report(console, _store(), _lang(lang))


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
    kata, lang = _kata(name), _lang(lang)
    try:
        found = mutants.load(kata)
        chosen = mutants.get(kata, mutant) if mutant else None
        rule_list = rules.load(kata) if rule_map else []
    except (mutants.MutantError, rules.RuleError) as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    except KeyError as exc:
        raise typer.BadParameter(exc.args[0]) from exc
    store = _store()
    best = store.best(kata.name)
    earned = (best is not None and best.best_level == kata.num_levels) or store.revealed(kata.name)
    if chosen is None and not rule_map:
        table = Table(Column("mutant", no_wrap=True), Column("mistake", overflow="fold"))
        for m in found:
            # A debugging kata's planted bugs are the puzzle: named, but not told, until earned.
            hidden = m.planted and not earned
            text = "(planted in your stub: shown once you pass or reveal)" if hidden \
                else m.mistake[lang]
            table.add_row(m.name, text)
        console.print(table)
        return
    if not earned and os.environ.get("KATAS_MAINTAINER") != "1":
        what = "The rule map names every mutant and hidden test" if rule_map \
            else "The diff shows part of the reference solution"
        if not yes and not typer.confirm(f"{what}. Reveal it? It is recorded in your progress."):
            raise typer.Exit(1)
        store.add_reveal(kata.name)
    if rule_map:
        print_rule_map(kata, rule_list, found)
        return
    console.print(chosen.mistake[lang], highlight=False, markup=False, soft_wrap=True)
    console.print(f"caught by: {'; '.join(chosen.caught_by)}", highlight=False, markup=False,
                  soft_wrap=True)
    print_code(mutants.diff(kata, chosen), "diff")


def print_rule_map(kata: catalog.Kata, rule_list: list[rules.Rule],
                   found: list[mutants.Mutant]) -> None:
    """Rule -> the mutants that break it -> the hidden tests that catch them, level by level."""
    plain = {"highlight": False, "markup": False}
    for level in range(1, kata.num_levels + 1):
        console.rule(f"Level {level} · {kata.meta['levels'][level - 1]['title']['en']}")
        for rule in (r for r in rule_list if r.level == level):
            kind = "" if rule.kind == "rule" else f" ({rule.kind})"
            console.print(f"{rule.id}{kind}", style="bold", **plain)
            console.print(f"  “{rule.quote}”", **plain)
            if rule.why:
                console.print(f"  why: {rule.why}", style="dim", **plain)
            for m in (m for m in found if rule.id in m.rules):
                console.print(f"  {m.name} → {'; '.join(m.caught_by)}", **plain)
    problems = rules.problems(kata, rule_list, found)
    done, total = rules.covered(rule_list, found)
    console.print(f"rules with a mutant: {done}/{total}", style="green" if not problems else "red",
                  **plain)
    for problem in problems:
        console.print(f"  ✗ {problem}", style="red", **plain)
    try:
        rate = diagnosis.top1(kata)
    except diagnosis.NoSignatures as exc:
        console.print(f"diagnosis: {exc}", style="yellow", **plain)
        return
    console.print(f"diagnosis top-1: {rate.hits}/{rate.total} ({rate.share:.1%}) mutants ranked "
                  f"first (or an equal signature) by their own failures; "
                  f"{len(rate.shared)} groups share a signature", **plain)
