"""The grader: a pytest plugin that adds each kata's hidden suite and reports like an assessment.

`pytest katas/<kata>` runs the visible examples and the hidden suite against the file chosen by
`--impl`; hidden failures show their level, title and hint category only, unless `--reveal`.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings

from harness import catalog
from harness.loader import ImplError, load_module
from harness.results import (
    EXAMPLES,
    NOT_RUN,
    KataRun,
    TestResult,
    level_name,
    scorecard_lines,
    write_json,
)
from harness.store import VIAS, Attempt, Store, StoreError
from harness.timeouts import KataTimeout, time_limit

VIA_NAMES = {"pytest": "pytest", "test": "kata test", "grade": "kata grade", "mock": "mock submit"}

# Generous, so a correct solution on a loaded 2-core machine never hits it; once one test of a
# kata has timed out the rest get AFTER_TIMEOUT, and after HANGS_AFTER timeouts in a row the rest
# are not run at all, so a file that loops forever is graded in well under a minute.
DEFAULT_TIMEOUT = 30.0
AFTER_TIMEOUT = 3.0
HANGS_AFTER = 3

# Same file, same verdict: no randomness between runs and nothing written into the repository.
# No "explain" phase: it re-runs a failing test for seconds to annotate lines no one is shown.
settings.register_profile(
    "grading", derandomize=True, database=None, deadline=None, print_blob=False,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.generate, Phase.shrink],
)
settings.load_profile("grading")

runs_key = pytest.StashKey[dict[str, KataRun]]()
tests_key = pytest.StashKey[dict[str, tuple[str, TestResult]]]()
impls_key = pytest.StashKey[dict[str, object]]()
exit_key = pytest.StashKey[int]()
hung_key = pytest.StashKey[set[str]]()
ran_key = pytest.StashKey[set[str]]()  # node ids that reported a result
partial_key = pytest.StashKey[set[str]]()  # katas some of whose tests were deselected
streak_key = pytest.StashKey[dict[str, int]]()  # kata -> timeouts in a row


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kata", "kata grading")
    group.addoption("--impl", default="stub",
                    help="what to grade: stub (your file, the default), solution, or a PATH")
    group.addoption("--reveal", action="store_true",
                    help="show hidden tests' failures in full: tracebacks, falsifying examples")
    group.addoption("--kata-timeout", type=float, default=None,
                    help=f"seconds each test may take (default {DEFAULT_TIMEOUT:g}, or its own)")
    group.addoption("--kata-json", default=None, help="also write the results to this JSON file")
    group.addoption("--kata-title", action="append", default=[], metavar="TITLE",
                    help="run only the hidden tests with this title (repeatable); no examples")
    group.addoption("--kata-via", default="pytest", choices=[*VIAS, "none"],
                    help="how this run is recorded in the progress store (none: not at all)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "grade(level, title, hint, timeout=None): a hidden test's level (1-3), the "
        "behaviour it checks, its hint category in kata.toml, and its own time limit")
    reset(config)
    # Running a kata folder (or all of katas/) also runs that kata's hidden suite.
    for arg in list(config.args):
        path = Path(arg.split("::")[0]).resolve()
        if path == catalog.KATAS_DIR:
            config.args.extend(str(k.suite_dir) for k in catalog.all_katas())
        elif path.is_dir() and path.parent == catalog.KATAS_DIR:
            kata = catalog.kata_for_path(path)
            if kata and kata.suite_dir.is_dir():
                config.args.append(str(kata.suite_dir))


def reset(config: pytest.Config) -> None:
    """The grader's state for one run: what a collected session forked per grading starts from
    (harness.collected)."""
    config.stash[runs_key] = {}
    config.stash[tests_key] = {}
    config.stash[impls_key] = {}
    config.stash[hung_key] = set()
    config.stash[ran_key] = set()
    config.stash[partial_key] = set()
    config.stash[streak_key] = {}


def _load(config: pytest.Config, kata: catalog.Kata) -> object:
    impls = config.stash[impls_key]
    if kata.name not in impls:
        try:
            path = kata.impl_path(config.getoption("impl"))
        except (KeyError, ValueError) as exc:  # an unknown mutant, or one that no longer applies
            impls[kata.name] = ImplError(exc.args[0])
            return impls[kata.name]
        if config.getoption("impl").startswith(catalog.MUTANT_PREFIX):
            config.add_cleanup(lambda: shutil.rmtree(path.parent, ignore_errors=True))
        try:
            impls[kata.name] = load_module(path, f"kata_impl_{kata.name}", api=kata.api)
        except ImplError as exc:
            impls[kata.name] = exc
    return impls[kata.name]


@pytest.fixture(scope="module")
def impl(request: pytest.FixtureRequest):
    """The implementation under test: the module loaded from the file `--impl` names."""
    module = _load(request.config, catalog.kata_for_path(request.path))
    if isinstance(module, ImplError):
        pytest.fail(str(module), pytrace=False)
    return module


class BrokenImpl(pytest.Item):
    """Stands in for a kata's tests when its file does not import: one clear error, not fifty."""

    def __init__(self, *, error: ImplError, **kwargs) -> None:
        super().__init__(**kwargs)
        self.error = error

    def runtest(self) -> None:
        raise self.error

    def repr_failure(self, excinfo, style=None) -> str:
        return str(excinfo.value)

    def reportinfo(self):
        return self.path, None, self.name


