"""Mutation testing of the hidden suites: how many small edits of a reference solution does its
kata's hidden suite notice? A maintainers' script (`make mutation`), not part of the package.

cosmic-ray (the optional extra `mutation`) lists the mutants: its operators over a scratch copy
of the reference outside the repository (`/tmp/mutation/<kata>/` by default), so nothing here
writes inside `solutions/`, which other people run meanwhile. Grading them is ours, and selects
tests the way mutmut does:

1. Coverage per test, once: the hidden suite runs against the copy with a tracer that records
   which lines of the copy each hidden test executes inside a function, and how long it takes.
2. Each mutant runs only the tests that execute its statement, fastest first, and stops at the
   first failure; Hypothesis stops at its first failing example (a verdict needs no shrinking).
   A mutant outside every function (a constant, a default value, a class body) runs the whole
   suite; one whose statement no test executes survives without a run: no test can see it.
3. Each grading is a fork of a server that collected the suite once (this file is its pytest
   plugin, as tests/forkserver.py is the meta-tests'), so a mutant pays no pytest start-up and
   no collection; `--jobs` servers grade in parallel (default: one per core).

Outcomes: killed (a test failed, or the grading hit its time limit), survived, equivalent, and
did not run: cosmic-ray wrote text that is not Python (`def f(a, *, b)` with `*` made `**`),
each listed in the kata's report with the compiler's reason.

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

    python tools/mutation.py auc_roc [more katas] [--out docs/benchmarks] [--jobs N]
        [--recheck] [--minutes M] [--kata-timeout S]

`--minutes` stops a kata after M minutes (its mutants run in a fixed shuffled order, so a partial
run is a fair sample) and `--recheck` goes on from there, grading only the last run's survivors
and the mutants not graded yet; `--kata-timeout` caps each hidden test's own time limit, so a
mutant that deadlocks a thread-based suite costs S seconds, not 30.
"""

from __future__ import annotations

import argparse
import ast
import functools
import inspect
import json
import os
import queue
import random
import re
import shutil
import subprocess
import sys
import threading
import time
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import pytest

from harness import catalog, mutants, rules

sys.path.insert(0, str(catalog.ROOT / "tests"))  # the forking server lives with the tests
import forkserver  # noqa: E402

SCRATCH = Path("/tmp/mutation")
LIMIT = 120.0  # seconds per grading; the plugin's own per-test limits catch most hangs first
NOISE = re.compile(
    r"core/ReplaceBinaryOperator_(Add|Sub|Mul|Div|FloorDiv|Mod|Pow)_(BitOr|BitAnd|BitXor|LShift|RShift)$")
TABLE = "mutation.md"
COLUMNS = ["kata", "mutants", "killed", "survived", "equivalent", "did not run",
           "score (killed / non-equivalent)", "time", "date", "rules covered"]


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
    text: str  # the mutated module
    outcome: str = "pending"  # pending, killed, survived, equivalent, invalid
    note: str = ""


@dataclass
class Summary:
    kata: str
    mutants: list[Mutant] = field(default_factory=list)
    filtered: int = 0
    seconds: float = 0.0
    recheck: bool = False  # graded only the last run's survivors and ungraded mutants

    def count(self, outcome: str) -> int:
        return sum(m.outcome == outcome for m in self.mutants)

    @property
    def score(self) -> str:
        killed, survived = self.count("killed"), self.count("survived")
        if killed + survived == 0:
            return "-"
        # Rounded down: one survivor in 800 is 99 %, never "100 %".
        return f"{killed} / {killed + survived} ({100 * killed // (killed + survived)} %)"


def changed_lines(diff: str) -> tuple[str, str]:
    """The removed and the added lines of a unified diff, stripped: a mutant's stable key."""
    lines = diff.splitlines()
    old = [x[1:].strip() for x in lines if x.startswith("-") and not x.startswith("---")]
    new = [x[1:].strip() for x in lines if x.startswith("+") and not x.startswith("+++")]
    return "\n".join(old), "\n".join(new)


ANNOTATION = "inside a type annotation, which `from __future__ import annotations` never evaluates"


