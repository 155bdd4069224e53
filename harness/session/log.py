"""A mock interview's state: one row per session and an append-only log of what happened in it
(the tables mock_sessions and mock_events of harness.store.SCHEMA).

State is derived from the log with set semantics (the first pass of a level counts, a question
asked twice counts once), so two `kata` commands racing on one session cannot double anything.
Every step is one transaction: a killed process loses at most the step it was writing.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import count

from harness.store import Store


class Reason(StrEnum):
    """Why a session ended."""
    PASSED = "passed"
    TIME = "time"
    ENDED = "ended"


class Mode(StrEnum):
    """How a session is run."""
    SOLO = "solo"  # the tool plays the interviewer; each level opens with its full prompt
    BRIEF = "brief"  # solo, each level opens with its brief: the rules are earned by asking
    PAIR = "pair"  # a person plays the interviewer: briefs, and the tool answers nothing


class Kind(StrEnum):
    SUBMIT = "submit"  # data: hidden [passed, total], failures [[level, title, hint, verdict]], ...
    PASS = "pass"  # the first full pass of `level`
    HINT = "hint"  # data: category, step (0 = nudge, 1 = pointer); by: "interviewer" in pairs
    ASK = "ask"  # data: question (its index in kata.toml), how (Asked); by: "interviewer"
    SPEC = "spec"  # the candidate opened the full prompt of the levels up to `level`
    NOTE = "note"  # data: text, dimension (a rubric id or ""), share (with the candidate)
    UNDO = "undo"  # data: event (the id of the hint, answer or note taken back)
    LOOK = "look"  # the candidate ran a command the interviewer should know of; data: what, detail
    LABEL = "label"  # data: candidate (how the interviewer names them in `sessions`)


TAKEN_BACK = (Kind.HINT, Kind.ASK, Kind.NOTE)  # what `kata interviewer undo` can take back


class Asked(StrEnum):
    """How a question was asked: the scorecard counts the two apart."""
    OWN = "own"  # in the candidate's own words, and matched (the default of an older log)
    PICKED = "picked"  # by its number: from `kata mock questions` or an ask-back


@dataclass(frozen=True)
class Failure:
    """A failing hidden test of a submit, as the candidate may see it."""
    level: int
    title: str
    hint: str | None  # its hint category
    verdict: dict[str, str] | str  # in each language (in one: an older log)

    def said(self, lang: str) -> str:
        """The verdict in `lang`, where it was recorded in it."""
        return self.verdict if isinstance(self.verdict, str) else self.verdict[lang]


@dataclass(frozen=True)
class Submit:
    """A submit event read back: what the scorecard, the hints and the timeline need."""
    at: float
    level: int  # the level judged
    hidden: tuple[int, int]  # hidden tests passed, total
    counts: dict[int, tuple[int, int]]  # level -> (passed, total)
    failures: tuple[Failure, ...]
    import_error: str | None
    time_up: bool
    code: str | None = None  # the candidate's file as graded (None: missing, or an old session)

    @classmethod
    def of(cls, e: Event) -> Submit:
        d = e.data
        return cls(e.at, e.level, tuple(d.get("hidden", (0, 0))),
                   {int(k): tuple(v) for k, v in d.get("counts", {}).items()},
                   tuple(Failure(*f) for f in d.get("failures", [])), d.get("import_error"),
                   bool(d.get("time_up")), d.get("code"))

    def shown(self) -> list[Failure]:
        """The failures of the levels the candidate had been shown when submitting."""
        return [f for f in self.failures if 0 < f.level <= self.level]


class SessionError(Exception):
    """A session cannot be started or found."""


@dataclass(frozen=True)
class Event:
    at: float
    kind: Kind
    level: int
    data: dict
    id: int = 0  # its row in the log: what an undo names


@dataclass
class Session:
    id: int
    kata: str
    file: str
    lang: str
    levels: int  # the kata's level count when the session started
    minutes: float
    started: float
    ended: float | None = None
    reason: Reason | None = None
    mode: Mode = Mode.SOLO
    events: list[Event] = field(default_factory=list)

    @property
    def is_open(self) -> bool:
        return self.ended is None

    @property
    def briefed(self) -> bool:
        """Each level opens with its brief rather than its full prompt."""
        return self.mode != Mode.SOLO

    @property
    def deadline(self) -> float:
        return self.started + self.minutes * 60

    def left(self, now: float) -> float:
        return max(0.0, self.deadline - now)

    @property
    def live(self) -> list[Event]:
        """The events that stand: neither an undo nor one taken back."""
        undone = {e.data["event"] for e in self.events if e.kind == Kind.UNDO}
        return [e for e in self.events if e.kind != Kind.UNDO and e.id not in undone]

    def of(self, kind: Kind) -> list[Event]:
        return [e for e in self.live if e.kind == kind]

    @property
    def candidate(self) -> str:
        """The candidate's label as the interviewer gave it (the latest), or ""."""
        labels = self.of(Kind.LABEL)
        return labels[-1].data["candidate"] if labels else ""

    @property
    def passed(self) -> dict[int, float]:
        """level -> when it first passed in full."""
        first: dict[int, float] = {}
        for e in self.of(Kind.PASS):
            first[e.level] = min(e.at, first.get(e.level, e.at))
        return first

    @property
    def level(self) -> int:
        """The level being worked on: the first one not passed (levels + 1 once all have)."""
        passed = self.passed
        return next(n for n in count(1) if n not in passed)

    @property
    def levels_passed(self) -> int:
        return min(self.level - 1, self.levels)

    @property
    def done(self) -> bool:
        return self.level > self.levels

    def level_times(self) -> list[tuple[int, float, float]]:
        """(level, seconds into the session, seconds it took) for each level passed, in order."""
        times, previous = [], self.started
        for level in range(1, self.levels_passed + 1):
            at = self.passed[level]
            times.append((level, at - self.started, at - previous))
            previous = at
        return times

    @property
    def asked(self) -> list[int]:
        """Every question answered, however it was asked."""
        return sorted(self.first_asked())

    @property
    def asked_own(self) -> list[int]:
        """The questions asked in the candidate's own words and matched (or, in a pair session,
        answered by the interviewer); the rest of `asked` were picked from a list or by number."""
        return sorted(self.first_asked(Asked.OWN))

    def first_asked(self, how: Asked | None = None) -> dict[int, tuple[float, int]]:
        """question -> (seconds into the session, level) when it was first asked (`how`: so)."""
        first: dict[int, tuple[float, int]] = {}
        for e in self.of(Kind.ASK):
            if how is None or e.data.get("how", Asked.OWN) == how:
                first.setdefault(e.data["question"], (e.at - self.started, e.level))
        return first

    def spec_opened(self) -> dict[int, float]:
        """level -> seconds into the session when its full prompt was first opened."""
        first: dict[int, float] = {}
        for e in self.of(Kind.SPEC):
            for level in range(1, e.level + 1):
                first.setdefault(level, e.at - self.started)
        return first

    @property
    def hints(self) -> list[tuple[str, int]]:
        """(category, step) of every hint shown, once each, in the order they were first shown."""
        return list(dict.fromkeys((e.data["category"], e.data["step"]) for e in self.of(Kind.HINT)))

    @property
    def submits(self) -> list[Submit]:
        return [Submit.of(e) for e in self.of(Kind.SUBMIT)]

    @property
    def last_submit(self) -> Submit | None:
        return next(reversed(self.submits), None)

    @property
    def score(self) -> float | None:
        """The share of hidden tests the last submit passed (None before any submit)."""
        last = self.last_submit
        return last.hidden[0] / last.hidden[1] if last and last.hidden[1] else None


