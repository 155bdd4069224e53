"""The grader: a pytest plugin that adds each kata's hidden suite and reports like an assessment.

`pytest katas/<kata>` runs the visible examples and the hidden suite against the file chosen by
`--impl`; hidden failures show their level, title and hint category only, unless `--reveal`.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings

from harness import catalog
from harness.lang import lang as default_lang
from harness.loader import ImplError, load_module
from harness.results import (
    EXAMPLES,
    KataRun,
    TestResult,
    level_name,
    scorecard_lines,
    write_json,
)
from harness.session.log import Kind, Mode, Sessions
from harness.store import VIAS, Attempt, Store, StoreError
from harness.timeouts import KataTimeout, time_limit
from harness.words import say

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

NAME = "kata-grader"  # the registered Grader plugin


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
    group.addoption("--kata-lang", choices=catalog.LANGS, default=None,
                    help="the scorecard's language (default: KATA_LANG, else the locale's)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "grade(level, title, hint, timeout=None): a hidden test's level (1-3), the "
        "behaviour it checks, its hint category in kata.toml, and its own time limit")
    if config.getoption("kata_lang"):  # a mock session's, whatever the shell says
        os.environ["KATA_LANG"] = config.getoption("kata_lang")
    Grader.fresh(config)
    # Running a kata folder (or all of katas/) also runs that kata's hidden suite.
    for arg in list(config.args):
        path = Path(arg.split("::")[0]).resolve()
        if path == catalog.KATAS_DIR:
            config.args.extend(str(k.suite_dir) for k in catalog.all_katas())
        elif path.is_dir() and path.parent == catalog.KATAS_DIR:
            kata = catalog.kata_for_path(path)
            if kata and kata.suite_dir.is_dir():
                config.args.append(str(kata.suite_dir))


@pytest.fixture(scope="module")
def impl(request: pytest.FixtureRequest):
    """The implementation under test: the module loaded from the file `--impl` names."""
    module = Grader.of(request.config).load(catalog.kata_for_path(request.path))
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


def _grade(item: pytest.Item, field: str) -> object:
    """A field of the test's grade mark (its level, title, hint); None for a test without one."""
    mark = item.get_closest_marker("grade")
    return mark.kwargs.get(field) if mark else None


def _deselect(config: pytest.Config, items: list, dropped) -> None:
    """Leave out the items for which `dropped(item)` holds, telling pytest (and the Grader)."""
    config.hook.pytest_deselected(items=[i for i in items if dropped(i)])
    items[:] = [i for i in items if not dropped(i)]


def _keep_titles(config: pytest.Config, items: list) -> None:
    """`--kata-title`: keep only the hidden tests with those titles; name any that match none."""
    titles = set(config.getoption("kata_title"))
    unknown = titles - {_grade(i, "title") for i in items}
    if unknown:
        raise pytest.UsageError(f"no hidden test has the title {sorted(unknown)[0]!r}")
    if titles:
        _deselect(config, items, lambda i: _grade(i, "title") not in titles)


def _pair_levels(config: pytest.Config, items: list) -> str:
    """While a pair session is open, the candidate's own run of the kata (`pytest katas/KATA`,
    `kata test`, `kata grade`) grades only the levels the session has opened, so no later title
    shows early, and the session logs the run for the interviewer to see. Returns the store's
    notice, if opening it moved an unusable file aside, for the scorecard's last line."""
    via, impl = config.getoption("kata_via"), config.getoption("impl")
    if via not in ("pytest", "test", "grade") or impl == "solution" \
            or impl.startswith(catalog.MUTANT_PREFIX):
        return ""
    try:
        store = Store()
        pair = Sessions(store).current()
    except (StoreError, OSError, sqlite3.Error):
        return ""
    katas = {k.name for k in map(catalog.kata_for_path, (i.path for i in items)) if k}
    if pair is None or pair.mode != Mode.PAIR or pair.kata not in katas:
        return store.notice
    shown = min(pair.level, pair.levels)
    _deselect(config, items, lambda i: getattr(catalog.kata_for_path(i.path), "name", "")
              == pair.kata and (_grade(i, "level") or 0) > shown)
    Sessions(store).record(pair, time.time(), (Kind.LOOK, shown, {
        "what": {"pytest": "pytest", "test": "kata test", "grade": "kata grade"}[via],
        "detail": f"katas/{pair.kata}"}))
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(say("interviewer.visible") + " "
                            + say("interviewer.open_levels", n=shown), yellow=True)
    return store.notice


