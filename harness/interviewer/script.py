"""The interviewer's script of a kata: one sheet per level (the time plan, its questions, the
hint categories its hidden tests use and the classic mistakes, its mutants, that show first at
it), then the follow-ups and the rubric. It points into the kata's metadata and mutants; document
lays it out in one language."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from harness import catalog, diagnosis, metadata, mutants
from harness.interviewer.suite import HiddenTest
from harness.interviewer.timeline import likely
from harness.session.log import Session

TOP = 5  # mistakes a sheet lists first; the rest are folded after them


@dataclass(frozen=True)
class Plan:
    """Whole minutes into the session, each step at least a minute after the one before."""
    start: int
    end: int
    nudges: int  # when to give the nudges if the level still fails
    pointers: int  # when to give the pointers if it still fails
    followups: int  # when the follow-ups start, whatever the level


@dataclass
class Sheet:
    level: metadata.Level
    plan: Plan
    questions: list[metadata.Question] = field(default_factory=list)
    hints: dict[str, list[str]] = field(default_factory=dict)  # category -> titles using it
    mistakes: list[mutants.Mutant] = field(default_factory=list)
    top: list[tuple[mutants.Mutant, int]] = field(default_factory=list)  # ranked first most often


@dataclass
class Script:
    kata: catalog.Kata
    lang: str
    sheets: list[Sheet]
    other_hints: list[str]  # categories no hidden test uses
    other_mistakes: list[mutants.Mutant]  # mutants whose titles no hidden test has
    followups: tuple[metadata.Followup, ...]
    selfcheck: list[str]


def plan(minutes: float, levels: int) -> list[Plan]:
    """An even split of the clock in whole minutes, an eighth of it (one minute at least) kept
    for the follow-ups. The nudges come when a level should have passed, the pointers a third of
    a level's time later; both at least a minute apart and before the follow-ups."""
    followups = round(minutes) - max(1, round(minutes / 8))
    each = followups / levels
    plans = []
    for n in range(levels):
        pointers = min(round((n + 4 / 3) * each), followups - 1)
        nudges = min(round((n + 1) * each), pointers - 1)
        plans.append(Plan(round(n * each), round((n + 1) * each), nudges, pointers, followups))
    return plans


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


def build(kata: catalog.Kata, lang: str, tests: list[HiddenTest],
          firsts: dict[str, int] | None = None) -> Script:
    """`firsts`: how often the diagnosis ranked each mistake first (ranked_first)."""
    spec, firsts = kata.spec, firsts or {}
    plans = plan(float(spec.minutes), kata.num_levels)
    sheets = [Sheet(level, plans[level.n - 1]) for level in spec.levels]
    for q in spec.questions:
        sheets[min(q.level, kata.num_levels) - 1].questions.append(q)
    for t in tests:
        if t.hint in spec.hints and 1 <= t.level <= len(sheets):
            titles = sheets[t.level - 1].hints.setdefault(t.hint, [])
            if t.title not in titles:
                titles.append(t.title)
    placed = {category for sheet in sheets for category in sheet.hints}
    try:
        known = mutants.load(kata)
    except mutants.MutantError:  # malformed: none listed (the meta-tests report it)
        known = []
    other_mistakes = []
    for m in known:  # at the first level whose hidden tests catch it
        level = min((t.level for t in tests if t.title in m.caught_by), default=None)
        (sheets[level - 1].mistakes if level else other_mistakes).append(m)
    for sheet in sheets:  # stable: ties stay in mutants.toml's order
        ranked = sorted(sheet.mistakes, key=lambda m: -firsts.get(m.name, 0))
        sheet.top = [(m, firsts[m.name]) for m in ranked[:TOP] if firsts.get(m.name)]
    return Script(kata, lang, sheets, [c for c in spec.hints if c not in placed], other_mistakes,
                  spec.followups, spec.selfcheck(lang))