def pytest_deselected(items: list) -> None:
    for item in items:
        kata = catalog.kata_for_path(item.path)
        if kata is not None:
            item.config.stash[partial_key].add(kata.name)


def _keep_titles(config: pytest.Config, items: list) -> None:
    """`--kata-title`: keep only the hidden tests with those titles; name any that match none."""
    titles = set(config.getoption("kata_title"))
    if not titles:
        return
    def title(item) -> str | None:
        mark = item.get_closest_marker("grade")
        return mark.kwargs["title"] if mark else None
    unknown = titles - {title(i) for i in items}
    if unknown:
        raise pytest.UsageError(f"no hidden test has the title {sorted(unknown)[0]!r}")
    kept = [i for i in items if title(i) in titles]
    config.hook.pytest_deselected(items=[i for i in items if title(i) not in titles])
    items[:] = kept


@pytest.hookimpl(trylast=True)  # after -k/-m deselection, so only tests that run are counted
def pytest_collection_modifyitems(session, config: pytest.Config, items: list) -> None:
    _keep_titles(config, items)
    runs, tests = config.stash[runs_key], config.stash[tests_key]
    by_kata: dict[str, list] = {}
    for item in items:
        kata = catalog.kata_for_path(item.path)
        if kata is None:
            continue
        mark = item.get_closest_marker("grade")
        hidden = item.path.is_relative_to(catalog.SUITES_DIR)
        if hidden and mark is None:
            raise pytest.UsageError(f"hidden test {item.nodeid} has no @pytest.mark.grade(...)")
        level, title, hint = (mark.kwargs["level"], mark.kwargs["title"], mark.kwargs["hint"]) \
            if hidden else (EXAMPLES, item.name, None)
        run = runs.setdefault(kata.name, KataRun(kata.name, config.getoption("impl")))
        tests[item.nodeid] = (kata.name, TestResult(item.nodeid, level, title, hint))
        run.results.append(tests[item.nodeid][1])
        by_kata.setdefault(kata.name, []).append(item)
    # Level 1 before Level 2 before Level 3, so the first failure is the most basic one.
    items.sort(key=lambda i: tests[i.nodeid][1].level if i.nodeid in tests else -1)
    for name, kata_items in by_kata.items():
        error = _load(config, catalog.get(name))
        runs[name].file = getattr(error, "__file__", None)  # the scorecard names the graded file
        if isinstance(error, ImplError):
            runs[name].import_error = str(error)
            for r in runs[name].results:
                r.outcome, r.verdict = "failed", error.verdict
            items[:] = [i for i in items if i not in kata_items]
            items.append(BrokenImpl.from_parent(session, name=f"{name}: import", error=error))


