"""What one graded run found, per test and per level, and how a scorecard reads it."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Hashable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TypeVar

from harness.words import say

EXAMPLES = 0  # the level number given to a kata's visible example tests
K = TypeVar("K", bound=Hashable)


@dataclass
class TestResult:
    nodeid: str
    level: int
    title: str
    hint: str | None
    outcome: str = "passed"  # passed | failed | skipped
    verdict: str = ""  # for a failure: wrong answer, raised TypeError, timed out after 10 s, ...
    verdicts: dict[str, str] = field(default_factory=dict)  # the verdict in each language

    @property
    def failed(self) -> bool:
        return self.outcome == "failed"


@dataclass
class KataRun:
    kata: str
    impl: str
    import_error: str | None = None
    results: list[TestResult] = field(default_factory=list)
    file: str | None = None  # the file graded, as loaded
    recorded: str = ""  # where the run was stored in the progress store, or why not
    stored: bool = False  # whether it was stored (`recorded` may start with the store's notice)

    def level_counts(self) -> dict[int, tuple[int, int]]:
        """level -> (passed, total), skipped tests left out of both."""
        ran = [r for r in self.results if r.outcome != "skipped"]
        return {level: (sum(r.level == level and r.outcome == "passed" for r in ran),
                        sum(r.level == level for r in ran))
                for level in sorted({r.level for r in ran})}

    @property
    def best_level(self) -> int:
        """The highest level passed in full together with every level below it (0 for none)."""
        counts, best = self.level_counts(), 0
        while best + 1 in counts and counts[best + 1][0] == counts[best + 1][1]:
            best += 1
        return best

    @property
    def hidden_passed(self) -> int:
        return sum(r.outcome == "passed" for r in self.results if r.level != EXAMPLES)

    @property
    def hidden_total(self) -> int:
        return sum(r.outcome != "skipped" for r in self.results if r.level != EXAMPLES)

    @property
    def passed(self) -> bool:
        return self.import_error is None and all(not r.failed for r in self.results)


def level_name(level: int) -> str:
    return say("grade.examples") if level == EXAMPLES else say("grade.level", n=level)


def counted(items: Iterable[K]) -> list[tuple[K, int]]:
    """Each item once, with how often it came, in order: parametrized cases share a title, and a
    title is said once, counted."""
    return list(Counter(items).items())


def times(n: int) -> str:
    return f" (×{n})" if n > 1 else ""


def scorecard_lines(run: KataRun) -> list[tuple[str, bool]]:
    """(line, ok) pairs: the per-level summary a run ends with."""
    graded = f" · {run.file}" if run.file and run.file != run.impl else ""
    lines = [(f"{run.kata} · {run.impl}{graded}", run.passed)]
    if run.import_error:
        lines.append((f"  {run.import_error}", False))
    hang = say("grade.not_run")
    for level, (passed, total) in run.level_counts().items():
        lines.append((f"  {level_name(level):<9} {passed:>3}/{total:<3}", passed == total))
        # A file that does not import fails every test alike: its error said once, above. Tests
        # left out after a hang: one line, not one each.
        keys = ((say("grade.remaining"), hang, None) if r.verdict == hang else
                (r.title, r.verdict, r.hint)
                for r in run.results if r.level == level and r.failed and not run.import_error)
        for (title, verdict, hint), count in counted(keys):
            lines.append((say("grade.failure", title=title, times=times(count), verdict=verdict,
                              hint=say("grade.hint", hint=hint) if hint else ""), False))
    verdict = say("grade.passed" if run.passed else "grade.failed")
    examples = run.level_counts().get(EXAMPLES)
    if run.hidden_total == 0 and examples and not run.import_error:  # e.g. the examples file alone
        summary = say("grade.examples_only", verdict=verdict, passed=examples[0],
                      total=examples[1], kata=run.kata)
    else:
        summary = say("grade.summary", verdict=verdict, passed=run.hidden_passed,
                      total=run.hidden_total, best=run.best_level, gate=gate(run))
    lines.append((f"  {summary}", run.passed))
    return lines + ([(f"  {run.recorded}", run.passed)] if run.recorded else [])


def gate(run: KataRun) -> str:
    """Why later levels do not count yet, and how they did: levels are passed in order."""
    counts = {lvl: pt for lvl, pt in run.level_counts().items() if lvl != EXAMPLES}
    blocked = sorted(lvl for lvl in counts if lvl > run.best_level + 1)
    if run.import_error or not blocked or run.best_level + 1 not in counts:  # a filtered run
        return ""
    one = len(blocked) == 1
    names = say("grade.level", n=blocked[0]) if one else \
        say("grade.levels", first=blocked[0], last=blocked[-1])
    shown = ", ".join(f"{counts[lvl][0]}/{counts[lvl][1]}" for lvl in blocked)
    return say("grade.gate_one" if one else "grade.gate_many", next=run.best_level + 1,
               names=names, shown=shown)


def write_json(runs: list[KataRun], path: Path) -> None:
    Path(path).write_text(json.dumps([asdict(r) for r in runs], indent=1), encoding="utf-8")


def read_json(path: Path) -> list[KataRun]:
    runs = json.loads(Path(path).read_text(encoding="utf-8"))
    return [KataRun(**{**r, "results": [TestResult(**t) for t in r["results"]]}) for r in runs]