def annotation_spans(tree: ast.Module) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) positions of every annotation, when the module never evaluates them."""
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


def statement_lines(tree: ast.Module, line: int) -> set[int] | None:
    """The lines whose execution runs the mutant at `line`: the innermost statement holding it
    (of a compound statement, its header) and `line` itself. None where that statement runs at
    import, outside every function: at module level, in a class body, in a `def` line's
    defaults or decorators."""
    found: list[tuple[ast.stmt, bool]] = []  # outermost first

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt) and child.lineno <= line <= child.end_lineno:
                found.append((child, in_function))
            walk(child, in_function or isinstance(child, FUNCTIONS))

    walk(tree, False)
    if not found or not found[-1][1]:
        return None
    stmt = found[-1][0]
    body = [s for name in ("body", "orelse", "finalbody", "handlers", "cases")
            for s in getattr(stmt, name, None) or [] if isinstance(s, ast.AST)]
    header_end = min((s.lineno for s in body), default=stmt.end_lineno + 1) - 1
    return set(range(stmt.lineno, max(header_end, stmt.lineno) + 1)) | {line}


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def load_equivalents(kata: catalog.Kata) -> list[Equivalent]:
    path = kata.suite_dir / "equivalent.toml"
    if not path.is_file():
        return []
    with open(path, "rb") as f:
        rows = tomllib.load(f).get("equivalent", [])
    return [Equivalent(r["old"].strip(), r["new"].strip(), r["reason"],
                       r["after"].strip() if "after" in r else None) for r in rows]


# --- coverage per test ----------------------------------------------------------------------


class Tracer:
    """A pytest plugin: the lines of one file that each hidden test (by node id) executes in a
    function, and how long each test takes.

    Only code objects of functions are traced: module and class bodies run at import, once for
    the whole session, so they are no test's own."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.lines: dict[str, set[int]] = defaultdict(set)
        self.seconds: dict[str, float] = defaultdict(float)
        self.current: set[int] | None = None

    def _call(self, frame, event, arg):
        code = frame.f_code
        if code.co_filename != self.path or not code.co_flags & inspect.CO_OPTIMIZED:
            return None
        return self._line

    def _line(self, frame, event, arg):
        if event == "line" and self.current is not None:
            self.current.add(frame.f_lineno)
        return self._line

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        title = item.nodeid
        self.current = self.lines[title]
        forkserver.clear_caches(item.path.parent)
        sys.settrace(self._call)
        threading.settrace(self._call)
        start = time.perf_counter()
        try:
            yield
        finally:
            sys.settrace(None)
            threading.settrace(None)
            self.seconds[title] += time.perf_counter() - start
            self.current = None


def _trace_main(kata_name: str, copy: str, out: str) -> int:
    """In a child process: run the whole hidden suite on `copy` under the tracer."""
    kata = catalog.get(kata_name)
    tracer = Tracer(copy)
    code = pytest.main([str(kata.suite_dir), f"--impl={copy}", "-q", "-p", "no:cacheprovider",
                        "--kata-via=none", "--kata-timeout=600"], plugins=[tracer])
    Path(out).write_text(json.dumps({
        "code": int(code), "lines": {t: sorted(s) for t, s in tracer.lines.items()},
        "seconds": tracer.seconds}), encoding="utf-8")
    return 0


