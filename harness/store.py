"""The progress store: an SQLite file under `.kata/` that keeps every attempt.

Every write is one transaction, so a killed process leaves the previous state intact. A file
that is not a database, or a database of another schema (another program's, or a newer kata's),
is moved aside (never deleted) and a fresh store is started. The schema is versioned with
`PRAGMA user_version` and migrated in place when it changes.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from harness.catalog import ROOT
from harness.words import say

# Every table of the file, the mock interview's included: one schema, one version number.
SCHEMA = """
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY,
    kata TEXT NOT NULL,
    impl TEXT NOT NULL,
    at REAL NOT NULL,
    best_level INTEGER NOT NULL,
    passed INTEGER NOT NULL,
    total INTEGER NOT NULL,
    levels TEXT NOT NULL,
    via TEXT NOT NULL DEFAULT 'grade'
);
CREATE TABLE IF NOT EXISTS reveals (kata TEXT NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS mock_sessions (
    id INTEGER PRIMARY KEY,
    kata TEXT NOT NULL,
    file TEXT NOT NULL,
    lang TEXT NOT NULL,
    levels INTEGER NOT NULL,
    minutes REAL NOT NULL,
    started REAL NOT NULL,
    ended REAL,
    reason TEXT,
    open INTEGER UNIQUE CHECK (open = 1),
    mode TEXT NOT NULL DEFAULT 'solo'
);
CREATE TABLE IF NOT EXISTS mock_events (
    id INTEGER PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES mock_sessions(id),
    at REAL NOT NULL,
    kind TEXT NOT NULL,
    level INTEGER NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS mock_events_by_session ON mock_events(session);
CREATE TABLE IF NOT EXISTS rubric_entries (
    id INTEGER PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES mock_sessions(id),
    at REAL NOT NULL,
    item TEXT NOT NULL,
    level INTEGER,
    text TEXT NOT NULL DEFAULT ''
);
"""
# `open` is 1 while a session runs and NULL after: UNIQUE lets many NULLs through but only one 1,
# so the database itself refuses a second open session. `rubric_entries` is an append-only log of
# an interviewer's scoring of a pair session: the latest entry for an item (a dimension, a
# follow-up point, the notes) is its value.

VERSION = 3  # bump it with every change to SCHEMA, and add the step that gets there below
# version -> the statements that turn a file of that version into the next one. Version 0 is a
# store from before versioning: the same tables as version 1, some perhaps not created yet.
# Each step runs after SCHEMA has created the tables a file lacked, so it checks what is there.


def _add_via(db: sqlite3.Connection) -> None:
    """Version 2 records how each attempt was run; every one before was a `kata grade`."""
    if "via" not in _columns(db)["attempts"]:
        db.execute("ALTER TABLE attempts ADD COLUMN via TEXT NOT NULL DEFAULT 'grade'")


def _add_mode(db: sqlite3.Connection) -> None:
    """Version 3 says how each mock session is run (solo, brief, pair); every one before was solo.
    Its rubric_entries table is created by SCHEMA."""
    if "mode" not in _columns(db)["mock_sessions"]:
        db.execute("ALTER TABLE mock_sessions ADD COLUMN mode TEXT NOT NULL DEFAULT 'solo'")


MIGRATIONS: dict[int, list[Callable[[sqlite3.Connection], None]]] = {
    0: [], 1: [_add_via], 2: [_add_mode]}
VIAS = ("grade", "pytest", "test", "mock")  # kata grade, pytest katas/<kata>, kata test, a mock
DERIVED = ("progress.png",)  # files drawn from the store: stale once a fresh store starts


class StoreError(Exception):
    """The store cannot be used right now (locked by another process, unwritable, ...)."""


@dataclass(frozen=True)
class Attempt:
    kata: str
    impl: str
    at: float
    best_level: int
    passed: int
    total: int
    levels: dict[str, list[int]]
    via: str = "grade"  # how it was run: one of VIAS


def own(a: Attempt) -> bool:
    """A run of the learner's own work. The grader never records the reference or a mutant;
    a store written before it refused them may still hold some."""
    return a.impl != "solution" and not a.impl.startswith("mutant:")


def home() -> Path:
    return Path(os.environ.get("KATA_HOME", ROOT / ".kata"))


class Store:
    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path else home() / "progress.db"
        self.notice = ""  # set when an unusable file had to be moved aside
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            problem = self._prepare()
        except sqlite3.DatabaseError as exc:
            if _is_locked(exc):
                raise StoreError(say("store.locked", path=self.path)) from exc
            if isinstance(exc, sqlite3.OperationalError):  # read-only, disk full: not the file
                raise StoreError(say("store.unusable", path=self.path, error=exc)) from exc
            problem = (say("store.corrupt"), "corrupt")
        if problem:
            why, tag = problem
            stamp = time.strftime("%Y%m%d-%H%M%S")
            backup = self.path.with_name(f"{self.path.name}.{tag}-{stamp}")
            shutil.move(self.path, backup)
            for name in DERIVED:
                self.path.with_name(name).unlink(missing_ok=True)
            self.notice = say("store.moved", path=self.path, why=why, backup=backup)
            if self._prepare():
                raise StoreError(say("store.no_fresh", path=self.path))

    def _prepare(self) -> tuple[str, str] | None:
        """Create or migrate the schema in one transaction; (why, tag) when the file is not ours.
        """
        db = sqlite3.connect(self.path, timeout=5.0, isolation_level=None)
        try:
            db.execute("BEGIN IMMEDIATE")  # two commands starting at once migrate once
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > VERSION:
                db.execute("ROLLBACK")
                return say("store.newer", version=version), "newer"
            if version == 0 and _foreign(db, columns=False):  # columns: checked once migrated
                db.execute("ROLLBACK")
                return say("store.foreign"), "foreign"
            for statement in _statements(SCHEMA):
                db.execute(statement)
            for step in range(version, VERSION):
                for migrate in MIGRATIONS[step]:
                    migrate(db)
            if _foreign(db):
                db.execute("ROLLBACK")
                return say("store.foreign"), "foreign"
            db.execute(f"PRAGMA user_version = {VERSION}")
            db.execute("COMMIT")
        finally:
            db.close()
        return None

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=5.0)
        try:
            with db:  # one transaction: committed on success, rolled back on any error
                yield db
        except sqlite3.OperationalError as exc:
            if _is_locked(exc):
                raise StoreError(say("store.locked", path=self.path)) from exc
            raise
        finally:
            db.close()

    def add_attempt(self, a: Attempt) -> None:
        with self._connect() as db:
            db.execute(
                "INSERT INTO attempts (kata, impl, at, best_level, passed, total, levels, via) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (a.kata, a.impl, a.at, a.best_level, a.passed, a.total, json.dumps(a.levels),
                 a.via))

    def attempts(self, kata: str | None = None) -> list[Attempt]:
        query = "SELECT kata, impl, at, best_level, passed, total, levels, via FROM attempts"
        args: tuple = ()
        if kata:
            query, args = query + " WHERE kata = ?", (kata,)
        with self._connect() as db:
            rows = db.execute(query + " ORDER BY at", args).fetchall()
        return [Attempt(*row[:6], json.loads(row[6]), row[7]) for row in rows]

    def best(self, kata: str) -> Attempt | None:
        """The best run of any of the learner's files: the stub, `--impl=PATH`, a mock's file."""
        mine = [a for a in self.attempts(kata) if own(a)]
        return max(mine, key=lambda a: (a.best_level, a.passed, -a.at), default=None)

    def add_reveal(self, kata: str) -> None:
        with self._connect() as db:
            db.execute("INSERT INTO reveals (kata, at) VALUES (?, ?)", (kata, time.time()))

    def revealed(self, kata: str) -> bool:
        with self._connect() as db:
            row = db.execute("SELECT 1 FROM reveals WHERE kata = ?", (kata,)).fetchone()
        return row is not None

    def reveals(self) -> dict[str, float]:
        """kata -> when you first looked at its reference solution."""
        with self._connect() as db:
            rows = db.execute("SELECT kata, MIN(at) FROM reveals GROUP BY kata").fetchall()
        return dict(rows)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """For features with tables of their own (mock sessions): one atomic write."""
        with self._connect() as db:
            yield db


def _statements(script: str) -> list[str]:
    return [part.strip() for part in script.split(";") if part.strip()]


def _columns(db: sqlite3.Connection) -> dict[str, set[str]]:
    tables = [row[0] for row in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    return {t: {row[1] for row in db.execute(f'PRAGMA table_info("{t}")')} for t in tables}


def _expected() -> dict[str, set[str]]:
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(SCHEMA)
        return _columns(db)
    finally:
        db.close()


def _foreign(db: sqlite3.Connection, columns: bool = True) -> bool:
    """True when the file holds tables, none of them ours, or (`columns`) one of ours lacks a
    column."""
    found, wanted = _columns(db), _expected()
    if found and not set(found) & set(wanted):
        return True
    return columns and any(not wanted[t] <= cols for t, cols in found.items() if t in wanted)


def _is_locked(exc: sqlite3.DatabaseError) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)
