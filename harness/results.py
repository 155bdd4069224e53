"""What one graded run found, per test and per level, and how a scorecard reads it."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

EXAMPLES = 0  # the level number given to a kata's visible example tests
NOT_RUN = "not run: the implementation hangs"  # the verdict of tests left out after a hang


@dataclass
class TestResult:
    nodeid: str
    level: int
    title: str
    hint: str | None
    outcome: str = "passed"  # passed | failed | skipped
    verdict: str = ""  # for a failure: wrong answer, raised TypeError, timed out after 10 s, ...

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

    def level_counts(self) -> dict[int, tuple[int, int]]:
        """level -> (passed, total), skipped tests left out of both."""
        counts: dict[int, list[int]] = {}
        for r in sorted(self.results, key=lambda r: r.level):
            if r.outcome != "skipped":
                c = counts.setdefault(r.level, [0, 0])
                c[0] += r.outcome == "passed"
                c[1] += 1
        return {level: (p, t) for level, (p, t) in counts.items()}

    @property
    def best_level(self) -> int:
        """The highest level passed in full together with every level below it (0 for none)."""
        best = 0
        for level, (passed, total) in self.level_counts().items():
            if level == EXAMPLES:
                continue
            if passed != total or level != best + 1:
                break
            best = level
        return best

    @property
    def hidden_passed(self) -> int:
        return sum(p for lvl, (p, _) in self.level_counts().items() if lvl != EXAMPLES)

    @property
    def hidden_total(self) -> int:
        return sum(t for lvl, (_, t) in self.level_counts().items() if lvl != EXAMPLES)

    @property
    def passed(self) -> bool:
        return self.import_error is None and all(not r.failed for r in self.results)

    def failures(self, level: int) -> list[TestResult]:
        return [r for r in self.results if r.level == level and r.failed]


def level_name(level: int) -> str:
    return "Examples" if level == EXAMPLES else f"Level {level}"


def scorecard_lines(run: KataRun) -> list[tuple[str, bool]]:
    """(line, ok) pairs: the per-level summary a run ends with."""
    graded = f" · {run.file}" if run.file and run.file != run.impl else ""
    lines = [(f"{run.kata} · {run.impl}{graded}", run.passed)]
    if run.import_error:
        lines.append((f"  {run.import_error}", False))
    for level, (passed, total) in run.level_counts().items():
        lines.append((f"  {level_name(level):<9} {passed:>3}/{total:<3}", passed == total))
        failures = [] if run.import_error else run.failures(level)
        seen: dict[tuple, int] = {}  # parametrized cases share a title: say it once, counted
        for r in failures:  # tests left out after a hang: one line, not one each
            key = ("the remaining tests", NOT_RUN, None) if r.verdict == NOT_RUN else (
                r.title, r.verdict, r.hint)
            seen[key] = seen.get(key, 0) + 1
        for (title, verdict, hint), count in seen.items():
            times = f" (×{count})" if count > 1 else ""
            hint_text = f"  [hint: {hint}]" if hint else ""
            lines.append((f"      ✗ {title}{times} — {verdict}{hint_text}", False))
    verdict = "PASSED" if run.passed else "FAILED"
    examples = run.level_counts().get(EXAMPLES)
    if run.hidden_total == 0 and examples and not run.import_error:  # e.g. the examples file alone
        lines.append((f"  {verdict}: {examples[0]}/{examples[1]} examples; the hidden suite did "
                      f"not run (pytest katas/{run.kata} runs it)", run.passed))
        return lines + ([(f"  {run.recorded}", run.passed)] if run.recorded else [])
    lines.append((f"  {verdict}: {run.hidden_passed}/{run.hidden_total} hidden tests, "
                  f"best level {run.best_level}{gate(run)}", run.passed))
    if run.recorded:
        lines.append((f"  {run.recorded}", run.passed))
    return lines


def gate(run: KataRun) -> str:
    """Why later levels do not count yet, and how they did: levels are passed in order."""
    counts = {lvl: pt for lvl, pt in run.level_counts().items() if lvl != EXAMPLES}
    blocked = sorted(lvl for lvl in counts if lvl > run.best_level + 1)
    if run.import_error or not blocked or run.best_level + 1 not in counts:  # a filtered run
        return ""
    names = f"Level {blocked[0]}" if len(blocked) == 1 else f"Levels {blocked[0]}–{blocked[-1]}"
    verb = "counts" if len(blocked) == 1 else "count"
    shown = ", ".join(f"{counts[lvl][0]}/{counts[lvl][1]}" for lvl in blocked)
    return (f" — Level {run.best_level + 1} must pass in full before {names} {verb} "
            f"({shown})")


def write_json(runs: list[KataRun], path: Path) -> None:
    Path(path).write_text(json.dumps([asdict(r) for r in runs], indent=1), encoding="utf-8")


def read_json(path: Path) -> list[KataRun]:
    runs = json.loads(Path(path).read_text(encoding="utf-8"))
    return [KataRun(**{**r, "results": [TestResult(**t) for t in r["results"]]}) for r in runs]
