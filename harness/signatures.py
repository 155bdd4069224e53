"""Failure signatures: every hidden test title each named mutant fails when the whole suite is
graded, which is what a learner who made that mistake would see.

`harness/suites/<kata>/signatures.toml` keeps them, with every title's level, computed by the
collected grader (`python tools/signatures.py`), never by hand. Its fingerprint covers what a
signature depends on: the suite's Python files (its benchmark aside), the reference solution and
each mutant's edits and time limit (not its prose or caught_by); when any of them changes the file
is stale, and a meta-test says so.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from harness import mutants, tomlfile
from harness.catalog import ROOT, Kata


@dataclass(frozen=True)
class Signatures:
    """One kata's stored signatures."""

    fingerprint: str
    tests: dict[str, int]  # hidden test title -> level, in the suite's order
    signatures: dict[str, frozenset[str]]  # mutant name -> the titles it fails


def path(kata: Kata) -> Path:
    return kata.suite_dir / "signatures.toml"


def fingerprint(kata: Kata) -> str:
    """sha256 of what a signature depends on, in a fixed order (bench.py: no grading imports
    it)."""
    suite = sorted(p for p in kata.suite_dir.rglob("*.py")
                   if p.name != "bench.py" and "__pycache__" not in p.parts)
    digest = hashlib.sha256()
    for file in [*suite, kata.solution_path]:
        digest.update(file.relative_to(ROOT).as_posix().encode() + b"\0")
        digest.update(file.read_bytes() + b"\0")
    for m in mutants.load(kata):
        digest.update(repr((m.name, m.edits, m.time_limit)).encode() + b"\0")
    return digest.hexdigest()


def load(kata: Kata) -> Signatures | None:
    """The stored signatures, None when the kata has none yet."""
    try:
        data = tomlfile.read(path(kata))
    except FileNotFoundError:
        return None
    return Signatures(data["fingerprint"], dict(data.get("tests", {})),
                      {name: frozenset(titles)
                       for name, titles in data.get("signatures", {}).items()})


def stale(kata: Kata) -> str | None:
    """Why the kata's stored signatures cannot be trusted, or None when they are current."""
    stored = load(kata)
    if stored is None:
        return f"{path(kata).relative_to(ROOT)} is missing"
    if stored.fingerprint != fingerprint(kata):
        return f"{path(kata).relative_to(ROOT)} was computed from other suite files, reference " \
               "or mutants"
    return None
