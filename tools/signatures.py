"""Compute the failure signatures of every named mutant (harness/signatures.py), or report how
well they tell the mistakes apart (harness/diagnosis.py).

    python tools/signatures.py                 # recompute the stale katas' signatures.toml
    python tools/signatures.py auc_roc --all   # recompute these katas even if current
    python tools/signatures.py --report        # top-1 diagnosis rate per kata, from the files

Each mutant is graded on the whole hidden suite in a fork of the kata's collected suite
(tests/forkserver.py): about a thousand mutants, so run it niced (`nice -n 15`).
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # the forking grader lives with the tests

import forkserver  # noqa: E402

from harness import catalog, diagnosis, mutants, signatures  # noqa: E402


class Calls:
    """A pytest plugin: which functions of the reference each test enters (nodeid -> the first
    lines of their code), traced on every thread the test starts."""

    def __init__(self, reference: Path) -> None:
        self.reference = str(reference)
        self.entered: dict[str, set[int]] = {}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        seen = self.entered.setdefault(item.nodeid, set())
        forkserver.clear_caches(item.path.parent)

        def trace(frame, event, arg):  # 'call' events only: nothing traced line by line
            if frame.f_code.co_filename == self.reference:
                seen.add(frame.f_code.co_firstlineno)

        sys.setprofile(trace)
        threading.setprofile(trace)
        try:
            return (yield)
        finally:
            sys.setprofile(None)
            threading.setprofile(None)


def entered(kata: catalog.Kata) -> dict[str, set[int]]:
    """nodeid -> the reference's functions it enters, from a pytest run in a child process."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "calls.json"
        subprocess.run([sys.executable, __file__, "--trace", kata.name, str(out)],
                       cwd=catalog.ROOT, check=True, stdout=subprocess.DEVNULL)
        return {k: set(v) for k, v in json.loads(out.read_text()).items()}


def trace(kata_name: str, out: str) -> int:
    kata = catalog.get(kata_name)
    calls = Calls(kata.solution_path.resolve())
    pytest.main([str(kata.suite_dir), "--impl=solution", "--kata-via=none", "-q",
                 "-p", "no:cacheprovider"], plugins=[calls])
    Path(out).write_text(json.dumps({k: sorted(v) for k, v in calls.entered.items()}))
    return 0


def functions(source: str) -> list[tuple[int, int, int]]:
    """(first line of its code, first line of its body, last line) of every function."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            found.append((first, node.body[0].lineno, node.end_lineno))
    return found


def seen_by(kata: catalog.Kata, mutant: mutants.Mutant, tests: dict[str, set[int]],
            titles: dict[str, str]) -> set[str] | None:
    """The titles of the tests that enter a function the mutant edits; None (every test) when an
    edit lies outside any function body (a default, a class attribute, a module constant)."""
    text = mutants.reference(kata)
    spans = functions(text)
    chosen: set[str] = set()
    for edit in mutant.edits:
        if text.count(edit.old) != 1:  # an edit of an earlier edit's text: stay safe
            return None
        start = text[: text.index(edit.old)].count("\n") + 1
        end = start + edit.old.count("\n")
        inside = [f for f in spans if f[1] <= start and end <= f[2]]
        if not inside:
            return None
        first = max(inside, key=lambda f: f[1])[0]  # the innermost function holding the edit
        chosen |= {titles[node] for node, entered in tests.items()
                   if first in entered and node in titles}
    return chosen or None


def compute(kata: catalog.Kata) -> signatures.Signatures:
    """Grade the reference (every title and level), then each mutant on the hidden tests that
    enter a function it edits (a test that never runs the edited code passes as the reference
    does): the whole suite's failures at a fraction of the cost."""
    fingerprint = signatures.fingerprint(kata)  # before grading: an edit meanwhile makes it stale
    reference, _ = forkserver.grade_collected(kata, "solution", [], exitfirst=False)
    slow = failing(kata, "solution", reference, None)
    if slow:
        raise SystemExit(f"{kata.name}: the reference fails {sorted(slow)} twice")
    tests = {r.title: r.level for r in reference.results}
    titles = {r.nodeid: r.title for r in reference.results}
    calls = entered(kata)
    found: dict[str, frozenset[str]] = {}
    for mutant in mutants.load(kata):
        seen = seen_by(kata, mutant, calls, titles)
        chosen = [t for t in tests if t in seen] if seen is not None else []
        impl = f"mutant:{mutant.name}"
        for _ in range(2):  # every mutant is caught by its caught_by: nothing failing is a fluke
            run, _ = forkserver.grade_collected(kata, impl, chosen, exitfirst=False,
                                             timeout=mutant.time_limit)
            found[mutant.name] = failing(kata, impl, run, mutant.time_limit)
            if found[mutant.name]:
                break
        else:
            raise SystemExit(f"{kata.name}: mutant {mutant.name} failed no test, twice")
        print(f"  {mutant.name}: {len(found[mutant.name])} of {len(chosen) or len(tests)} "
              "graded tests fail", flush=True)
    return signatures.Signatures(fingerprint, tests, found)


