"""The likely mistake behind one submit: the named mutants whose failure signatures explain it.

A submit fails a set of hidden tests; each named mutant of the kata fails its own set, its
signature (harness/signatures.py). The mistakes of the open levels are ranked by the Jaccard
similarity of the two sets, |F ∩ S| / |F ∪ S|: it grows with the failures a mistake explains and
shrinks with each failure it would add that the submit does not show, and it is 1 only for a
signature equal to the submit's failures. Ties go to the mistake that adds fewer failures, then
to the one listed first in mutants.toml, so the ranking is deterministic.

For the interviewer's watch and report and the mock's hint ladder:

    likely(kata, failing_titles, open_levels) -> at most two Likely records, best first

e.g. `likely(kata, {r.title for r in run.results if r.failed and r.level > 0}, range(1, open + 1))`
for one submit's KataRun; each record's `mutant` gives its text by `mutants.get(kata, name)`, and
the hint category of `caught_by[0]` (the run's results carry every title's hint) is where the
mock's next hint goes. A kata whose signatures.toml is missing or stale raises NoSignatures:
show no likely mistake rather than a guess from stale data.

Both sets are read at the open levels only: a test of a level not open yet neither counts as a
failure to explain nor as one a mistake would add.
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

    mutant: str  # its name in mutants.toml (mutants.get gives its text in each language)
    level: int  # the level whose rule it breaks
    score: float  # Jaccard similarity in [0, 1]; 1: its signature is exactly the failures
    explained: int  # the submit's failures it would also fail
    unexplained: int  # the submit's failures it would not
    added: int  # failures it would add that the submit does not show
    caught_by: tuple[str, ...]  # the tests named to catch it; the first one's hint category is
    #                             the mistake's (the mock's next hint goes there)


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
    for order, m in enumerate(found):
        if m.level not in open_levels:
            continue
        sig = m.signature & shown
        both = len(sig & fails)
        if not both:
            continue
        score = both / len(sig | fails)
        ranked.append((-score, len(sig - fails), order,
                       Likely(m.name, m.level, score, both, len(fails) - both, len(sig - fails),
                              m.caught_by)))
    return [entry[-1] for entry in sorted(ranked, key=lambda e: e[:3])]


def likely(kata: Kata, failing: Iterable[str], levels: Iterable[int]) -> list[Likely]:
    """At most two likely mistakes for one submit, best first: what the interviewer's watch and
    report show, and where the mock's next hint goes (the best one's hint category: the
    category of its caught_by tests). `failing`: the titles of the submit's failed hidden tests;
    `levels`: the levels open in the session. NoSignatures when the kata's signatures are stale.
    """
    return rank(kata, failing, levels)[:SHOWN]


def top1(kata: Kata) -> Rate:
    """For each named mutant, its own failures with every level open: is it ranked first, or a
    mutant with the same signature? Mutants that fail nothing are left out of the count."""
    tests, found = mistakes(kata)
    every = set(tests.values())
    groups: dict[frozenset[str], list[str]] = {}
    for m in found:
        if m.signature:
            groups.setdefault(m.signature, []).append(m.name)
    sig = {m.name: m.signature for m in found}
    hits, missed = 0, []
    for m in found:
        if not m.signature:
            continue
        ranked = rank(kata, m.signature, every)
        first = ranked[0].mutant if ranked else "nothing"
        if first == m.name or sig.get(first) == m.signature:
            hits += 1
        else:
            missed.append((m.name, first))
    shared = tuple(tuple(g) for g in groups.values() if len(g) > 1)
    return Rate(hits, sum(1 for m in found if m.signature), tuple(missed), shared)
