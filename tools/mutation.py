"""Mutation testing of the hidden suites: how many small edits of a reference solution does its
kata's hidden suite notice?

The tool is cosmic-ray (the optional extra `mutation`), not mutmut. cosmic-ray mutates one named
module file and grades each mutant with any shell command, which is exactly how this grader
already works: `pytest harness/suites/<kata> --impl=<file>` loads the implementation by path.
mutmut 3 copies the whole project into `mutants/` and runs its own trampolines through its own
pytest integration, so it would grade a rewritten copy of the repository instead of one file.

Other people run the reference solutions while this runs, so nothing here ever writes inside the
repository's `solutions/`: the reference is copied into a scratch folder outside the repository
(`/tmp/mutation/<kata>/` by default), cosmic-ray mutates that copy, and the suite grades it with
`--impl=<copy>`. Each mutant runs the whole hidden suite with `-x`, so a killed mutant costs one
pytest start-up plus the tests up to the first failure.

Survivors are triaged by hand: either a hidden test is missing (add it to the suite), or no
observer that the spec allows can tell the mutant from the reference. The second kind is listed
in `harness/suites/<kata>/equivalent.toml`, keyed by the changed line before and after (so line
numbers may move), with the reason:

    [[equivalent]]
    old = 'if n <= 0:'
    new = 'if n < 0:'
    reason = "n == 0 is rejected earlier by the length check"
    # after = '...'  (optional) the line above, when old alone occurs more than once

Mutants inside a type annotation of a module with `from __future__ import annotations` are
counted as equivalent without a run: such annotations are never evaluated.

Arithmetic operators replaced by a bitwise or shift operator (`a + b` -> `a | b`) are left out by
default (`--all-operators` keeps them): on this numeric code they raise a TypeError or produce
nonsense on the first call, every one is killed, and they are a fifth of all mutants.

    python -m harness.mutation auc_roc [more katas] [--out docs/benchmarks] [--recheck]
        [--minutes M] [--kata-timeout S]

`--minutes` stops a kata after M minutes (its mutants run in a fixed shuffled order, so a partial
run is a fair sample) and `--recheck` goes on from there; `--kata-timeout` caps each hidden test's
own time limit, so a mutant that deadlocks a thread-based suite costs S seconds, not 30.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from harness import catalog, mutants, rules

SCRATCH = Path("/tmp/mutation")
TIMEOUT = 90.0  # seconds per mutant; the plugin's own per-test limits catch most hangs first
NOISE = re.compile(
    r"core/ReplaceBinaryOperator_(Add|Sub|Mul|Div|FloorDiv|Mod|Pow)_(BitOr|BitAnd|BitXor|LShift|RShift)$")
TABLE = "mutation.md"
COLUMNS = ["kata", "mutants", "killed", "survived", "equivalent", "did not run",
           "score (killed / non-equivalent)", "date", "rules covered"]


@dataclass(frozen=True)
class Equivalent:
    old: str
    new: str
    reason: str
    after: str | None = None  # the line above, when `old` alone is not unique (a bare `break`)


@dataclass
class Mutant:
    job_id: str
    operator: str
    line: int
    diff: str
    outcome: str = "pending"  # pending, killed, survived, equivalent, incompetent
    note: str = ""


@dataclass
class Summary:
    kata: str
    mutants: list[Mutant] = field(default_factory=list)
    filtered: int = 0
    seconds: float = 0.0

    def count(self, outcome: str) -> int:
        return sum(m.outcome == outcome for m in self.mutants)

    @property
    def score(self) -> str:
        killed, survived = self.count("killed"), self.count("survived")
        if killed + survived == 0:
            return "-"
        return f"{killed} / {killed + survived} ({100 * killed / (killed + survived):.0f} %)"


def changed_lines(diff: str) -> tuple[str, str]:
    """The removed and the added lines of a unified diff, stripped: a mutant's stable key."""
    lines = diff.splitlines()
    old = [x[1:].strip() for x in lines if x.startswith("-") and not x.startswith("---")]
    new = [x[1:].strip() for x in lines if x.startswith("+") and not x.startswith("+++")]
    return "\n".join(old), "\n".join(new)


