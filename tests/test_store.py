"""The progress store keeps records through corruption, concurrent writers and locks."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import time

import pytest

from harness import catalog, grading
from harness.store import Attempt, Store, StoreError


def attempt(kata="auc_roc", level=1, at=None):
    return Attempt(kata, "stub", at or time.time(), level, 10, 20, {"1": [10, 10]})


def test_attempts_round_trip_and_best(kata_home):
    store = Store()
    store.add_attempt(attempt(level=1, at=1.0))
    store.add_attempt(attempt(level=3, at=2.0))
    store.add_attempt(attempt(kata="other", level=2))
    assert [a.best_level for a in store.attempts("auc_roc")] == [1, 3]
    assert store.best("auc_roc").best_level == 3
    assert store.best("nothing") is None
    assert (kata_home / "progress.db").is_file()


def test_a_corrupt_file_is_kept_aside_and_a_fresh_store_started(kata_home):
    kata_home.mkdir()
    (kata_home / "progress.db").write_bytes(b"this is not sqlite" * 100)
    store = Store()
    assert "kept it as" in store.notice
    backups = list(kata_home.glob("progress.db.corrupt-*"))
    assert len(backups) == 1 and backups[0].read_bytes().startswith(b"this is not sqlite")
    store.add_attempt(attempt())
    assert len(store.attempts()) == 1


def test_a_locked_store_gives_a_clear_error(kata_home):
    store = Store()
    blocker = sqlite3.connect(kata_home / "progress.db")
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        store_path = store.path
        slow = Store.__new__(Store)
        slow.path, slow.notice = store_path, ""
        with pytest.raises(StoreError, match="locked"):
            slow.add_attempt(attempt())
    finally:
        blocker.rollback()
        blocker.close()
    assert Store().attempts() == []


def test_a_killed_writer_leaves_earlier_records_intact(kata_home):
    Store().add_attempt(attempt(level=2, at=1.0))
    code = (
        "import os, sqlite3\n"
        f"db = sqlite3.connect({str(kata_home / 'progress.db')!r})\n"
        "db.execute('BEGIN')\n"
        "db.execute(\"INSERT INTO attempts (kata, impl, at, best_level, passed, total, levels) "
        "VALUES ('auc_roc', 'stub', 2, 3, 1, 1, '{}')\")\n"
        "os._exit(9)\n"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 9
    assert [a.best_level for a in Store().attempts()] == [2]


def test_two_writers_at_once_lose_nothing(kata_home):
    Store()
    code = ("from harness.store import Attempt, Store\n"
            "s = Store()\n"
            "for i in range(25):\n"
            "    s.add_attempt(Attempt('auc_roc', 'stub', float(i), 1, 1, 1, {}))\n")
    procs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert len(Store().attempts()) == 50


def foreign_store(kata_home, sql="CREATE TABLE attempts (id INTEGER PRIMARY KEY, name TEXT);"
                                 "INSERT INTO attempts (name) VALUES ('not ours');"):
    kata_home.mkdir(exist_ok=True)
    db = sqlite3.connect(kata_home / "progress.db")
    db.executescript(sql)
    db.close()


@pytest.mark.parametrize("sql", [
    "CREATE TABLE attempts (id INTEGER PRIMARY KEY, name TEXT);",  # our table name, other columns
    "CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT);",  # another program's database
    "PRAGMA user_version = 999; CREATE TABLE attempts (x);",  # written by a newer kata
])
def test_a_database_with_another_schema_is_kept_aside_like_a_corrupt_file(kata_home, sql):
    foreign_store(kata_home, sql)
    (kata_home / "progress.png").write_bytes(b"\x89PNG old chart")
    store = Store()
    assert "kept it as" in store.notice
    backups = list(kata_home.glob("progress.db.*-*"))
    assert len(backups) == 1
    assert not (kata_home / "progress.png").exists()  # the old chart is of the old store
    store.add_attempt(attempt())
    assert len(store.attempts()) == 1 and not store.revealed("auc_roc")


def test_the_schema_is_versioned_and_an_unversioned_store_is_migrated(kata_home):
    from harness import store as store_module

    kata_home.mkdir()
    db = sqlite3.connect(kata_home / "progress.db")  # a store from before versioning
    db.executescript("CREATE TABLE attempts (id INTEGER PRIMARY KEY, kata TEXT NOT NULL, "
                     "impl TEXT NOT NULL, at REAL NOT NULL, best_level INTEGER NOT NULL, "
                     "passed INTEGER NOT NULL, total INTEGER NOT NULL, levels TEXT NOT NULL);"
                     "INSERT INTO attempts (kata, impl, at, best_level, passed, total, levels) "
                     "VALUES ('auc_roc', 'stub', 1.0, 2, 5, 9, '{}');")
    db.close()
    store = Store()
    assert store.notice == "" and [a.best_level for a in store.attempts()] == [2]
    db = sqlite3.connect(kata_home / "progress.db")
    assert db.execute("PRAGMA user_version").fetchone()[0] == store_module.VERSION >= 1
    db.close()


@pytest.mark.parametrize("command", [["progress"], ["grade", "auc_roc", "--impl", "MINE"]])
def test_kata_commands_on_a_foreign_database_give_a_notice_not_a_traceback(kata_home, command,
                                                                          tmp_path):
    from typer.testing import CliRunner

    from harness.cli import app

    mine = tmp_path / "auc.py"
    shutil.copy(catalog.get("auc_roc").solution_path, mine)
    command = [str(mine) if word == "MINE" else word for word in command]
    foreign_store(kata_home)
    result = CliRunner().invoke(app, command)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code == 0, result.output
    assert "kept it as" in result.output
    if command[0] == "grade":
        assert [a.impl for a in Store().attempts()] == [str(mine)]


def test_a_run_stored_after_a_foreign_file_was_moved_aside_says_it_was_stored(kata_home, tmp_path):
    mine = tmp_path / "auc.py"
    shutil.copy(catalog.get("auc_roc").solution_path, mine)
    foreign_store(kata_home)
    run, _ = grading.grade(catalog.get("auc_roc"), str(mine), via="mock")
    assert run.stored and "kept it as" in run.recorded, run.recorded  # the notice comes first


def test_a_version_1_store_learns_how_each_attempt_ran_and_keeps_them_as_grades(kata_home):
    kata_home.mkdir()
    db = sqlite3.connect(kata_home / "progress.db")
    db.executescript("CREATE TABLE attempts (id INTEGER PRIMARY KEY, kata TEXT NOT NULL, "
                     "impl TEXT NOT NULL, at REAL NOT NULL, best_level INTEGER NOT NULL, "
                     "passed INTEGER NOT NULL, total INTEGER NOT NULL, levels TEXT NOT NULL);"
                     "INSERT INTO attempts (kata, impl, at, best_level, passed, total, levels) "
                     "VALUES ('auc_roc', 'stub', 1.0, 2, 5, 9, '{}'); PRAGMA user_version = 1;")
    db.close()
    store = Store()
    store.add_attempt(Attempt("auc_roc", "stub", 2.0, 3, 9, 9, {}, "pytest"))
    assert store.notice == ""
    assert [(a.best_level, a.via) for a in store.attempts()] == [(2, "grade"), (3, "pytest")]


def test_a_version_2_store_keeps_its_sessions_as_solo_and_gains_the_rubric(kata_home):
    from harness.session.log import Mode, Sessions

    kata_home.mkdir()
    db = sqlite3.connect(kata_home / "progress.db")
    db.executescript("CREATE TABLE mock_sessions (id INTEGER PRIMARY KEY, kata TEXT NOT NULL, "
                     "file TEXT NOT NULL, lang TEXT NOT NULL, levels INTEGER NOT NULL, "
                     "minutes REAL NOT NULL, started REAL NOT NULL, ended REAL, reason TEXT, "
                     "open INTEGER UNIQUE CHECK (open = 1));"
                     "INSERT INTO mock_sessions (kata, file, lang, levels, minutes, started, "
                     "ended, reason) VALUES ('auc_roc', '/tmp/auc.py', 'en', 3, 40, 1.0, 2.0, "
                     "'ended'); PRAGMA user_version = 2;")
    db.close()
    store = Store()
    assert store.notice == ""
    [session] = Sessions(store).history()
    assert session.mode == Mode.SOLO and not session.briefed
    with store.transaction() as db:
        assert db.execute("SELECT COUNT(*) FROM rubric_entries").fetchone() == (0,)
