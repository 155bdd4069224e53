"""The likely mistake behind one submit: the named mutants whose failure signatures explain it.

A submit fails a set F of hidden tests; each named mutant fails its own set S, its signature
(harness/signatures.py). The mistakes of the open levels rank by the Jaccard similarity
|F ∩ S| / |F ∪ S|: it grows with the failures a mistake explains, shrinks with each it would add
that the submit does not show, and is 1 only when S equals F. Ties go to the mistake that adds
fewer failures, then to the one listed first in mutants.toml. Both sets are read at the open
levels only. A kata whose signatures.toml is missing or stale raises NoSignatures: better no
likely mistake than a guess from stale data.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from harness import mutants, rules, signatures
from harness.catalog import Kata

SHOWN = 2  # at most this many likely mistakes per submit


@dataclass(frozen=True)
class Likely:
    """One named mistake that would explain a submit's failures."""

    mutant: str  # its name in mutants.toml
    level: int  # the level whose rule it breaks
    score: float  # Jaccard similarity in [0, 1]
    explained: int  # the submit's failures it would also fail
    unexplained: int  # the submit's failures it would not
    added: int  # failures it would add that the submit does not show
    caught_by: tuple[str, ...]  # the first one's hint category is where the mock's next hint goes


@dataclass(frozen=True)
class Mistake:
    name: str
    level: int
    signature: frozenset[str]
    caught_by: tuple[str, ...]


@dataclass(frozen=True)
class Rate:
    """How often a mutant's own failures rank it (or one with the same signature) first."""

    hits: int
    total: int
    missed: tuple[tuple[str, str], ...]  # (mutant, the mistake ranked first instead)
    shared: tuple[tuple[str, ...], ...]  # groups of mutants with one signature: told apart by none

    @property
    def share(self) -> float:
        return self.hits / self.total if self.total else 1.0


class NoSignatures(LookupError):
    """The kata's signatures.toml is missing or stale: see tools/signatures.py."""


@cache
def _mistakes(kata: Kata, fingerprint: str) -> tuple[dict[str, int], tuple[Mistake, ...]]:
    """The kata's titles with their levels, and its mistakes in mutants.toml order."""
    stored = signatures.load(kata)
    levels = {r.id: r.level for r in rules.load(kata)}
    found = []
    for m in mutants.load(kata):
        sig = stored.signatures.get(m.name, frozenset())
        own = [levels[r] for r in m.rules if r in levels] or \
              [stored.tests[t] for t in m.caught_by if t in stored.tests] or [1]
        found.append(Mistake(m.name, min(own), sig, m.caught_by))
    return stored.tests, tuple(found)


def mistakes(kata: Kata) -> tuple[dict[str, int], tuple[Mistake, ...]]:
    """title -> level, and every named mistake with its level and signature.
    NoSignatures when the stored signatures are missing or stale."""
    why = signatures.stale(kata)
    if why:
        raise NoSignatures(f"{kata.name}: {why}; run `python tools/signatures.py {kata.name}`")
    return _mistakes(kata, signatures.fingerprint(kata))


def rank(kata: Kata, failing: Iterable[str], levels: Iterable[int]) -> list[Likely]:
    """Every mistake of the open `levels` that explains at least one of the `failing` titles,
    best first (see the module's docstring). No failures at the open levels: an empty list."""
    tests, found = mistakes(kata)
    open_levels = set(levels)
    shown = {t for t, lvl in tests.items() if lvl in open_levels}
    fails = set(failing) & shown
    ranked = []
    for m in found:
        sig = m.signature & shown
        both = len(sig & fails)
        if m.level in open_levels and both:
            ranked.append(Likely(m.name, m.level, both / len(sig | fails), both,
                                 len(fails) - both, len(sig - fails), m.caught_by))
    return sorted(ranked, key=lambda x: (-x.score, x.added))  # stable: then mutants.toml order


def likely(kata: Kata, failing: Iterable[str], levels: Iterable[int]) -> list[Likely]:
    """At most two likely mistakes for one submit, best first, for the interviewer's watch and
    report and the mock's hint ladder. `failing`: the titles of the submit's failed hidden tests
    (`r.title for r in run.results if r.failed and r.level > 0`); `levels`: those open."""
    return rank(kata, failing, levels)[:SHOWN]


def top1(kata: Kata) -> Rate:
    """For each named mutant, its own failures with every level open: is it ranked first, or a
    mutant with the same signature? Mutants that fail nothing are left out of the count."""
    tests, found = mistakes(kata)
    every = set(tests.values())
    failing = [m for m in found if m.signature]
    groups: dict[frozenset[str], list[str]] = {}
    for m in failing:
        groups.setdefault(m.signature, []).append(m.name)
    missed = []
    for m in failing:
        first = next((likely.mutant for likely in rank(kata, m.signature, every)), "nothing")
        if first not in groups[m.signature]:
            missed.append((m.name, first))
    shared = tuple(tuple(g) for g in groups.values() if len(g) > 1)
    return Rate(len(failing) - len(missed), len(failing), tuple(missed), shared)