ANNOTATION = "inside a type annotation, which `from __future__ import annotations` never evaluates"


def annotation_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) positions of every annotation, when the module never evaluates them."""
    import ast

    tree = ast.parse(source)
    lazy = any(isinstance(n, ast.ImportFrom) and n.module == "__future__"
               and any(a.name == "annotations" for a in n.names) for n in tree.body)
    if not lazy:
        return []
    nodes = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            nodes.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns:
            nodes.append(node.returns)
    return [((n.lineno, n.col_offset), (n.end_lineno, n.end_col_offset)) for n in nodes]


def load_equivalents(kata: catalog.Kata) -> list[Equivalent]:
    path = kata.suite_dir / "equivalent.toml"
    if not path.is_file():
        return []
    with open(path, "rb") as f:
        rows = tomllib.load(f).get("equivalent", [])
    return [Equivalent(r["old"].strip(), r["new"].strip(), r["reason"],
                       r["after"].strip() if "after" in r else None) for r in rows]


def _scratch_copy(kata: catalog.Kata, scratch: Path) -> Path:
    folder = (scratch / kata.name).resolve()
    if folder.is_relative_to(catalog.ROOT):
        raise SystemExit(f"{folder} is inside the repository: mutants must never be written there")
    return folder / f"{kata.module}.py"


def _test_command(kata: catalog.Kata, copy: Path, test_timeout: float | None = None) -> str:
    # --kata-timeout caps every test's own limit: a mutant that deadlocks costs that long.
    limit = "" if test_timeout is None else f" --kata-timeout={test_timeout:g}"
    return (f"{sys.executable} -m pytest {kata.suite_dir} --impl={copy} "
            f"-x -q -p no:cacheprovider --kata-via=none{limit}")  # a mutant is no attempt


def _init(kata: catalog.Kata, copy: Path, timeout: float, command: str) -> Path:
    folder = copy.parent
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    shutil.copyfile(kata.solution_path, copy)
    config = folder / "config.toml"
    config.write_text(
        "[cosmic-ray]\n"
        f'module-path = "{copy}"\n'
        f"timeout = {timeout}\n"
        "excluded-modules = []\n"
        f'test-command = "{command}"\n\n'
        '[cosmic-ray.distributor]\nname = "local"\n', encoding="utf-8")
    session = folder / "session.sqlite"
    cosmic_ray = Path(sys.executable).parent / "cosmic-ray"
    subprocess.run([str(cosmic_ray), "init", str(config), str(session)], check=True)
    return session


FAILED = re.compile(r"^(\d+ failed|.*\b\d+ errors?\b)", re.MULTILINE)


def _outcome(result) -> str:
    """killed, survived or incompetent. cosmic-ray calls any non-zero exit a kill; here only a
    failed test (pytest's summary line says so) or a timeout is one, not a crashed pytest."""
    from cosmic_ray.work_item import TestOutcome

    if result.test_outcome == TestOutcome.SURVIVED:
        return "survived"
    if "does not import" in (result.output or ""):  # e.g. `*,` in a signature made `**,`
        return "incompetent"
    if result.output == "timeout" or FAILED.search(result.output or ""):
        return "killed"
    return "incompetent"


def _diff_of(item, source: str) -> str:
    import difflib

    import cosmic_ray.plugins
    from cosmic_ray.mutating import mutate_code

    spec = item.mutations[0]
    operator = cosmic_ray.plugins.get_operator(spec.operator_name)(**(spec.operator_args or {}))
    mutated = mutate_code(source, operator, spec.occurrence)
    if mutated is None:
        return ""
    return "".join(difflib.unified_diff(source.splitlines(True), mutated.splitlines(True),
                                        "reference", "mutant", n=1))


def run(kata: catalog.Kata, *, scratch: Path = SCRATCH, timeout: float = TIMEOUT,
        all_operators: bool = False, recheck: bool = False, minutes: float | None = None,
        test_timeout: float | None = None, log=print) -> Summary:
    """Mutate a scratch copy of the reference and grade every mutant with the hidden suite.

    `recheck` keeps the last session and grades its survivors again (after new tests or new
    equivalent.toml entries), instead of starting over. `minutes` stops grading after that long;
    the mutants are graded in a fixed shuffled order, so a partial run is a fair sample, and
    `--recheck` goes on where it stopped.
    """
    from cosmic_ray.mutating import mutate_and_test
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    start = time.monotonic()
    copy = _scratch_copy(kata, scratch)
    session = copy.parent / "session.sqlite"
    source = kata.solution_path.read_text(encoding="utf-8")
    if recheck and not (session.is_file() and copy.read_text(encoding="utf-8") == source):
        log(f"{kata.name}: no session for this reference yet; starting over")
        recheck = False
    command = _test_command(kata, copy, test_timeout)
    if not recheck:
        session = _init(kata, copy, timeout, command)
    baseline = subprocess.run(command.split(), capture_output=True, text=True)
    if baseline.returncode != 0:
        raise SystemExit(f"{kata.name}: the reference fails its own suite:\n{baseline.stdout}")

    listed = load_equivalents(kata)
    lines = source.splitlines()
    annotations = annotation_spans(source)
    summary = Summary(kata.name)
    with use_db(str(session), WorkDB.Mode.open) as db:
        results = dict(db.results)
        items = list(db.work_items)
        todo = []
        for item in items:
            spec = item.mutations[0]
            if not all_operators and NOISE.match(spec.operator_name):
                summary.filtered += 1
                continue
            diff = _diff_of(item, source)
            mutant = Mutant(item.job_id, spec.operator_name, spec.start_pos[0], diff)
            summary.mutants.append(mutant)
            above = lines[spec.start_pos[0] - 2].strip() if spec.start_pos[0] > 1 else ""
            reason = next((e.reason for e in listed if (e.old, e.new) == changed_lines(diff)
                           and e.after in (None, above)), None)
            if any(a <= tuple(spec.start_pos) < b for a, b in annotations):
                reason = ANNOTATION
            previous = results.get(item.job_id)
            if reason is not None:
                mutant.outcome, mutant.note = "equivalent", reason
                db.set_result(item.job_id, WorkResult(output=f"equivalent: {reason}",
                                                      worker_outcome=WorkerOutcome.SKIPPED))
            elif previous is not None and previous.test_outcome is not None and (
                    _outcome(previous) != "survived"):
                mutant.outcome = _outcome(previous)
                if mutant.outcome == "incompetent":
                    mutant.note = (previous.output or "")[-400:]
            else:  # never run, survived last time, or listed as equivalent no longer
                if previous is not None and previous.test_outcome is not None:
                    mutant.outcome = "survived"  # until graded again
                todo.append((item, mutant))
        random.Random(0).shuffle(todo)
        todo.sort(key=lambda t: t[1].outcome != "survived")  # last run's survivors first
        for n, (item, mutant) in enumerate(todo, 1):
            if minutes is not None and time.monotonic() - start > 60 * minutes:
                log(f"{kata.name}: stopped after {minutes:g} minutes, {len(todo) - n + 1} left")
                break
            result = mutate_and_test(item.mutations, command, timeout)
            db.set_result(item.job_id, result)
            mutant.outcome = _outcome(result)
            if mutant.outcome == "incompetent":
                mutant.note = (result.output or "")[-400:]
            log(f"{kata.name} [{n}/{len(todo)}] {mutant.outcome:<11} line {mutant.line:<4} "
                f"{mutant.operator}")
    summary.seconds = time.monotonic() - start
    (copy.parent / "report.md").write_text(report(summary), encoding="utf-8")
    return summary


def report(summary: Summary) -> str:
    lines = [f"# Mutation testing: {summary.kata}", "",
             f"{len(summary.mutants)} mutants ({summary.filtered} bitwise/shift replacements of "
             f"arithmetic left out): {summary.count('killed')} killed, "
             f"{summary.count('survived')} survived, {summary.count('equivalent')} equivalent, "
             f"{summary.count('incompetent')} incompetent, {summary.count('pending')} not "
             f"graded yet; score {summary.score}; "
             f"{summary.seconds:.0f} s.", ""]
    for outcome in ("survived", "incompetent", "equivalent"):
        for m in (m for m in summary.mutants if m.outcome == outcome):
            lines += [f"## {outcome}: line {m.line}, {m.operator}", ""]
            if m.note:
                lines += [m.note.strip(), ""]
            lines += ["```diff", m.diff.rstrip(), "```", ""]
    return "\n".join(lines)


def rules_covered(kata: catalog.Kata) -> str:
    """The rule map's measure beside cosmic-ray's: rules broken by a mutant that its named tests
    catch (the meta-tests prove the catching), over the prompt's testable rules."""
    done, total = rules.covered(rules.load(kata), mutants.load(kata))
    return f"{done} / {total} ({100 * done // total} %)" if total else "no rule map"


def save_table(summary: Summary | None, out: Path) -> None:
    """Adds or replaces this kata's row of `out/mutation.md`, the Benchmarks page's table, and
    brings every row's "rules covered" up to date (`summary=None`: only that column)."""
    path = out / TABLE
    rows: dict[str, dict[str, str]] = {}
    if path.is_file():
        header: list[str] = []
        for line in path.read_text(encoding="utf-8").splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("| kata |"):
                header = cells
            elif line.startswith("| ") and cells[0] != "---" and header:
                rows[cells[0]] = dict(zip(header, cells, strict=False))
    if summary is not None:
        graded = len(summary.mutants) - summary.count("pending")
        size = f"{graded} of {len(summary.mutants)}" if graded < len(summary.mutants) else graded
        cells = [f"`{summary.kata}`", size, summary.count("killed"),
                 summary.count("survived"), summary.count("equivalent"),
                 summary.count("incompetent"), summary.score, date.today().isoformat()]
        rows[f"`{summary.kata}`"] = dict(zip(COLUMNS, map(str, cells), strict=False))
    for kata in catalog.all_katas():
        row = rows.setdefault(f"`{kata.name}`", {"kata": f"`{kata.name}`"})
        row["rules covered"] = rules_covered(kata)
    order = [f"`{k.name}`" for k in catalog.all_katas()]
    ranked = sorted(rows, key=lambda k: (order.index(k) if k in order else len(order), k))
    path.write_text(
        "# Mutation testing: hidden suites\n\n"
        f"Each kata's reference mutated by cosmic-ray 8.7.0, graded by its hidden suite "
        f"(`make mutation`); {os.cpu_count()}-core {os.uname().machine} CPU. \"Rules covered\" "
        "counts the prompt's rules that a named mutant breaks and its hidden tests catch "
        "(`kata mutants KATA --rules`); \"—\": not mutated yet.\n\n"
        "| " + " | ".join(COLUMNS) + " |\n|" + " --- |" * len(COLUMNS) + "\n"
        + "\n".join("| " + " | ".join(rows[k].get(c, "—") for c in COLUMNS) + " |"
                    for k in ranked) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.mutation", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("katas", nargs="*", help="katas to mutate (default: every kata)")
    parser.add_argument("--out", type=Path, help="folder for the summary table (docs/benchmarks)")
    parser.add_argument("--scratch", type=Path, default=SCRATCH, help="outside the repository")
    parser.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds per mutant")
    parser.add_argument("--all-operators", action="store_true")
    parser.add_argument("--recheck", action="store_true",
                        help="keep the last session: grade its survivors and ungraded mutants")
    parser.add_argument("--minutes", type=float, help="stop grading a kata after this long")
    parser.add_argument("--kata-timeout", type=float, help="cap on each hidden test's time limit")
    parser.add_argument("--rules-only", action="store_true",
                        help="run nothing: refresh the table's \"rules covered\" column")
    args = parser.parse_args(argv)
    os.nice(19 - os.nice(0))  # other people share the cores: every pytest below inherits this
    os.chdir(catalog.ROOT)
    if args.rules_only:
        save_table(None, args.out or Path("docs/benchmarks"))
        return 0
    katas = [catalog.Kata(n) for n in args.katas] or catalog.all_katas()
    for kata in katas:  # one at a time
        summary = run(kata, scratch=args.scratch, timeout=args.timeout,
                      all_operators=args.all_operators, recheck=args.recheck,
                      minutes=args.minutes, test_timeout=args.kata_timeout)
        print(report(summary).split("\n\n")[1])
        print(f"report: {args.scratch / kata.name / 'report.md'}")
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            save_table(summary, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
