"""Which classic mistakes (the kata's mutants) a failing hidden test points at, and at which level
each one shows first."""

from __future__ import annotations

from harness import catalog, mutants


def load(kata: catalog.Kata) -> list[mutants.Mutant]:
    """The kata's mutants; none when its mutants.toml is malformed (the meta-tests report it)."""
    try:
        return mutants.load(kata)
    except mutants.MutantError:
        return []


def likely(found: list[mutants.Mutant], title: str) -> list[mutants.Mutant]:
    """The mistakes whose `caught_by` names this failing title."""
    return [m for m in found if title in m.caught_by]


def level_of(mutant: mutants.Mutant, levels: dict[str, int]) -> int | None:
    """The first level whose hidden tests catch it (None when no title it names exists)."""
    return min((levels[t] for t in mutant.caught_by if t in levels), default=None)
