"""The rubric: seven dimensions on one anchored scale (1 poor, 2 mixed, 3 good, 4 excellent), and
an interviewer's scores of a pair session, kept in the progress store.

Scores are an append-only log (`rubric_entries`): the latest entry for an item is its value, so
scoring in several goes, or correcting a level, loses nothing and two writers cannot tear a
score. Items: a dimension's id, `point:F.P` (follow-up F's point P, both from 1), `overall` (the
recommendation, on its own anchored scale) and `notes`.

A dimension's level 0 is "not observed"; a point's -1 is "not asked" (its follow-up was never put
to the candidate), shown as such, never as a miss.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from harness import catalog, tomlfile
from harness.store import Store

LEVELS = (1, 2, 3, 4)
NOT_OBSERVED = 0  # a dimension's level when nothing in the round showed it
NOT_ASKED = -1  # a follow-up point's value when its question was never asked
NOTES = "notes"
POINT = "point:"
OVERALL = "overall"


@dataclass(frozen=True)
class Dimension:
    id: str
    name: dict[str, str]
    anchors: dict[str, list[str]]  # lang -> the anchors of levels 1 to 4


@cache
def _data() -> dict:
    return tomlfile.read(Path(__file__).with_name("rubric.toml"))


def dimensions() -> list[Dimension]:
    return [Dimension(**d) for d in _data()["dimensions"]]


def level_name(level: int, lang: str) -> str:
    return _data()["levels"][lang][level - 1]


def overall_name(level: int, lang: str) -> str:
    return _data()["overall"]["levels"][lang][level - 1]


def overall_anchors(lang: str) -> list[str]:
    return _data()["overall"]["anchors"][lang]


def kata_anchors(kata: catalog.Kata, dimension: str, lang: str) -> list[str]:
    """The kata's own anchors of a dimension, levels 1 to 4 (empty when it has none)."""
    own = kata.spec.rubric.get(dimension)
    return own(lang) if own else []


def point_item(followup: int, point: int) -> str:
    return f"{POINT}{followup}.{point}"


def points(kata: catalog.Kata) -> list[tuple[int, int]]:
    """(follow-up, point), both from 1, of every point a good answer covers."""
    return [(f, p) for f, followup in enumerate(kata.spec.followups, start=1)
            for p in range(1, len(followup.points.en) + 1)]


@dataclass
class Score:
    """One session's rubric as it stands: the latest entry of each item."""
    levels: dict[str, tuple[int, str]] = field(default_factory=dict)  # dimension -> level, why
    covered: dict[tuple[int, int], bool | None] = field(default_factory=dict)  # None: not asked
    overall: tuple[int, str] | None = None  # the recommendation's level and its evidence
    notes: str = ""
    at: float | None = None  # the latest entry's time

    @property
    def empty(self) -> bool:
        return self.at is None


@dataclass(frozen=True)
class Scores:
    """The rubric entries in the progress store."""
    store: Store

    def record(self, session: int, at: float, entries: list[tuple[str, int | None, str]]) -> None:
        """(item, level, text) entries, in one transaction."""
        with self.store.transaction() as db:
            db.executemany("INSERT INTO rubric_entries (session, at, item, level, text) "
                           "VALUES (?, ?, ?, ?, ?)",
                           [(session, at, item, level, text) for item, level, text in entries])

    def of(self, session: int) -> Score:
        with self.store.transaction() as db:
            rows = db.execute("SELECT at, item, level, text FROM rubric_entries WHERE session = ? "
                              "ORDER BY id", (session,)).fetchall()
        score = Score()
        for at, item, level, text in rows:
            score.at = at
            if item == NOTES:
                score.notes = text
            elif item.startswith(POINT):
                f, p = item.removeprefix(POINT).split(".")
                score.covered[int(f), int(p)] = None if level == NOT_ASKED else bool(level)
            elif item == OVERALL:
                score.overall = (level, text)
            else:
                score.levels[item] = (level, text)
        return score