class NotRun(Exception):
    """A kata test left out because the implementation hung on the tests before it."""


def _timeout_in(exc: BaseException | None) -> KataTimeout | None:
    """The KataTimeout behind an error: Hypothesis may wrap it while shrinking."""
    while exc is not None and not isinstance(exc, KataTimeout):
        exc = exc.__cause__ or exc.__context__
    return exc


def _verdict(excinfo, lang: str | None = None) -> str:
    timeout = _timeout_in(excinfo.value)
    if timeout is not None:
        return say("grade.slow_wrong" if timeout.found_failure else "grade.timed_out", lang,
                   seconds=timeout.seconds)
    if excinfo.errisinstance(NotRun):
        return say("grade.not_run", lang)
    if isinstance(excinfo.value, BaseExceptionGroup):
        # Hypothesis found several distinct failures: say what they were, never the group that
        # carries them ("wrong answer (2 distinct failing examples)", "wrong answer; raised X").
        leaves = _leaves(excinfo.value)
        kinds = list(dict.fromkeys(_kind(e, lang) for e in leaves))
        return say("grade.distinct", lang, kinds=say("grade.kinds_sep", lang).join(kinds),
                   n=len(leaves))
    return _kind(excinfo.value, lang)


def _kind(exc: BaseException, lang: str | None = None) -> str:
    if isinstance(exc, AssertionError | pytest.fail.Exception):
        return say("grade.wrong", lang)
    if isinstance(exc, NotImplementedError):
        return say("grade.not_implemented", lang)
    return say("grade.raised", lang, name=type(exc).__name__)


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for e in exc.exceptions for leaf in _leaves(e)]
    return [exc]