@dataclass(frozen=True)
class Sessions:
    """The mock sessions kept in the progress store, next to its attempts."""
    store: Store

    def start(self, kata: str, file: str, lang: str, levels: int, minutes: float,
              at: float, mode: Mode = Mode.SOLO) -> Session:
        try:
            with self.store.transaction() as db:
                sid = db.execute("INSERT INTO mock_sessions (kata, file, lang, levels, minutes, "
                                 "started, open, mode) VALUES (?, ?, ?, ?, ?, ?, 1, ?)",
                                 (kata, file, lang, levels, minutes, at, mode.value)).lastrowid
        except sqlite3.IntegrityError as exc:
            current = self.current()
            raise SessionError(current.kata if current else "?") from exc
        return self.get(sid)

    def record(self, session: Session, at: float, *entries: tuple[Kind, int, dict],
               finish: Reason | None = None) -> None:
        """Add (kind, level, data) events, and close the session too when `finish` is given,
        all in one transaction. Closing twice (another command got there first) changes nothing.
        """
        added = []
        with self.store.transaction() as db:
            for kind, level, data in entries:
                row = db.execute("INSERT INTO mock_events (session, at, kind, level, data) "
                                 "VALUES (?, ?, ?, ?, ?)",
                                 (session.id, at, kind.value, level, json.dumps(data))).lastrowid
                added.append(Event(at, kind, level, data, row))
            if finish is not None:
                db.execute("UPDATE mock_sessions SET ended = ?, reason = ?, open = NULL "
                           "WHERE id = ? AND ended IS NULL", (at, finish.value, session.id))
        session.events += added
        if finish is not None:
            fresh = self.get(session.id)
            session.ended, session.reason = fresh.ended, fresh.reason

    def finish(self, session: Session, reason: Reason, at: float) -> None:
        self.record(session, at, finish=reason)

    def current(self) -> Session | None:
        """The open session, if there is one."""
        return next(iter(self._load("WHERE open = 1")), None)

    def last_finished(self) -> Session | None:
        found = self._load("WHERE ended IS NOT NULL")
        return max(found, key=lambda s: (s.ended, s.id), default=None)

    def last_pair(self) -> Session | None:
        """The pair session started last, open or finished."""
        return next(reversed(self.pairs()), None)

    def pairs(self) -> list[Session]:
        """Every pair session, the first started first."""
        return self._load("WHERE mode = ?", (Mode.PAIR.value,))

    def get(self, sid: int) -> Session:
        found = self._load("WHERE id = ?", (sid,))
        if not found:
            raise SessionError(f"no session {sid}")
        return found[0]

    def history(self, kata: str | None = None) -> list[Session]:
        return self._load("WHERE kata = ?", (kata,)) if kata else self._load("")

    def _load(self, where: str, args: tuple = ()) -> list[Session]:
        with self.store.transaction() as db:
            rows = db.execute("SELECT id, kata, file, lang, levels, minutes, started, ended, "
                              f"reason, mode FROM mock_sessions {where} ORDER BY started, id",
                              args).fetchall()
            sessions = [Session(*row[:8], Reason(row[8]) if row[8] else None, Mode(row[9]))
                        for row in rows]
            for s in sessions:
                events = db.execute("SELECT at, kind, level, data, id FROM mock_events "
                                    "WHERE session = ? ORDER BY id", (s.id,)).fetchall()
                s.events = [Event(at, Kind(kind), level, json.loads(data), i)
                            for at, kind, level, data, i in events]
        return sessions
