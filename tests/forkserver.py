"""The project's own fast graders, for its meta-tests (learners never run them): a server process
that has paid its start-up once forks a fresh child per grading.

Grading hundreds of mutants one child process each spends most of every run importing the same
libraries (1.2 s of a 1.7 s run). A forked child starts with them loaded, yet shares nothing with
its siblings: threads a mutant leaves running, module state and a hang all end with its child.
The server is single-threaded apart from the libraries' idle pools, so forking it is safe.

It serves in one of two ways. `Warm` (this file run as a script) has the libraries imported and
forks a whole pytest run per request. `Collected` (pytest with `-p forkserver`) has one kata's
hidden suite collected, and forks that session per grading: it sets the grading's `--impl`,
titles and limits, runs the tests they select through pytest's own protocol (the grader's hooks,
time limits and verdicts included) and writes the results as `--kata-json` would: a tenth of a
second where a pytest run takes more than twice that.

Protocol: one JSON line per request on stdin; one line back, `{"code": exit code}` once the child
has ended, `{"code": null}` if it was killed at its time limit. A warm request is `{"args":
[...pytest args], "log", "timeout"}`, a collected one `{"impl", "titles", "exitfirst",
"timeout", "json", "log", "limit"}`.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import cache, partial
from pathlib import Path

import pytest

from harness import catalog, grading, plugin
from harness.results import KataRun, write_json

POLL = 0.02
HERE = Path(__file__).resolve().parent


class Server:
    """A server process spoken to in JSON lines: each request blocks until its one-line answer."""

    def __init__(self, argv: list[str], root: Path, name: str, **popen) -> None:
        self.name = name
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(HERE), *filter(None, [os.environ.get("PYTHONPATH")])])}  # `-p forkserver`
        self.proc = subprocess.Popen(argv, cwd=root, text=True, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, **popen)
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
        super().__init__([sys.executable, __file__], root, "warm grader")

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


class Collected(Server):
    """A kata's collected suite in a server process; `ask` blocks until its fork has ended."""

    def __init__(self, kata: catalog.Kata) -> None:
        args = [str(kata.suite_dir), "--impl=solution", "--kata-via=none", "-q", "-s",
                "-p", "forkserver", "-p", "no:cacheprovider",
                "-p", "no:unraisableexception", "-W", "ignore::pytest.PytestAssertRewriteWarning"]
        super().__init__([sys.executable, "-m", "pytest", *args], catalog.ROOT,
                         f"collected grader of {kata.name}", stderr=subprocess.DEVNULL)
        ready = self.proc.stdout.readline()  # the server says so once it has collected
        if ready.strip() != "ready":
            raise RuntimeError(f"the {self.name} did not start (exit {self.proc.wait()})")


PROTOCOL: list[int] = []  # the collected server's answers: its stdout as it was started


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Keep stdout for the protocol and send pytest's own reporting elsewhere (`-s`: nothing
    captured the descriptor before this)."""
    PROTOCOL.append(os.dup(1))
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool:
    """Serve gradings instead of running the suite."""
    return serve_forks(PROTOCOL[0], partial(_grade, session))


def clear_caches(folder: Path) -> None:
    """Empty the functools caches of the modules loaded from `folder`. A tracer calls it before
    each test: a helper cached on the learner's code runs that code in the first test that asks
    only, and a later test reading the cache would look as if it never entered that code."""
    for module in list(sys.modules.values()):
        if (getattr(module, "__file__", None) or "").startswith(str(folder)):
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


def serve_forks(out: int, grade: Callable[[dict], int]) -> bool:
    """One JSON request a line on stdin, each graded by `grade` in a fork of this process; one
    JSON line back on `out` with its exit code. tools/mutation.py serves its mutants this way."""
    os.write(out, b"ready\n")
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            child(request["log"], partial(grade, request))
        os.write(out, (json.dumps({"code": wait(pid, request["limit"])}) + "\n").encode())
    return True


def _grade(session: pytest.Session, request: dict) -> int:
    config = session.config
    config.option.impl = request["impl"]
    config.option.kata_title = request["titles"]
    config.option.kata_timeout = request["timeout"]
    config.option.maxfail = 1 if request["exitfirst"] else 0
    grader = plugin.Grader.fresh(config)
    items = list(session.items)
    grader.pytest_collection_modifyitems(session, config, items)
    session.items, session.testsfailed, session.shouldfail = items, 0, False
    try:
        for i, item in enumerate(items):
            nextitem = items[i + 1] if i + 1 < len(items) else None
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            if session.shouldfail or session.shouldstop:
                break
    finally:
        write_json(list(grader.runs.values()), Path(request["json"]))
    return 1 if session.testsfailed else 0


@cache
def _warm() -> Warm:
    return Warm(catalog.ROOT)


@cache
def _collected(name: str) -> Collected:
    return Collected(catalog.get(name))


def _run_warm(cmd: list[str], tmp: Path) -> tuple[int | None, str]:
    log = tmp / "output.txt"
    code = _warm().run(cmd[3:], log, grading.RUN_SECONDS)  # cmd[:3] is `python -m pytest`
    return code, log.read_text(encoding="utf-8", errors="replace")


def grade(kata: catalog.Kata, impl: str = "stub", *extra: str,
          hidden_only: bool = False) -> tuple[KataRun, str]:
    """grading.grade, forked from the warm grader: a second faster for each of many gradings."""
    return grading.grade(kata, impl, *extra, hidden_only=hidden_only, run=_run_warm)


def grade_collected(kata: catalog.Kata, impl: str, titles: list[str], *, exitfirst: bool = True,
                    timeout: float | None = None) -> tuple[KataRun, str]:
    """The hidden tests with `titles` (none: all of them), graded in a fork of the kata's
    collected suite. `timeout` caps every test's limit."""
    with tempfile.TemporaryDirectory() as tmp:
        report, log = Path(tmp) / "results.json", Path(tmp) / "output.txt"
        request = {"impl": kata.impl_arg(impl), "titles": titles, "exitfirst": exitfirst,
                   "timeout": timeout, "json": str(report), "log": str(log),
                   "limit": grading.RUN_SECONDS}
        code = _collected(kata.name).ask(request)
        output = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        return grading.result(kata, report, code, output), output


if __name__ == "__main__":
    serve()
