"""The kata's classic mistakes (its mutants), and how often the diagnosis ranks each one first."""

from __future__ import annotations

from collections import Counter

from harness import catalog, diagnosis, mutants
from harness.interviewer.timeline import likely
from harness.session.log import Session


def load(kata: catalog.Kata) -> list[mutants.Mutant]:
    """The kata's mutants; none when its mutants.toml is malformed (the meta-tests report it)."""
    try:
        return mutants.load(kata)
    except mutants.MutantError:
        return []


def ranked_first(kata: catalog.Kata, sessions: list[Session]) -> Counter:
    """mistake -> how often the diagnosis ranked it first: over every submit of the kata kept in
    the store, and over each named mistake's own failures judged at its level (so a fresh
    install still has an order: the mistakes whose failures others' resemble come first)."""
    found: Counter = Counter()
    for session in sessions:
        for submit in session.submits:
            found.update(m.mutant for m in likely(kata, submit)[:1])
    try:
        _, known = diagnosis.mistakes(kata)
    except diagnosis.NoSignatures:
        return found
    for m in known:
        if m.signature:
            first = diagnosis.likely(kata, m.signature, range(1, m.level + 1))[:1]
            found.update(f.mutant for f in first)
    return found
