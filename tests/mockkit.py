"""Helpers for the tests of `kata mock` and `kata interviewer`: the CLI as a learner drives it,
graded runs made to order, and a clock that moves only when told (the fixtures that install them
are in conftest.py)."""

from __future__ import annotations

from typer.testing import CliRunner

from harness import catalog, diagnosis
from harness.cli import app
from harness.results import KataRun
from harness.results import TestResult as Result  # not a test class
from harness.session.log import Sessions
from harness.store import Store

runner = CliRunner()
L1 = [("tied scores must count one half", "ties"),
      ("a perfect ranking must give 1 and a reversed one 0", "orientation")]
L2 = [("the curve must start at (0, 0) with threshold +inf and end at (1, 1)", "curve")]
L3 = [("samples of zero weight must be ignored, curve points included", "weights")]
LEVELS = {1: L1, 2: L2, 3: L3}  # a few hidden tests of auc_roc per level: (title, hint category)


def kata(*args: str, input: str | None = None):
    return runner.invoke(app, list(args), input=input)


def make_run(passing: set[int], import_error: str | None = None, levels=None,
             name: str = "auc_roc") -> KataRun:
    """A graded run of `name` (auc_roc by default) in which exactly the levels in `passing`
    pass; `levels` maps each level to its hidden tests' (title, hint category)."""
    results = [Result("example", 0, "test_example_from_the_prompt", None, "failed",
                      "wrong answer")]
    for level, tests in (levels or LEVELS).items():
        ok = level in passing and import_error is None
        results += [Result(f"t{level}{i}", level, title, hint,
                           "passed" if ok else "failed", "" if ok else "wrong answer")
                    for i, (title, hint) in enumerate(tests)]
    return KataRun(name, "stub", import_error, results)


class Clock:
    def __init__(self, t: float = 1_700_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


class Grader:
    """Stands in for grading.grade: each call takes the next queued run (or raises it)."""

    def __init__(self) -> None:
        self.runs: list = []
        self.calls: list[str] = []
        self.langs: list[str | None] = []  # the language each grading was asked to speak
        self.ranked: list[diagnosis.Likely] | None = None  # what diagnosis.likely says

    def rank(self, kata, failing, levels) -> list[diagnosis.Likely]:
        """Stands in for diagnosis.likely: runs made to order have no real signatures."""
        if self.ranked is None:
            raise diagnosis.NoSignatures(kata.name)
        return self.ranked

    def __call__(self, kata, impl="stub", *extra, hidden_only=False, via="none", lang=None):
        self.calls.append(impl)
        self.langs.append(lang)
        run = self.runs.pop(0)
        if isinstance(run, BaseException):
            raise run
        return run, ""


def start(work, *extra: str, name: str = "auc_roc"):
    result = kata("mock", name, "--file", str(work), "--minutes", "30", *extra)
    assert result.exit_code == 0, result.output
    return result


def current():
    return Sessions(Store()).current()


# auc_roc's clarifying questions, so tests follow its notes as they are rewritten: how many there
# are (in all, and open at Level 1), and each one's position by id.
AUC_QUESTIONS = catalog.get("auc_roc").meta["questions"]
QUESTIONS = len(AUC_QUESTIONS)
LEVEL_1_QUESTIONS = sum(q["level"] == 1 for q in AUC_QUESTIONS)
LEVEL_2_QUESTIONS = sum(q["level"] <= 2 for q in AUC_QUESTIONS)  # Levels 1 and 2
Q = {q["id"]: i for i, q in enumerate(AUC_QUESTIONS)}
