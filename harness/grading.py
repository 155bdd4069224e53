"""Grade an implementation in a child pytest process, so nothing it does can take the CLI down."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from harness import catalog
from harness.results import KataRun, read_json
from harness.words import say

Runner = Callable[[list[str], Path], tuple[int | None, str]]
RUN_SECONDS = 900  # a last line of defence: per-test limits should end every run long before


class GradingError(Exception):
    """The grader itself could not produce results."""


def pytest_command(kata: catalog.Kata, impl: str, *extra: str, hidden_only=False) -> list[str]:
    target = kata.suite_dir if hidden_only else kata.folder
    return [sys.executable, "-m", "pytest", str(target), f"--impl={impl}", *extra]


def result(kata: catalog.Kata, report: Path, code: int | None, output: str) -> KataRun:
    """The kata's run in a grading's results file; GradingError where there is none."""
    if not report.exists():
        if code is None:
            raise GradingError(say("grade.took_too_long", kata=kata.name, seconds=RUN_SECONDS))
        raise GradingError(say("grade.no_results", code=code, output=output[-4000:]))
    run = next((r for r in read_json(report) if r.kata == kata.name), None)
    if run is None:
        raise GradingError(say("grade.no_results_for", kata=kata.name))
    return run


def _child(cmd: list[str], tmp: Path) -> tuple[int | None, str]:
    """pytest's exit code (None: stopped at RUN_SECONDS) and output, from a child process."""
    try:
        proc = subprocess.run(cmd, cwd=catalog.ROOT, capture_output=True, text=True,
                              timeout=RUN_SECONDS)
    except subprocess.TimeoutExpired:
        return None, ""
    return proc.returncode, proc.stdout + proc.stderr


def grade(kata: catalog.Kata, impl: str = "stub", *extra: str, hidden_only: bool = False,
          via: str = "none", lang: str | None = None, run: Runner = _child) -> tuple[KataRun, str]:
    """Run the kata's examples and hidden suite; return the results and pytest's output.

    `via`: how a full run of the learner's file is recorded in the progress store (`grade`,
    `mock`), or `none`. `lang`: the language it speaks (default: the learner's). `run`: what
    runs the pytest command (the project's tests fork it from a warm server, forkserver.py)."""
    impl = kata.impl_arg(impl)
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "results.json"
        cmd = pytest_command(kata, impl, f"--kata-json={report}", f"--kata-via={via}", "-q",
                             "--no-header", *([f"--kata-lang={lang}"] if lang else []), *extra,
                             hidden_only=hidden_only)
        code, output = run(cmd, Path(tmp))
        found = result(kata, report, code, output)
    found.impl = impl
    if found.file is None:  # a checkout's older plugin does not say which file it graded
        found.file = str(kata.impl_path(impl)) if impl in ("stub", "solution") else impl
    return found, output
