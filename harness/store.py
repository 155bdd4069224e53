"""The progress store: an SQLite file under `.kata/` that keeps every attempt.

Every write is one transaction, so a killed process leaves the previous state intact. A file
that is not a database, or a database of another schema (another program's, or a newer kata's),
is moved aside (never deleted) and a fresh store is started. The schema (schema.sql) is versioned
with `PRAGMA user_version` and migrated in place when it changes.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import astuple, dataclass
from pathlib import Path

from harness.catalog import ROOT
from harness.words import say

SCHEMA = Path(__file__).with_name("schema.sql").read_text(encoding="utf-8")
VERSION = 3  # bump it with every change to SCHEMA, and add the step that gets there below
# version -> the column that turns a file of that version into the next one. Version 0 is a
# store from before versioning: the tables of version 1, some perhaps not created yet. SCHEMA
# runs first and creates the tables a file lacks, whole, so a step adds only missing columns.
MIGRATIONS = {
    1: ("attempts", "via TEXT NOT NULL DEFAULT 'grade'"),  # before: every attempt a `kata grade`
    2: ("mock_sessions", "mode TEXT NOT NULL DEFAULT 'solo'"),  # before: every session solo
}
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
            backup = self.path.with_name(f"{self.path.name}.{tag}-{time.strftime('%Y%m%d-%H%M%S')}")
            shutil.move(self.path, backup)
            for name in DERIVED:
                self.path.with_name(name).unlink(missing_ok=True)
            self.notice = say("store.moved", path=self.path, why=why, backup=backup)
            if self._prepare():
                raise StoreError(say("store.no_fresh", path=self.path))

    def _prepare(self) -> tuple[str, str] | None:
        """Create or migrate the schema in one transaction; (why, tag) when the file is not ours."""
        with closing(sqlite3.connect(self.path, timeout=5.0, isolation_level=None)) as db:
            db.execute("BEGIN IMMEDIATE")  # two commands starting at once migrate once
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > VERSION:
                problem = say("store.newer", version=version), "newer"
            elif version == 0 and _foreign(db, columns=False):  # columns: checked once migrated
                problem = say("store.foreign"), "foreign"
            else:
                for statement in SCHEMA.split(";"):
                    db.execute(statement)
                for step, (table, column) in MIGRATIONS.items():
                    if step >= version and column.split()[0] not in _columns(db)[table]:
                        db.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
                problem = (say("store.foreign"), "foreign") if _foreign(db) else None
            if problem:
                db.execute("ROLLBACK")
                return problem
            db.execute(f"PRAGMA user_version = {VERSION}")
            db.execute("COMMIT")
        return None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic write or read, for the store's own tables and the mock sessions'."""
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
        with self.transaction() as db:
            db.execute("INSERT INTO attempts (kata, impl, at, best_level, passed, total, levels, "
                       "via) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       (*astuple(a)[:6], json.dumps(a.levels), a.via))

    def attempts(self, kata: str | None = None) -> list[Attempt]:
        where, args = (" WHERE kata = ?", (kata,)) if kata else ("", ())
        with self.transaction() as db:
            rows = db.execute("SELECT kata, impl, at, best_level, passed, total, levels, via "
                              f"FROM attempts{where} ORDER BY at", args).fetchall()
        return [Attempt(*row[:6], json.loads(row[6]), row[7]) for row in rows]

    def best(self, kata: str) -> Attempt | None:
        """The best run of any of the learner's files: the stub, `--impl=PATH`, a mock's file."""
        mine = [a for a in self.attempts(kata) if own(a)]
        return max(mine, key=lambda a: (a.best_level, a.passed, -a.at), default=None)

    def add_reveal(self, kata: str) -> None:
        with self.transaction() as db:
            db.execute("INSERT INTO reveals (kata, at) VALUES (?, ?)", (kata, time.time()))

    def revealed(self, kata: str) -> bool:
        return kata in self.reveals()

    def reveals(self) -> dict[str, float]:
        """kata -> when you first looked at its reference solution."""
        with self.transaction() as db:
            return dict(db.execute("SELECT kata, MIN(at) FROM reveals GROUP BY kata").fetchall())


def _columns(db: sqlite3.Connection) -> dict[str, set[str]]:
    tables = [row[0] for row in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    return {t: {row[1] for row in db.execute(f'PRAGMA table_info("{t}")')} for t in tables}


def _foreign(db: sqlite3.Connection, columns: bool = True) -> bool:
    """True when the file holds tables, none of them ours, or (`columns`) one of ours lacks a
    column."""
    with closing(sqlite3.connect(":memory:")) as memory:
        memory.executescript(SCHEMA)
        found, wanted = _columns(db), _columns(memory)
    if found and not set(found) & set(wanted):
        return True
    return columns and any(not wanted[t] <= cols for t, cols in found.items() if t in wanted)


def _is_locked(exc: sqlite3.DatabaseError) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)