class Grader:
    """The grader's state for one pytest run, and the hooks that read or write it: registered as
    a plugin, as pytest's own stepwise is. A session forked per grading starts a fresh one."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.runs: dict[str, KataRun] = {}
        self.tests: dict[str, tuple[str, TestResult]] = {}  # node id -> kata, its result
        self.impls: dict[str, object] = {}  # kata -> its module, or the ImplError
        self.hung: set[str] = set()  # katas one of whose tests timed out
        self.ran: set[str] = set()  # node ids that reported a result
        self.partial: set[str] = set()  # katas some of whose tests were deselected
        self.streaks: dict[str, int] = {}  # kata -> timeouts in a row
        self.notice = ""  # the store's, when a look for a pair session opened it first
        self.exit = 1

    @classmethod
    def fresh(cls, config: pytest.Config) -> Grader:
        old = config.pluginmanager.get_plugin(NAME)
        if old is not None:
            config.pluginmanager.unregister(old)
        grader = cls(config)
        config.pluginmanager.register(grader, NAME)
        return grader

    @staticmethod
    def of(config: pytest.Config) -> Grader | None:
        return config.pluginmanager.get_plugin(NAME)

    def load(self, kata: catalog.Kata) -> object:
        impls, chosen = self.impls, self.config.getoption("impl")
        if kata.name not in impls:
            try:
                path = kata.impl_path(chosen)
            except (KeyError, ValueError) as exc:  # an unknown mutant, or one no longer applying
                impls[kata.name] = ImplError(exc.args[0])
                return impls[kata.name]
            if chosen.startswith(catalog.MUTANT_PREFIX):
                self.config.add_cleanup(lambda: shutil.rmtree(path.parent, ignore_errors=True))
            try:
                impls[kata.name] = load_module(path, f"kata_impl_{kata.name}", api=kata.api)
            except ImplError as exc:
                impls[kata.name] = exc
        return impls[kata.name]

    def pytest_deselected(self, items: list) -> None:
        for item in items:
            kata = catalog.kata_for_path(item.path)
            if kata is not None:
                self.partial.add(kata.name)

    @pytest.hookimpl(trylast=True)  # after -k/-m deselection, so only tests that run are counted
    def pytest_collection_modifyitems(self, session, config: pytest.Config, items: list) -> None:
        _keep_titles(config, items)
        self.notice = _pair_levels(config, items)
        runs, tests = self.runs, self.tests
        by_kata: dict[str, list] = {}
        for item in items:
            kata = catalog.kata_for_path(item.path)
            if kata is None:
                continue
            hidden = item.path.is_relative_to(catalog.SUITES_DIR)
            if hidden and _grade(item, "level") is None:
                raise pytest.UsageError(f"hidden test {item.nodeid} has no "
                                        "@pytest.mark.grade(...)")
            fields = [_grade(item, f) for f in ("level", "title", "hint")] if hidden \
                else [EXAMPLES, item.name, None]
            run = runs.setdefault(kata.name, KataRun(kata.name, config.getoption("impl")))
            tests[item.nodeid] = (kata.name, TestResult(item.nodeid, *fields))
            run.results.append(tests[item.nodeid][1])
            by_kata.setdefault(kata.name, []).append(item)
        # Level 1 before Level 2 before Level 3, so the first failure is the most basic one.
        items.sort(key=lambda i: tests[i.nodeid][1].level if i.nodeid in tests else -1)
        for name, kata_items in by_kata.items():
            error = self.load(catalog.get(name))
            runs[name].file = getattr(error, "__file__", None)  # the scorecard names the file
            if isinstance(error, ImplError):
                runs[name].import_error = str(error)
                for r in runs[name].results:
                    r.outcome, r.verdict = "failed", error.verdict
                items[:] = [i for i in items if i not in kata_items]
                items.append(BrokenImpl.from_parent(session, name=f"{name}: import", error=error))

    def limit(self, item: pytest.Item) -> float:
        """Kata tests only: the project's own tests in tests/ run without this limit."""
        entry = self.tests.get(item.nodeid)
        if entry is None:
            return 0.0
        limit = self.config.getoption("kata_timeout") or _grade(item, "timeout") or DEFAULT_TIMEOUT
        return min(limit, AFTER_TIMEOUT) if entry[0] in self.hung else limit

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item):
        entry = self.tests.get(item.nodeid)
        if entry and self.streaks.get(entry[0], 0) >= HANGS_AFTER:
            raise NotRun(say("grade.not_run"))  # before any fixture: no learner code is called
        with time_limit(self.limit(item)):
            return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item):
        with time_limit(self.limit(item)):
            return (yield)

    pytest_runtest_teardown = pytest_runtest_call  # the same limit around a test's teardown

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        entry = self.tests.get(item.nodeid)
        if entry is None or isinstance(item, BrokenImpl):
            return report
        result = entry[1]
        if report.when == "call" or report.failed or report.skipped:
            self.ran.add(item.nodeid)
        not_run = call.excinfo is not None and call.excinfo.errisinstance(NotRun)
        timeout = _timeout_in(call.excinfo.value if call.excinfo else None)
        timed_out = timeout is not None and not timeout.found_failure  # no wrong answer found
        if (report.when == "call" or report.failed) and not not_run:  # timeouts in a row
            self.streaks[entry[0]] = self.streaks.get(entry[0], 0) + 1 if timed_out else 0
        if report.skipped and result.outcome == "passed":
            result.outcome = "skipped"
        elif report.failed:
            result.outcome = "failed"
            if not result.verdict:  # each language's, for a screen in another (a pair session)
                result.verdicts = {lang: _verdict(call.excinfo, lang) for lang in catalog.LANGS}
                result.verdict = result.verdicts[default_lang()]  # the learner's
            if timed_out:
                self.hung.add(entry[0])
            if (timed_out and result.level == EXAMPLES) or result.verdict == say("grade.not_run"):
                report.longrepr = result.verdict
            if result.level != EXAMPLES and not self.config.getoption("reveal"):
                report.longrepr = say("grade.hidden_failure", level=level_name(result.level),
                                      title=result.title, verdict=result.verdict,
                                      hint=result.hint)
                report.sections = []
        return report

    def hidden(self, nodeid: str) -> bool:
        entry = self.tests.get(nodeid)
        return entry is not None and entry[1].level != EXAMPLES

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Progress lines name a hidden test's kata and level, not the file it lives in."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None or self.config.getoption("reveal"):
            return
        write = reporter.write_fspath_result

        def write_hidden_as_level(nodeid: str, res: str, **markup: bool) -> None:
            if self.hidden(nodeid):
                kata, result = self.tests[nodeid]
                nodeid = say("grade.hidden_level", kata=kata, level=level_name(result.level))
            write(nodeid, res, **markup)

        reporter.write_fspath_result = write_hidden_as_level

    @pytest.hookimpl(wrapper=True, tryfirst=True)  # around pytest's FAILURES and summary lines
    def pytest_terminal_summary(self, terminalreporter, exitstatus, config: pytest.Config):
        """Hidden failures are on the scorecard: pytest's failure sections and FAILED lines would
        only repeat them, push the scorecard off the screen and name the hidden suite's files."""
        stats = terminalreporter.stats
        kept = {key: stats[key] for key in ("failed", "error") if key in stats}
        if not config.getoption("reveal"):
            for key, reports in kept.items():
                stats[key] = [r for r in reports if not self.hidden(r.nodeid)]
        try:
            return (yield)
        finally:
            stats.update(kept)  # pytest's closing count still counts every test

    @pytest.hookimpl(wrapper=True, tryfirst=True)  # outermost: after pytest's closing count
    def pytest_sessionfinish(self, session, exitstatus):
        result = yield
        config = self.config
        self.exit = int(exitstatus)
        for run in self.runs.values():
            run.recorded = self.record(run)
        path = config.getoption("kata_json")
        if path:
            write_json(list(self.runs.values()), Path(path))
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        for run in self.runs.values() if reporter else ():
            details = any(r.failed for r in run.results) and not config.getoption("reveal")
            reporter.write_sep("=", say("grade.scorecard")
                               + (say("grade.scorecard_details") if details else ""))
            for line, ok in scorecard_lines(run):
                reporter.write_line(line, green=ok, red=not ok)
        return result

    def record(self, run: KataRun) -> str:
        """Store a full graded run of the learner's file; say where, or why it was not stored."""
        via, impl = self.config.getoption("kata_via"), self.config.getoption("impl")
        hidden = [r for r in run.results if r.level != EXAMPLES]
        if via == "none":
            return ""
        kata = catalog.get(run.kata)
        if impl == "solution" or impl.startswith(catalog.MUTANT_PREFIX) or (
                impl != "stub" and kata.impl_path(impl).resolve() == kata.solution_path.resolve()):
            return say("grade.not_recorded_impl", impl=impl)
        if not hidden:
            return say("grade.not_recorded_hidden")
        if run.kata in self.partial or (
                run.import_error is None and any(r.nodeid not in self.ran for r in hidden)):
            return say("grade.not_recorded_part")
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
            return say("grade.not_recorded", why=exc)
        notice = store.notice or self.notice
        notice = f"{notice}; " if notice else ""
        run.stored = True
        return say("grade.recorded", notice=notice, path=store.path, via=say(f"grade.via_{via}"))


def pytest_unconfigure(config: pytest.Config) -> None:
    """Learner threads that never stop (a deadlocked worker) must not keep the run alive."""
    grader = Grader.of(config)
    stuck = [t for t in threading.enumerate()
             if t is not threading.main_thread() and t.is_alive() and not t.daemon]
    if stuck and grader is not None and grader.runs:
        sys.stderr.write(say("grade.threads_stuck", n=len(stuck)) + "\n")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(grader.exit)
