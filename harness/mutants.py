"""Mutants: classic mistakes kept as small anchored edits of a kata's reference solution.

`harness/suites/<kata>/mutants.toml` holds them (its format: CONTRIBUTING.md, "Mutants"). Every
`old` must occur exactly once in the text it is applied to, so a mutant whose reference has moved
on fails loudly instead of silently testing something else. A debugging kata's stub is the
reference with its `planted` mutants applied, then the `[[stub.edits]]` (a learner's docstring).
"""

from __future__ import annotations

import difflib
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from harness import tomlfile
from harness.lang import LANGS


class Kata(Protocol):
    """What mutants need of a kata (harness.catalog.Kata, which builds on this module)."""
    name: str
    module: str
    suite_dir: Path
    solution_path: Path


class MutantError(ValueError):
    """A mutants.toml that is malformed, or an edit whose anchor no longer applies."""


@dataclass(frozen=True)
class Edit:
    old: str
    new: str


@dataclass(frozen=True)
class Mutant:
    name: str
    mistake: dict[str, str]
    caught_by: tuple[str, ...]
    edits: tuple[Edit, ...]
    planted: bool = False
    rules: tuple[str, ...] = ()
    time_limit: float | None = None  # seconds each caught_by test gets in the meta-tests (a hang)


def path(kata: Kata) -> Path:
    return kata.suite_dir / "mutants.toml"


def _read(kata: Kata) -> dict:
    try:
        return tomlfile.read(path(kata))
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise MutantError(f"{path(kata)} is not valid TOML: {exc}") from exc


def load(kata: Kata) -> list[Mutant]:
    """Every mutant of the kata, in file order; MutantError names what is malformed."""
    mutants = []
    for i, t in enumerate(_read(kata).get("mutants", [])):
        where = f"{kata.name}: mutant {t.get('name', f'#{i + 1}')!r}"
        name, mistake, caught_by = t.get("name"), t.get("mistake", {}), t.get("caught_by")
        edits = t.get("edits", [])
        if not isinstance(name, str) or not name.isidentifier():
            raise MutantError(f"{where}: `name` must be a snake_case identifier")
        if any(m.name == name for m in mutants):
            raise MutantError(f"{where}: the name is used twice")
        if any(not isinstance(mistake.get(lang), str) or not mistake[lang].strip()
               for lang in LANGS):
            raise MutantError(f"{where}: needs mistake.en and mistake.zh-TW")
        if not caught_by or not all(isinstance(c, str) and c for c in caught_by):
            raise MutantError(f"{where}: `caught_by` must list hidden test titles")
        if not edits or any(set(e) != {"old", "new"} or not e["old"] for e in edits):
            raise MutantError(f"{where}: needs edits, each with a non-empty `old` and a `new`")
        rules = t.get("rules", [])
        if not isinstance(rules, list) or not all(isinstance(r, str) and r for r in rules):
            raise MutantError(f"{where}: `rules` must list rule ids from rules.toml")
        limit = t.get("time_limit")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int | float)
                                  or not limit > 0):
            raise MutantError(f"{where}: `time_limit` must be a number of seconds > 0")
        mutants.append(Mutant(name, dict(mistake), tuple(caught_by),
                              tuple(Edit(e["old"], e["new"]) for e in edits),
                              bool(t.get("planted", False)), tuple(rules), limit))
    return mutants


def get(kata: Kata, name: str) -> Mutant:
    found = {m.name: m for m in load(kata)}
    if name not in found:
        known = ", ".join(found) or "none"
        raise KeyError(f"{kata.name} has no mutant named {name!r}; known: {known}")
    return found[name]


def apply(text: str, mutant: Mutant) -> str:
    """The text with the mutant's edits applied in order; MutantError if an anchor drifted."""
    for n, edit in enumerate(mutant.edits, start=1):
        count = text.count(edit.old)
        if count != 1:
            found = "does not occur" if count == 0 else f"occurs {count} times"
            raise MutantError(f"mutant {mutant.name!r}, edit {n}: the anchor {found} in the "
                              f"reference (it must occur exactly once): {edit.old!r}")
        text = text.replace(edit.old, edit.new)
    return text


def reference(kata: Kata) -> str:
    return kata.solution_path.read_text(encoding="utf-8")


def source(kata: Kata, mutant: Mutant) -> str:
    return apply(reference(kata), mutant)


def diff(kata: Kata, mutant: Mutant) -> str:
    """The mistake as a unified diff of the reference, two lines of context."""
    rel = kata.solution_path.relative_to(kata.solution_path.parents[2]).as_posix()
    return "".join(difflib.unified_diff(reference(kata).splitlines(keepends=True),
                                        source(kata, mutant).splitlines(keepends=True),
                                        f"a/{rel}", f"b/{rel}", n=2))


def planted_stub(kata: Kata) -> str | None:
    """A debugging kata's stub: the reference with every planted mutant applied, in file order."""
    planted = [m for m in load(kata) if m.planted]
    if not planted:
        return None
    text = reference(kata)
    for mutant in planted:
        text = apply(text, mutant)
    edits = _read(kata).get("stub", {}).get("edits", [])
    stub = Mutant("stub", {}, (), tuple(Edit(e["old"], e["new"]) for e in edits))
    return apply(text, stub)


def materialise(kata: Kata, name: str) -> Path:
    """Write one mutant as `<module>.py` in a fresh folder outside the repository."""
    text = source(kata, get(kata, name))
    folder = Path(tempfile.mkdtemp(prefix=f"kata-mutant-{kata.name}-{name}-"))
    target = folder / f"{kata.module}.py"
    target.write_text(text, encoding="utf-8")
    return target