def _fingerprint(kata: catalog.Kata) -> str:
    """What coverage depends on: the reference and every file of the hidden suite."""
    import hashlib

    digest = hashlib.sha256(kata.solution_path.read_bytes())
    for path in sorted(kata.suite_dir.rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def coverage(kata: catalog.Kata, copy: Path) -> dict:
    """{"lines": node id -> lines executed, "seconds": node id -> time}, measured again only
    when the reference or the suite changed; exits if the reference fails its own suite."""
    out = copy.parent / "coverage.json"
    key = _fingerprint(kata)
    if out.is_file():
        found = json.loads(out.read_text(encoding="utf-8"))
        if found.get("key") == key:
            return found
    proc = subprocess.run([sys.executable, __file__, "--trace", kata.name, str(copy), str(out)],
                          cwd=catalog.ROOT, capture_output=True, text=True)
    if proc.returncode != 0 or not out.is_file():
        raise SystemExit(f"{kata.name}: tracing failed:\n{proc.stdout[-3000:]}{proc.stderr}")
    found = json.loads(out.read_text(encoding="utf-8"))
    if found["code"] != 0:
        raise SystemExit(f"{kata.name}: the reference fails its own suite:\n{proc.stdout[-3000:]}")
    found["key"] = key
    out.write_text(json.dumps(found), encoding="utf-8")
    return found


def tests_for(tree: ast.Module, line: int, seen: dict) -> list[str]:
    """The node ids of the tests that execute the statement at `line` (all of them where it runs
    at import), fastest first: most mutants fail the first test that runs them."""
    span = statement_lines(tree, line)
    tests = [test for test, lines in seen["lines"].items()
             if span is None or not span.isdisjoint(lines)]
    return sorted(tests, key=seen["seconds"].get)


# --- grading ----------------------------------------------------------------------------------


def _scratch_copy(kata: catalog.Kata, scratch: Path) -> Path:
    folder = (scratch / kata.name).resolve()
    if folder.is_relative_to(catalog.ROOT):
        raise SystemExit(f"{folder} is inside the repository: mutants must never be written there")
    return folder / f"{kata.module}.py"


def _init(kata: catalog.Kata, copy: Path) -> Path:
    """A fresh scratch folder with the reference's copy and cosmic-ray's list of mutants."""
    folder = copy.parent
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    shutil.copyfile(kata.solution_path, copy)
    config = folder / "config.toml"
    config.write_text(  # cosmic-ray only lists the mutants: its test command is never run
        "[cosmic-ray]\n"
        f'module-path = "{copy}"\n'
        f"timeout = {LIMIT}\n"
        "excluded-modules = []\n"
        'test-command = "false"\n\n'
        '[cosmic-ray.distributor]\nname = "local"\n', encoding="utf-8")
    session = folder / "session.sqlite"
    cosmic_ray = Path(sys.executable).parent / "cosmic-ray"
    subprocess.run([str(cosmic_ray), "init", str(config), str(session)], check=True)
    return session


def mutated_texts(source: str, items: list) -> dict[str, str]:
    """job id -> the module with that work item's mutation, as cosmic-ray's `mutate_code` writes
    it, which parses the module anew for every mutant (0.15 s each, minutes for a kata). Here it
    is parsed once: each operator's mutation points are listed in cosmic-ray's walk order, and
    each mutant replaces its node's text, prefix included, with the mutated node's; a node the
    operator changed in place gets its value and children back before the next, and a tree
    changed beyond that is parsed again."""
    import parso
    from cosmic_ray.plugins import get_operator

    starts = [0]
    for line in source.splitlines(True):
        starts.append(starts[-1] + len(line))

    def offset(position: tuple[int, int]) -> int:
        return starts[position[0] - 1] + position[1]

    groups: dict[tuple[str, str], list] = defaultdict(list)
    for item in items:
        spec = item.mutations[0]
        groups[spec.operator_name, json.dumps(spec.operator_args or {})].append(item)
    texts = {}
    tree = parso.parse(source)
    for (name, args), group in groups.items():
        operator = get_operator(name)(**json.loads(args))
        found = _points(operator, tree)
        for item in group:
            node, index = found[item.mutations[0].occurrence]
            start = offset(node.get_first_leaf().get_start_pos_of_prefix())
            end = offset(node.end_pos)
            value, children = getattr(node, "value", None), list(getattr(node, "children", ()))
            mutant = operator.mutate(node, index)
            code = "" if mutant is None else mutant.get_code(include_prefix=True)
            texts[item.job_id] = source[:start] + code + source[end:]
            if hasattr(node, "value"):
                node.value = value
            if hasattr(node, "children"):
                node.children = children
            if tree.get_code() != source:  # changed beyond the node: start from a fresh parse
                tree = parso.parse(source)
                found = _points(operator, tree)
    return texts


def _points(operator, tree) -> list[tuple]:
    """(node, index) of every mutation point of `operator`, in cosmic-ray's order."""
    from cosmic_ray.ast import ast_nodes

    return [(node, index) for node in ast_nodes(tree)
            for index, _ in enumerate(operator.mutation_positions(node))]


def unified_diff(source: str, text: str) -> str:
    import difflib

    return "".join(difflib.unified_diff(source.splitlines(True), text.splitlines(True),
                                        "reference", "mutant", n=1))


class Suite(forkserver.Server):
    """A kata's hidden suite collected once in a server process (this file as a pytest plugin),
    forked for each mutant; `grade` blocks until the fork has ended."""

    def __init__(self, kata: catalog.Kata, log: Path) -> None:
        args = [str(kata.suite_dir), "--impl=solution", "--kata-via=none", "-q", "-s",
                "-p", "tools.mutation", "-p", "no:cacheprovider", "-p", "no:unraisableexception",
                "-W", "ignore::pytest.PytestAssertRewriteWarning"]
        super().__init__([sys.executable, "-m", "pytest", *args], catalog.ROOT,
                         f"mutation server of {kata.name}", stderr=subprocess.DEVNULL)
        self.kata, self.log = kata, log
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the {self.name} did not start (exit {self.proc.wait()})")

    def grade(self, mutant: Mutant, tests: list[str], timeout: float | None,
              limit: float) -> tuple[str, str]:
        """(outcome, note) of one mutant: killed or survived."""
        impl = self.log.with_name(f"{mutant.job_id}.py")
        impl.write_text(mutant.text, encoding="utf-8")
        try:
            code = self.ask({"impl": str(impl), "tests": tests, "timeout": timeout,
                             "log": str(self.log), "limit": limit})
        finally:
            impl.unlink()
        if code is None:
            return "killed", f"stopped at the {limit:g} s limit"
        if code == KILLED:
            return "killed", ""
        if code == 0:
            return "survived", ""
        output = self.log.read_text(encoding="utf-8", errors="replace")
        raise RuntimeError(f"grading {mutant.job_id} crashed (exit {code}):\n{output[-2000:]}")


KILLED = 10  # a fork's exit code when a test failed; 1 is left to a crash


PROTOCOL: list[int] = []  # a server's answers: its stdout as it was started


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """In a server (`-p tools.mutation`): keep stdout for the protocol, and let Hypothesis stop
    at the first failing example. A mutant needs a verdict, not the smallest example."""
    from hypothesis import Phase, settings

    PROTOCOL.append(os.dup(1))
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    settings.register_profile("mutation", settings.get_profile("grading"),
                              phases=[Phase.explicit, Phase.generate])
    settings.load_profile("mutation")


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool:
    """Serve gradings instead of running the suite: one JSON line in, one out."""
    return forkserver.serve_forks(PROTOCOL[0], functools.partial(_grade, session))


def _grade(session: pytest.Session, request: dict) -> int:
    """In a fork: run the requested tests in their order until one fails."""
    from harness import plugin

    config = session.config
    config.option.impl = request["impl"]
    config.option.kata_title = []
    config.option.kata_timeout = request["timeout"]
    config.option.maxfail = 1
    grader = plugin.Grader.fresh(config)
    order = {test: n for n, test in enumerate(request["tests"])}
    items = [item for item in session.items if item.nodeid in order]
    grader.pytest_collection_modifyitems(session, config, items)  # loads the mutant
    items.sort(key=lambda item: order.get(item.nodeid, -1))  # a file that does not import: first
    session.items, session.testsfailed, session.shouldfail = items, 0, False
    for n, item in enumerate(items):
        item.config.hook.pytest_runtest_protocol(
            item=item, nextitem=items[n + 1] if n + 1 < len(items) else None)
        if session.testsfailed or session.shouldfail or session.shouldstop:
            break
    return KILLED if session.testsfailed else 0


def run(kata: catalog.Kata, *, scratch: Path = SCRATCH, jobs: int = 1, limit: float = LIMIT,
        all_operators: bool = False, recheck: bool = False, minutes: float | None = None,
        test_timeout: float | None = None, log=print) -> Summary:
    """Mutate a scratch copy of the reference and grade every mutant with the hidden tests that
    can see it.

    `recheck` keeps the last session and grades its survivors and ungraded mutants again (after
    new tests or new equivalent.toml entries), instead of starting over. `minutes` stops grading
    after that long; the mutants are graded in a fixed shuffled order, so a partial run is a
    fair sample, and `--recheck` goes on where it stopped.
    """
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

    start = time.monotonic()
    copy = _scratch_copy(kata, scratch)
    session = copy.parent / "session.sqlite"
    source = kata.solution_path.read_text(encoding="utf-8")
    if recheck and not (session.is_file() and copy.read_text(encoding="utf-8") == source):
        log(f"{kata.name}: no session for this reference yet; starting over")
        recheck = False
    if not recheck:
        session = _init(kata, copy)
    seen = coverage(kata, copy)
    log(f"{kata.name}: coverage of {len(seen['lines'])} tests in "
        f"{time.monotonic() - start:.0f} s")

    listed = load_equivalents(kata)
    tree = ast.parse(source)
    tests_at = functools.cache(lambda line: tests_for(tree, line, seen))  # many mutants a line
    lines = source.splitlines()
    annotations = annotation_spans(tree)
    summary = Summary(kata.name, recheck=recheck)
    todo: list[tuple[Mutant, list[str] | None]] = []
    with use_db(str(session), WorkDB.Mode.open) as db:
        results = dict(db.results)
        items = [item for item in db.work_items
                 if all_operators or not NOISE.match(item.mutations[0].operator_name)]
        if not db.num_work_items:  # an init that was interrupted leaves an empty session
            raise SystemExit(f"{kata.name}: the session lists no mutants; run without --recheck")
        summary.filtered = db.num_work_items - len(items)
        texts = mutated_texts(source, items)
        for item in items:
            spec = item.mutations[0]
            text = texts[item.job_id]
            diff = unified_diff(source, text)
            mutant = Mutant(item.job_id, spec.operator_name, spec.start_pos[0], diff, text)
            summary.mutants.append(mutant)
            above = lines[spec.start_pos[0] - 2].strip() if spec.start_pos[0] > 1 else ""
            reason = next((e.reason for e in listed if (e.old, e.new) == changed_lines(diff)
                           and e.after in (None, above)), None)
            if any(a <= tuple(spec.start_pos) < b for a, b in annotations):
                reason = ANNOTATION
            previous = results.get(item.job_id)
            if reason is not None:
                mutant.outcome, mutant.note = "equivalent", reason
            elif (invalid := _invalid(text)) is not None:
                mutant.outcome, mutant.note = "invalid", invalid
            elif previous is not None and previous.test_outcome == TestOutcome.KILLED:
                mutant.outcome, mutant.note = "killed", previous.output or ""
            else:  # never graded, or survived last time
                tests = tests_at(mutant.line)
                if tests:
                    todo.append((mutant, tests))
                else:
                    mutant.outcome, mutant.note = "survived", "no hidden test executes this line"
        random.Random(0).shuffle(todo)
        _grade_all(kata, todo, copy.parent, jobs=jobs, limit=limit, test_timeout=test_timeout,
                   deadline=None if minutes is None else start + 60 * minutes, log=log)
        for m in summary.mutants:  # what --recheck starts from
            if m.outcome in ("killed", "survived"):
                db.set_result(m.job_id, WorkResult(
                    output=m.note, worker_outcome=WorkerOutcome.NORMAL,
                    test_outcome=TestOutcome[m.outcome.upper()]))
    summary.seconds = time.monotonic() - start
    (copy.parent / "report.md").write_text(report(summary), encoding="utf-8")
    return summary


def _invalid(text: str) -> str | None:
    """Why cosmic-ray's text is not a Python module, or None."""
    try:
        compile(text, "mutant", "exec")
    except SyntaxError as exc:
        return f"not Python: {exc.msg} (line {exc.lineno})"
    return None


def _grade_all(kata: catalog.Kata, todo: list, folder: Path, *, jobs: int, limit: float,
               test_timeout: float | None, deadline: float | None, log) -> None:
    """Grade `todo` on `jobs` forked suites at once, each mutant's outcome set in place."""
    if not todo:
        return
    work: queue.Queue = queue.Queue()
    for n, entry in enumerate(todo, 1):
        work.put((n, *entry))
    lock = threading.Lock()

    def worker(suite: Suite) -> None:
        while True:
            try:
                n, mutant, tests = work.get_nowait()
            except queue.Empty:
                return
            if deadline is not None and time.monotonic() > deadline:
                continue  # left pending: --recheck goes on from here
            mutant.outcome, mutant.note = suite.grade(mutant, tests, test_timeout, limit)
            with lock:
                log(f"{kata.name} [{n}/{len(todo)}] {mutant.outcome:<8} line {mutant.line:<4} "
                    f"{mutant.operator} ({len(tests)} tests)")

    suites = [Suite(kata, folder / f"job{j}.log") for j in range(min(jobs, len(todo)))]
    threads = [threading.Thread(target=worker, args=(s,)) for s in suites]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for suite in suites:
        suite.close()


def report(summary: Summary) -> str:
    lines = [f"# Mutation testing: {summary.kata}", "",
             f"{len(summary.mutants)} mutants ({summary.filtered} bitwise/shift replacements of "
             f"arithmetic left out): {summary.count('killed')} killed, "
             f"{summary.count('survived')} survived, {summary.count('equivalent')} equivalent, "
             f"{summary.count('invalid')} did not run (not Python), "
             f"{summary.count('pending')} not graded yet; score {summary.score}; "
             f"{summary.seconds:.0f} s.", ""]
    for outcome in ("survived", "invalid", "equivalent"):
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


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def save_table(summary: Summary | None, out: Path, jobs: int = 1) -> None:
    """Adds or replaces this kata's row of `out/mutation.md`, the Benchmarks page's table, and
    brings every row's "rules covered" up to date (`summary=None`: only that column)."""
    path = out / TABLE
    rows: dict[str, dict[str, str]] = {}
    notes: dict[str, str] = {}
    if path.is_file():
        header: list[str] = []
        for line in path.read_text(encoding="utf-8").splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("| kata |"):
                header = cells
            elif line.startswith("| ") and cells[0] != "---" and header:
                rows[cells[0]] = dict(zip(header, cells, strict=False))
            elif line.startswith("- `") and ": " in line:
                name, note = line[2:].split(": ", 1)
                notes[name] = note
    if summary is not None:
        graded = len(summary.mutants) - summary.count("pending")
        size = f"{graded} of {len(summary.mutants)}" if graded < len(summary.mutants) else graded
        how = f"{jobs} job{'s' * (jobs != 1)}" + (", a recheck" if summary.recheck else "")
        cells = [f"`{summary.kata}`", size, summary.count("killed"),
                 summary.count("survived"), summary.count("equivalent"),
                 summary.count("invalid"), summary.score,
                 f"{_minutes(summary.seconds)} ({how})", date.today().isoformat()]
        rows[f"`{summary.kata}`"] = dict(zip(COLUMNS, map(str, cells), strict=False))
        invalid = [m for m in summary.mutants if m.outcome == "invalid"]
        reasons = sorted({m.note for m in invalid})
        notes[f"`{summary.kata}`"] = (
            "; ".join(f"{sum(m.note == r for m in invalid)} × {r}" for r in reasons)
            if invalid else "none")
    for kata in catalog.all_katas():
        row = rows.setdefault(f"`{kata.name}`", {"kata": f"`{kata.name}`"})
        row["rules covered"] = rules_covered(kata)
    order = [f"`{k.name}`" for k in catalog.all_katas()]
    ranked = sorted(rows, key=lambda k: (order.index(k) if k in order else len(order), k))
    path.write_text(
        "# Mutation testing: hidden suites\n\n"
        "Each kata's reference mutated by cosmic-ray 8.7.0 and graded by its hidden suite "
        "(`make mutation`, `tools/mutation.py`): each mutant runs only the hidden tests that "
        "execute its statement (coverage per test), stops at the first failure, and the jobs "
        f"run in parallel; {os.cpu_count()}-core {os.uname().machine} CPU shared with other "
        "work, so times are upper bounds. \"Rules covered\" counts the prompt's rules that a "
        "named mutant breaks and its hidden tests catch (`kata mutants KATA --rules`); \"—\": "
        "not mutated yet.\n\n"
        "| " + " | ".join(COLUMNS) + " |\n|" + " --- |" * len(COLUMNS) + "\n"
        + "\n".join("| " + " | ".join(rows[k].get(c, "—") for c in COLUMNS) + " |"
                    for k in ranked) + "\n\n"
        "Mutants that did not run: cosmic-ray's text that is not Python, so there is nothing to "
        "grade: the `*` of a keyword-only signature or a `**` unpacking replaced as if it were "
        "arithmetic, or `~x` turned into `not x` inside an expression (each is listed in the "
        "kata's report under /tmp/mutation):\n\n"
        + "\n".join(f"- {k}: {notes[k]}" for k in ranked if k in notes) + "\n",
        encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--trace"]:
        return _trace_main(*argv[1:])
    parser = argparse.ArgumentParser(prog="python tools/mutation.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("katas", nargs="*", help="katas to mutate (default: every kata)")
    parser.add_argument("--out", type=Path, help="folder for the summary table (docs/benchmarks)")
    parser.add_argument("--scratch", type=Path, default=SCRATCH, help="outside the repository")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="mutants graded at once (default: one per core)")
    parser.add_argument("--limit", type=float, default=LIMIT, help="seconds per mutant")
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
        summary = run(kata, scratch=args.scratch, jobs=args.jobs, limit=args.limit,
                      all_operators=args.all_operators, recheck=args.recheck,
                      minutes=args.minutes, test_timeout=args.kata_timeout)
        print(report(summary).split("\n\n")[1])
        print(f"report: {args.scratch / kata.name / 'report.md'}")
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            save_table(summary, args.out, args.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
