"""Grade an implementation in a child pytest process, so nothing it does can take the CLI down."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from harness import catalog
from harness.results import KataRun, read_json

RUN_SECONDS = 900  # a last line of defence: per-test limits should end every run long before


class GradingError(Exception):
    """The grader itself could not produce results."""


def pytest_command(kata: catalog.Kata, impl: str, *extra: str, hidden_only=False) -> list[str]:
    target = kata.suite_dir if hidden_only else kata.folder
    return [sys.executable, "-m", "pytest", str(target), f"--impl={impl}", *extra]


def grade(kata: catalog.Kata, impl: str = "stub", *extra: str,
          hidden_only: bool = False) -> tuple[KataRun, str]:
    """Run the kata's examples and hidden suite; return the results and pytest's output."""
    impl = kata.impl_arg(impl)
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "results.json"
        cmd = pytest_command(kata, impl, f"--kata-json={report}", "-q", "--no-header", *extra,
                             hidden_only=hidden_only)
        try:
            proc = subprocess.run(cmd, cwd=catalog.ROOT, capture_output=True, text=True,
                                  timeout=RUN_SECONDS)
        except subprocess.TimeoutExpired as exc:
            raise GradingError(f"grading {kata.name} took over {RUN_SECONDS} s and was stopped") \
                from exc
        if not report.exists():
            raise GradingError(f"pytest produced no results (exit {proc.returncode}):\n"
                               f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
        runs = read_json(report)
    run = next((r for r in runs if r.kata == kata.name), None)
    if run is None:
        raise GradingError(f"no results for {kata.name}")
    run.impl = impl
    if run.file is None:  # a checkout's older plugin does not say which file it graded
        run.file = str(kata.impl_path(impl)) if impl in ("stub", "solution") else impl
    return run, proc.stdout + proc.stderr
