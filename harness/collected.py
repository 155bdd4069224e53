"""One hidden suite collected once, then forked for each grading of it: the meta-tests' mutants.

harness.warm forks a fresh pytest run per grading; most of what is left of each run's cost is
pytest itself (configuration, collecting the whole suite) for a handful of tests. Here one pytest
session per kata collects the suite and, in place of running it, serves gradings: each request
forks the session, sets the grading's `--impl`, titles and limits, runs the tests it selects
through pytest's own protocol (the grader's hooks, time limits and verdicts included) and writes
the results as `--kata-json` would. The fork shares nothing with its siblings.

Protocol: one JSON line per grading on stdin, `{"impl", "titles", "exitfirst", "timeout",
"json", "log", "limit"}`; one line back, `{"code": exit code}` once the fork has ended, `null` if
it was killed at `limit` seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from harness import catalog, plugin
from harness.results import write_json
from harness.warm import Server, child, wait


class Collected(Server):
    """A kata's collected suite in a server process; `ask` blocks until its fork has ended."""

    def __init__(self, kata: catalog.Kata) -> None:
        args = [str(kata.suite_dir), "--impl=solution", "--kata-via=none", "-q", "-s",
                "-p", "harness.collected", "-p", "no:cacheprovider",
                "-p", "no:unraisableexception", "-W", "ignore::pytest.PytestAssertRewriteWarning"]
        super().__init__([sys.executable, "-m", "pytest", *args], catalog.ROOT,
                         f"collected grader of {kata.name}", stderr=subprocess.DEVNULL)
        ready = self.proc.stdout.readline()  # the server says so once it has collected
        if ready.strip() != "ready":
            raise RuntimeError(f"the {self.name} did not start (exit {self.proc.wait()})")


PROTOCOL: list[int] = []  # the server's answers: its stdout as it was started


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Keep stdout for the protocol and send pytest's own reporting elsewhere (`-s`: nothing
    captured the descriptor before this)."""
    PROTOCOL.append(os.dup(1))
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool:
    """Serve gradings instead of running the suite."""
    out = PROTOCOL[0]
    os.write(out, b"ready\n")
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            child(request["log"], partial(_grade, session, request))
        os.write(out, (json.dumps({"code": wait(pid, request["limit"])}) + "\n").encode())
    return True


def _grade(session: pytest.Session, request: dict) -> int:
    config = session.config
    config.option.impl = request["impl"]
    config.option.kata_title = request["titles"]
    config.option.kata_timeout = request["timeout"]
    config.option.maxfail = 1 if request["exitfirst"] else 0
    plugin.reset(config)
    items = list(session.items)
    plugin.pytest_collection_modifyitems(session, config, items)
    session.items, session.testsfailed, session.shouldfail = items, 0, False
    try:
        for i, item in enumerate(items):
            nextitem = items[i + 1] if i + 1 < len(items) else None
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            if session.shouldfail or session.shouldstop:
                break
    finally:
        write_json(list(config.stash[plugin.runs_key].values()), Path(request["json"]))
    return 1 if session.testsfailed else 0
