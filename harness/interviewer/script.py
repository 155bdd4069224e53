"""The interviewer's script of a kata: one sheet per level, then the follow-ups and the rubric.

Each sheet holds, in the order an interviewer needs them: the time plan, the brief to read out,
the full prompt as the answer key, the clarifying questions with their answers (and what the
level leaves open), the hint ladder of every hint category its hidden tests use, and the classic
mistakes that show first at that level with the titles that catch them. Built as plain data, so
the terminal and the HTML page show the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness import catalog
from harness.interviewer import mistakes
from harness.interviewer.suite import HiddenTest, levels_by_title
from harness.session import rubric


@dataclass(frozen=True)
class Plan:
    """Whole minutes into the session, each step at least a minute after the one before."""
    start: int
    end: int
    nudges: int  # when to give the nudges if the level still fails
    pointers: int  # when to give the pointers if it still fails
    followups: int  # when the follow-ups start, whatever the level


@dataclass(frozen=True)
class Question:
    number: int  # from 1, as `kata mock questions` and `kata interviewer answered` number them
    id: str
    ask: str
    answer: str


@dataclass(frozen=True)
class HintLadder:
    category: str
    nudge: str
    pointer: str
    titles: tuple[str, ...]  # the hidden tests of the level that use it


@dataclass(frozen=True)
class Mistake:
    name: str
    text: str
    caught_by: tuple[str, ...]
    planted: bool


@dataclass
class Sheet:
    level: int
    title: str
    brief: str | None
    prompt: str
    plan: Plan
    left_open: str | None
    questions: list[Question] = field(default_factory=list)
    hints: list[HintLadder] = field(default_factory=list)
    mistakes: list[Mistake] = field(default_factory=list)
    top: list[tuple[Mistake, int]] = field(default_factory=list)  # ranked first most often


TOP = 5  # mistakes a sheet lists first; the rest are folded after them


@dataclass(frozen=True)
class Followup:
    question: str
    points: tuple[str, ...]


@dataclass(frozen=True)
class Anchored:
    id: str
    name: str
    anchors: tuple[str, ...]  # levels 1 to 4
    own: tuple[str, ...]  # the kata's own anchors, levels 1 to 4, or ()


@dataclass
class Script:
    kata: str
    lang: str
    title: str
    minutes: float
    sheets: list[Sheet]
    followups: list[Followup]
    selfcheck: list[str]
    other_hints: list[HintLadder]  # categories no hidden test uses
    other_mistakes: list[Mistake]  # mutants whose titles no hidden test has
    rubric: list[Anchored]
    overall: tuple[str, ...]  # the recommendation's anchors, levels 1 to 4


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


def build(kata: catalog.Kata, lang: str, tests: list[HiddenTest],
          firsts: dict[str, int] | None = None) -> Script:
    """`firsts`: how often the diagnosis ranked each mistake first (mistakes.ranked_first)."""
    spec = kata.spec
    levels = levels_by_title(tests)
    plans = plan(float(spec.minutes), kata.num_levels)
    sheets = [Sheet(lv.n, lv.title(lang), lv.brief(lang) if lv.brief else None, lv.prompt(lang),
                    plans[lv.n - 1], lv.open(lang) if lv.open else None) for lv in spec.levels]
    for q in spec.questions:
        sheets[min(q.level, kata.num_levels) - 1].questions.append(
            Question(q.number, q.id, q.ask(lang), q.answer(lang)))
    hints, placed = spec.hints, set()
    for sheet in sheets:
        own = [t for t in tests if t.level == sheet.level]
        for category in dict.fromkeys(t.hint for t in own if t.hint in hints):
            placed.add(category)
            titles = tuple(dict.fromkeys(t.title for t in own if t.hint == category))
            sheet.hints.append(_ladder(category, hints[category](lang), titles))
    other_hints = [_ladder(c, texts(lang), ()) for c, texts in hints.items() if c not in placed]
    other_mistakes = []
    for m in mistakes.load(kata):
        mistake = Mistake(m.name, m.mistake[lang], m.caught_by, m.planted)
        level = mistakes.level_of(m, levels)
        (sheets[level - 1].mistakes if level else other_mistakes).append(mistake)
    for sheet in sheets:  # stable: ties stay in mutants.toml's order
        ranked = sorted(sheet.mistakes, key=lambda m: -(firsts or {}).get(m.name, 0))
        sheet.top = [(m, firsts[m.name]) for m in ranked[:TOP] if (firsts or {}).get(m.name)]
    followups = [Followup(f.question(lang), tuple(f.points(lang))) for f in spec.followups]
    anchored = [Anchored(d.id, d.name[lang], tuple(d.anchors[lang]),
                         tuple(rubric.kata_anchors(kata, d.id, lang)))
                for d in rubric.dimensions()]
    return Script(kata.name, lang, kata.title(lang), float(spec.minutes), sheets, followups,
                  list(spec.selfcheck(lang)), other_hints, other_mistakes, anchored,
                  tuple(rubric.overall_anchors(lang)))


def _ladder(category: str, texts: list[str], titles: tuple[str, ...]) -> HintLadder:
    return HintLadder(category, texts[0], texts[1], titles)
