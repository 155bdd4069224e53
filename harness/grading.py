"""Grade an implementation in a child pytest process, so nothing it does can take the CLI down."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

from harness import catalog
from harness.collected import Collected
from harness.results import KataRun, read_json
from harness.warm import Warm
from harness.words import say

RUN_SECONDS = 900  # a last line of defence: per-test limits should end every run long before


class GradingError(Exception):
    """The grader itself could not produce results."""


def pytest_command(kata: catalog.Kata, impl: str, *extra: str, hidden_only=False) -> list[str]:
    target = kata.suite_dir if hidden_only else kata.folder
    return [sys.executable, "-m", "pytest", str(target), f"--impl={impl}", *extra]


@cache
def _warm() -> Warm:
    return Warm(catalog.ROOT)


@cache
def _collected(name: str) -> Collected:
    return Collected(catalog.get(name))


def grade_collected(kata: catalog.Kata, impl: str, titles: list[str], *, exitfirst: bool = True,
                    timeout: float | None = None) -> tuple[KataRun, str]:
    """The hidden tests with `titles` (none: all of them), graded in a fork of the kata's
    collected suite (harness.collected): a tenth of a second where a pytest run takes more than
    twice that, for the meta-tests' hundreds of mutants. `timeout` caps every test's limit."""
    with tempfile.TemporaryDirectory() as tmp:
        report, log = Path(tmp) / "results.json", Path(tmp) / "output.txt"
        request = {"impl": kata.impl_arg(impl), "titles": titles, "exitfirst": exitfirst,
                   "timeout": timeout, "json": str(report), "log": str(log),
                   "limit": RUN_SECONDS}
        code = _collected(kata.name).ask(request)
        output = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        return _result(kata, report, code, output), output


def _result(kata: catalog.Kata, report: Path, code: int | None, output: str) -> KataRun:
    """The kata's run in a grading's results file; GradingError where there is none."""
    if not report.exists():
        if code is None:
            raise GradingError(say("grade.took_too_long", kata=kata.name, seconds=RUN_SECONDS))
        raise GradingError(say("grade.no_results", code=code, output=output[-4000:]))
    run = next((r for r in read_json(report) if r.kata == kata.name), None)
    if run is None:
        raise GradingError(say("grade.no_results_for", kata=kata.name))
    return run


def _run(cmd: list[str], tmp: Path, warm: bool) -> tuple[int | None, str]:
    """pytest's exit code (None: stopped at RUN_SECONDS) and output, from a child process or a
    fork of the warm grader."""
    if warm:
        log = tmp / "output.txt"
        code = _warm().run(cmd[3:], log, RUN_SECONDS)  # cmd[:3] is `python -m pytest`
        return code, log.read_text(encoding="utf-8", errors="replace")
    try:
        proc = subprocess.run(cmd, cwd=catalog.ROOT, capture_output=True, text=True,
                              timeout=RUN_SECONDS)
    except subprocess.TimeoutExpired:
        return None, ""
    return proc.returncode, proc.stdout + proc.stderr


def grade(kata: catalog.Kata, impl: str = "stub", *extra: str, hidden_only: bool = False,
          warm: bool = False, via: str = "none") -> tuple[KataRun, str]:
    """Run the kata's examples and hidden suite; return the results and pytest's output.

    `via`: how a full run of the learner's file is recorded in the progress store (`grade`,
    `mock`), or `none`. `warm`: fork the run from a grader that has its libraries imported
    already (harness.warm), a second faster for each of many gradings in one process, such as
    the meta-tests'."""
    impl = kata.impl_arg(impl)
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "results.json"
        cmd = pytest_command(kata, impl, f"--kata-json={report}", f"--kata-via={via}", "-q",
                             "--no-header", *extra, hidden_only=hidden_only)
        code, output = _run(cmd, Path(tmp), warm)
        run = _result(kata, report, code, output)
    run.impl = impl
    if run.file is None:  # a checkout's older plugin does not say which file it graded
        run.file = str(kata.impl_path(impl)) if impl in ("stub", "solution") else impl
    return run, output
