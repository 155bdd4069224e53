"""A warm grader: one process imports pytest, Hypothesis, NumPy, pandas (and torch, where it is
installed) once, then forks a fresh child for each pytest run it is asked for.

Grading hundreds of mutants one child process each spends most of every run importing the same
libraries (1.2 s of a 1.7 s run). A forked child starts with them loaded, yet shares nothing with
its siblings: threads a mutant leaves running, module state and a hang all end with its child.
The server is single-threaded apart from the libraries' idle pools, so forking it is safe.

Protocol: one JSON line per run on stdin, `{"args": [...pytest args], "log": path, "timeout": s}`;
the server answers one line, `{"code": exit code}` after the child has ended, `{"code": null}` if it
was killed at `timeout`.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

POLL = 0.02


class Server:
    """A server process spoken to in JSON lines: each request blocks until its one-line answer."""

    def __init__(self, argv: list[str], root: Path, name: str, **popen) -> None:
        self.name = name
        self.proc = subprocess.Popen(argv, cwd=root, text=True, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, **popen)
        atexit.register(self.close)

    def ask(self, request: dict) -> int | None:
        """The answer's exit code, None where the server killed its child at the limit."""
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError(f"the {self.name} died (exit {self.proc.wait()})")
        return json.loads(answer)["code"]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()


class Warm(Server):
    """A warm grader process; `run` blocks until the pytest run it asked for has ended."""

    def __init__(self, root: Path) -> None:
        super().__init__([sys.executable, "-m", "harness.warm"], root, "warm grader")

    def run(self, args: list[str], log: Path, timeout: float) -> int | None:
        """pytest's exit code, or None if the run was killed at `timeout` seconds."""
        return self.ask({"args": args, "log": str(log), "timeout": timeout})


def child(log: str, grade: Callable[[], int]) -> None:
    """In a fork: `grade()`'s output to `log`, nothing read from the server's pipe, then exit
    with its code (1 if it raised)."""
    out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(out, 1)
    os.dup2(out, 2)
    code = 1
    try:
        code = grade()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _pytest(args: list[str]) -> int:
    import pytest

    # The preloaded modules cannot be assertion-rewritten. pytest's unraisable-exception check
    # ends each session with rounds of gc.collect over torch's and pandas' heap: most of a
    # child's second; it reports warnings, never a verdict.
    return int(pytest.main([*args, "-W", "ignore::pytest.PytestAssertRewriteWarning",
                            "-p", "no:unraisableexception"]))


def wait(pid: int, timeout: float) -> int | None:
    """The exit code of child `pid`, or None once it has been killed at `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(POLL)


# Imported once, inherited by every child: the libraries the suites import, where installed.
PRELOAD = ("numpy", "pandas", "hypothesis", "pytest", "harness.plugin", "sklearn.metrics", "torch")


def preload_suite(args: list[str]) -> None:
    """Read a kata's files and import its hidden suite before forking for it (once per server),
    so each grading of it only collects. Imported here, the suite skips pytest's assertion
    rewriting: a failed assert is still a failure, only without pytest's explanation of it."""
    from harness import catalog, mutants, rules

    kata = catalog.kata_for_path(Path(args[0])) if args else None
    if kata is None or kata.name in SUITES:
        return
    SUITES.add(kata.name)
    try:
        kata.meta, mutants.load(kata), rules.load(kata)  # parsed once (harness.tomlfile)
        for test in sorted(kata.suite_dir.glob("test_*.py")):
            importlib.import_module(f"harness.suites.{kata.name}.{test.stem}")
    except Exception:  # the child reports a broken kata as pytest does
        pass
    try:  # Hypothesis scans every new local module for constants once: here, not per child
        from hypothesis.internal.conjecture.providers import _get_local_constants

        _get_local_constants()
    except Exception:  # an internal that moved in a later Hypothesis: only slower
        pass


SUITES: set[str] = set()


def serve() -> None:
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    for line in sys.stdin:
        request = json.loads(line)
        preload_suite(request["args"])
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            child(request["log"], partial(_pytest, request["args"]))
        code = wait(pid, request["timeout"])
        sys.stdout.write(json.dumps({"code": code}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