def _limit(item: pytest.Item) -> float:
    """Kata tests only: the project's own tests in tests/ run without this limit."""
    entry = item.config.stash[tests_key].get(item.nodeid)
    if entry is None:
        return 0.0
    override = item.config.getoption("kata_timeout")
    mark = item.get_closest_marker("grade")
    limit = override or (mark and mark.kwargs.get("timeout")) or DEFAULT_TIMEOUT
    if entry[0] in item.config.stash[hung_key]:
        return min(limit, AFTER_TIMEOUT)
    return limit


class NotRun(Exception):
    """A kata test left out because the implementation hung on the tests before it."""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    entry = item.config.stash[tests_key].get(item.nodeid)
    if entry and item.config.stash[streak_key].get(entry[0], 0) >= HANGS_AFTER:
        raise NotRun(NOT_RUN)  # before any fixture runs: nothing of the learner's code is called
    with time_limit(_limit(item)):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    with time_limit(_limit(item)):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    with time_limit(_limit(item)):
        return (yield)


def _timeout_in(exc: BaseException | None) -> KataTimeout | None:
    """The KataTimeout behind an error: Hypothesis may wrap it while shrinking."""
    while exc is not None and not isinstance(exc, KataTimeout):
        exc = exc.__cause__ or exc.__context__
    return exc


SLOW_WRONG = "wrong answer (a failing example was found; time ran out while shrinking it)"


def _hung(excinfo) -> bool:
    """A timeout that is no wrong answer in disguise: no failing example had been found."""
    timeout = None if excinfo is None else _timeout_in(excinfo.value)
    return timeout is not None and not timeout.found_failure


def _verdict(excinfo) -> str:
    timeout = _timeout_in(excinfo.value)
    if timeout is not None:
        return SLOW_WRONG if timeout.found_failure else str(timeout)
    if excinfo.errisinstance(NotRun):
        return NOT_RUN
    if isinstance(excinfo.value, BaseExceptionGroup):  # Hypothesis: several distinct failures
        return _group_verdict(excinfo.value)
    return _kind(excinfo.value)


def _kind(exc: BaseException) -> str:
    if isinstance(exc, AssertionError | pytest.fail.Exception):
        return "wrong answer"
    if isinstance(exc, NotImplementedError):
        return "not implemented yet"
    return f"raised {type(exc).__name__}"


def _group_verdict(group: BaseExceptionGroup) -> str:
    """What the distinct failures were, never the group that carries them: "wrong answer (2
    distinct failing examples)", or the kinds when they differ ("wrong answer; raised KeyError")."""
    leaves = _leaves(group)
    kinds = list(dict.fromkeys(_kind(e) for e in leaves))
    return f"{'; '.join(kinds)} ({len(leaves)} distinct failing examples)"


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for e in exc.exceptions for leaf in _leaves(e)]
    return [exc]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    entry = item.config.stash[tests_key].get(item.nodeid)
    if entry is None or isinstance(item, BrokenImpl):
        return report
    result = entry[1]
    if report.when == "call" or report.failed or report.skipped:
        item.config.stash[ran_key].add(item.nodeid)
    not_run = call.excinfo is not None and call.excinfo.errisinstance(NotRun)
    timed_out = _hung(call.excinfo)
    if (report.when == "call" or report.failed) and not not_run:  # a streak of timeouts in a row
        streaks = item.config.stash[streak_key]
        streaks[entry[0]] = streaks.get(entry[0], 0) + 1 if timed_out else 0
    if report.skipped and result.outcome == "passed":
        result.outcome = "skipped"
    elif report.failed:
        result.outcome = "failed"
        result.verdict = result.verdict or _verdict(call.excinfo)
        if timed_out:
            item.config.stash[hung_key].add(entry[0])
        if (timed_out and result.level == EXAMPLES) or result.verdict == NOT_RUN:
            report.longrepr = result.verdict
        if result.level != EXAMPLES and not item.config.getoption("reveal"):
            report.longrepr = f"{level_name(result.level)} · {result.title} — {result.verdict}" + (
                f"  [hint: {result.hint}]  (run with --reveal for details)")
            report.sections = []
    return report


def _hidden(config: pytest.Config, nodeid: str) -> bool:
    entry = config.stash[tests_key].get(nodeid)
    return entry is not None and entry[1].level != EXAMPLES