def _string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a TOML basic string


def dump(sigs: signatures.Signatures) -> str:
    """signatures.toml's text: titles in the suite's order, mutants in the order given."""
    order = {title: i for i, title in enumerate(sigs.tests)}
    lines = ["# Computed by tools/signatures.py from the collected grader: do not edit.",
             f"fingerprint = {_string(sigs.fingerprint)}", "", "[tests]"]
    lines += [f"{_string(title)} = {level}" for title, level in sigs.tests.items()]
    lines += ["", "[signatures]"]
    for name, titles in sigs.signatures.items():
        ordered = sorted(titles, key=order.__getitem__)
        if not ordered:
            lines.append(f"{name} = []")
            continue
        lines.append(f"{name} = [")
        lines += [f"  {_string(t)}," for t in ordered]
        lines.append("]")
    return "\n".join(lines) + "\n"


def failing(kata: catalog.Kata, impl: str, run, limit: float | None) -> frozenset[str]:
    """The titles `run` failed. A failure that only the clock gave (a timeout, a test left out
    after a hang) may be the load of the machine: such tests run once more, on their own (the
    reference with RETRY seconds each, a mutant with the tests' own limits or its time_limit),
    and count only if they fail again, so that a signature depends less on what else runs."""
    failed = {r.title for r in run.results if r.failed}
    timed = sorted({r.title for r in run.results if r.failed and r.verdict.startswith(CLOCK)})
    if timed:  # the reference gets RETRY s a test; a mutant its own limits, which it must meet
        again, _ = forkserver.grade_collected(kata, impl, timed, exitfirst=False,
                                           timeout=limit or (RETRY if impl == "solution" else None))
        failed -= set(timed) - {r.title for r in again.results if r.failed}
    return frozenset(failed)


RETRY = 90.0  # seconds per test when a clock failure is graded again: far above any test's own


CLOCK = ("timed out", "not run", "wrong answer (a failing example was found; time ran out")


def report(katas: list[catalog.Kata]) -> int:
    """Print each kata's top-1 rate; 1 when a kata has no current signatures."""
    code = 0
    for kata in katas:
        why = signatures.stale(kata)
        if why:
            print(f"{kata.name:<26} stale: {why}")
            code = 1
            continue
        rate = diagnosis.top1(kata)
        missed = ", ".join(f"{m} -> {g}" for m, g in rate.missed)
        print(f"{kata.name:<26} top-1 {rate.hits:>3}/{rate.total:<3} {rate.share:6.1%}"
              + (f"   missed: {missed}" if missed else ""))
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("katas", nargs="*", help="katas to compute (default: every kata)")
    parser.add_argument("--all", action="store_true", help="recompute even current files")
    parser.add_argument("--report", action="store_true", help="print the top-1 rate per kata")
    parser.add_argument("--trace", nargs=2, metavar=("KATA", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_intermixed_args(argv)
    if args.trace:  # the child process of `entered`
        return trace(*args.trace)
    katas = [catalog.get(n) for n in args.katas] or catalog.all_katas()
    if args.report:
        return report(katas)
    for kata in katas:
        if not args.all and signatures.stale(kata) is None:
            print(f"{kata.name}: current")
            continue
        start = time.monotonic()
        sigs = compute(kata)
        signatures.path(kata).write_text(dump(sigs), encoding="utf-8")
        print(f"{kata.name}: {len(sigs.signatures)} mutants in "
              f"{time.monotonic() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
