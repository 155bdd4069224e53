"""A hidden suite's tests by level, title and hint category, as the grader collects them: a child
pytest process (seconds), so kept under the store's folder, keyed by the suite's files."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from functools import cache

from harness import catalog, grading
from harness.store import home


@dataclass(frozen=True)
class HiddenTest:
    level: int
    title: str
    hint: str | None


def fingerprint(kata: catalog.Kata) -> str:
    digest = hashlib.sha256()
    for path in sorted(kata.suite_dir.rglob("*.py")):
        digest.update(path.relative_to(kata.suite_dir).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def hidden_tests(kata: catalog.Kata) -> list[HiddenTest]:
    """Every distinct (level, title, hint) of the kata's hidden suite, in collection order;
    grading.GradingError when the suite cannot be collected."""
    return _collected(kata, fingerprint(kata))


@cache  # once per process and version of the suite
def _collected(kata: catalog.Kata, key: str) -> list[HiddenTest]:
    saved_at = home() / "cache" / f"hidden-{kata.name}.json"
    try:
        saved = json.loads(saved_at.read_text(encoding="utf-8"))
        found = [HiddenTest(**t) for t in saved["tests"]] if saved["key"] == key else None
    except (OSError, ValueError, KeyError, TypeError):
        found = None
    if found is None:
        run, output = grading.grade(kata, "solution", "--collect-only", hidden_only=True)
        if not run.results:
            raise grading.GradingError(f"no hidden tests collected for {kata.name}:\n"
                                       f"{output[-2000:]}")
        found = list(dict.fromkeys(HiddenTest(r.level, r.title, r.hint) for r in run.results))
        saved_at.parent.mkdir(parents=True, exist_ok=True)
        part = saved_at.with_suffix(".part")
        part.write_text(json.dumps({"key": key, "tests": [asdict(t) for t in found]}),
                        encoding="utf-8")
        part.replace(saved_at)  # whole or not at all, whoever reads it meanwhile
    return found

