"""The progress store: an SQLite file under `.kata/` that keeps every attempt.

Every write is one transaction, so a killed process leaves the previous state intact. A file
that is not a database is moved aside (never deleted) and a fresh store is started.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from harness.catalog import ROOT

SCHEMA = """
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY,
    kata TEXT NOT NULL,
    impl TEXT NOT NULL,
    at REAL NOT NULL,
    best_level INTEGER NOT NULL,
    passed INTEGER NOT NULL,
    total INTEGER NOT NULL,
    levels TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS reveals (kata TEXT NOT NULL, at REAL NOT NULL);
"""


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


def home() -> Path:
    return Path(os.environ.get("KATA_HOME", ROOT / ".kata"))


class Store:
    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path else home() / "progress.db"
        self.notice = ""  # set when a corrupt file had to be moved aside
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with self._connect() as db:
                db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            if _is_locked(exc):
                raise StoreError(f"{self.path} is locked by another kata command") from exc
            stamp = time.strftime("%Y%m%d-%H%M%S")
            backup = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
            shutil.move(self.path, backup)
            self.notice = (f"{self.path} was not a readable database; "
                           f"kept it as {backup} and started fresh")
            with self._connect() as db:
                db.executescript(SCHEMA)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=5.0)
        try:
            with db:  # one transaction: committed on success, rolled back on any error
                yield db
        except sqlite3.OperationalError as exc:
            if _is_locked(exc):
                raise StoreError(f"{self.path} is locked by another kata command") from exc
            raise
        finally:
            db.close()

    def add_attempt(self, a: Attempt) -> None:
        with self._connect() as db:
            db.execute(
                "INSERT INTO attempts (kata, impl, at, best_level, passed, total, levels) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (a.kata, a.impl, a.at, a.best_level, a.passed, a.total, json.dumps(a.levels)))

    def attempts(self, kata: str | None = None) -> list[Attempt]:
        query = "SELECT kata, impl, at, best_level, passed, total, levels FROM attempts"
        args: tuple = ()
        if kata:
            query, args = query + " WHERE kata = ?", (kata,)
        with self._connect() as db:
            rows = db.execute(query + " ORDER BY at", args).fetchall()
        return [Attempt(*row[:6], json.loads(row[6])) for row in rows]

    def best(self, kata: str) -> Attempt | None:
        own = [a for a in self.attempts(kata) if a.impl == "stub"]
        return max(own, key=lambda a: (a.best_level, a.passed, -a.at), default=None)

    def add_reveal(self, kata: str) -> None:
        with self._connect() as db:
            db.execute("INSERT INTO reveals (kata, at) VALUES (?, ?)", (kata, time.time()))

    def revealed(self, kata: str) -> bool:
        with self._connect() as db:
            row = db.execute("SELECT 1 FROM reveals WHERE kata = ?", (kata,)).fetchone()
        return row is not None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """For features with tables of their own (mock sessions): one atomic write."""
        with self._connect() as db:
            yield db


def _is_locked(exc: sqlite3.DatabaseError) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)