def pytest_sessionstart(session: pytest.Session) -> None:
    """Progress lines name a hidden test's kata and level, not the file it lives in."""
    config, reporter = session.config, session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or config.getoption("reveal"):
        return
    write = reporter.write_fspath_result

    def write_hidden_as_level(nodeid: str, res: str, **markup: bool) -> None:
        if _hidden(config, nodeid):
            kata, result = config.stash[tests_key][nodeid]
            nodeid = f"{kata} · hidden {level_name(result.level)}"
        write(nodeid, res, **markup)

    reporter.write_fspath_result = write_hidden_as_level


@pytest.hookimpl(wrapper=True, tryfirst=True)  # around pytest's own FAILURES and summary lines
def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config):
    """Hidden failures are on the scorecard: pytest's failure sections and FAILED lines would only
    repeat them, push the scorecard off the screen and name the files the hidden suite lives in."""
    stats = terminalreporter.stats
    kept = {key: stats[key] for key in ("failed", "error") if key in stats}
    if not config.getoption("reveal"):
        for key, reports in kept.items():
            stats[key] = [r for r in reports if not _hidden(config, r.nodeid)]
    try:
        return (yield)
    finally:
        stats.update(kept)  # pytest's closing count still counts every test


@pytest.hookimpl(wrapper=True, tryfirst=True)  # outermost: after pytest's closing count
def pytest_sessionfinish(session, exitstatus):
    result = yield
    config = session.config
    config.stash[exit_key] = int(exitstatus)
    for run in config.stash[runs_key].values():
        run.recorded = record(config, run)
    path = config.getoption("kata_json")
    if path:
        write_json(list(config.stash[runs_key].values()), Path(path))
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    for run in config.stash[runs_key].values() if reporter else ():
        details = any(r.failed for r in run.results) and not config.getoption("reveal")
        reporter.write_sep("=", "kata scorecard" + (" (--reveal for details)" if details else ""))
        for line, ok in scorecard_lines(run):
            reporter.write_line(line, green=ok, red=not ok)
    return result


def record(config: pytest.Config, run: KataRun) -> str:
    """Store a full graded run of the learner's file; say where, or why it was not stored."""
    via, impl = config.getoption("kata_via"), config.getoption("impl")
    hidden = [r for r in run.results if r.level != EXAMPLES]
    if via == "none":
        return ""
    kata = catalog.get(run.kata)
    if impl == "solution" or impl.startswith(catalog.MUTANT_PREFIX) or (
            impl != "stub" and kata.impl_path(impl).resolve() == kata.solution_path.resolve()):
        return f"not recorded: only your own files are, not --impl={impl}"
    if not hidden:
        return "not recorded: the hidden suite did not run"
    ran = config.stash[ran_key]
    if run.kata in config.stash[partial_key] or (
            run.import_error is None and any(r.nodeid not in ran for r in hidden)):
        return "not recorded: only part of the hidden suite ran (-k, -m, -x, --kata-title)"
    counts = {str(level): list(pt) for level, pt in run.level_counts().items()}
    if impl != "stub":  # a path, absolute, so `kata list` names it wherever it was typed
        path = kata.impl_path(impl).resolve()
        impl = "stub" if path == kata.stub_path.resolve() else str(path)
    attempt = Attempt(run.kata, impl, time.time(), run.best_level, run.hidden_passed,
                      run.hidden_total, counts, via)
    try:
        store = Store()
        store.add_attempt(attempt)
    except (StoreError, OSError) as exc:
        return f"not recorded: {exc}"
    notice = f"{store.notice}; " if store.notice else ""
    return f"{notice}recorded in {store.path} ({VIA_NAMES[via]})"


def pytest_unconfigure(config: pytest.Config) -> None:
    """Learner threads that never stop (a deadlocked worker) must not keep the run alive."""
    stuck = [t for t in threading.enumerate()
             if t is not threading.main_thread() and t.is_alive() and not t.daemon]
    if stuck and config.stash.get(runs_key, None):
        sys.stderr.write(f"kata: {len(stuck)} thread(s) started by the implementation never "
                         "stopped; exiting without waiting for them\n")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(config.stash.get(exit_key, 1))
