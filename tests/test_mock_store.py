"""The mock sessions survive what the progress store survives: a corrupt file, a lock held by
another command, a process killed mid-write, and two commands writing at once."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

from typer.testing import CliRunner

from harness.cli import app
from harness.session.log import Kind, Reason, SessionError, Sessions
from harness.store import Store

runner = CliRunner()


def kata(*args):
    return runner.invoke(app, list(args))


def open_session(sessions: Sessions, at: float = 1000.0):
    return sessions.start("auc_roc", "/tmp/auc.py", "en", 3, 40, at)


def test_state_is_derived_from_the_log_with_each_step_counted_once(kata_home):
    sessions = Sessions(Store())
    s = open_session(sessions)
    for kind, level, data in [(Kind.ASK, 1, {"question": 2}), (Kind.ASK, 1, {"question": 2}),
                              (Kind.PASS, 1, {}), (Kind.PASS, 1, {}),
                              (Kind.HINT, 2, {"category": "curve", "step": 0}),
                              (Kind.HINT, 2, {"category": "curve", "step": 0})]:
        sessions.record(s, 1060.0, (kind, level, data))
    again = Sessions(Store()).current()
    assert again.asked == [2] and again.hints == [("curve", 0)]
    assert again.level == 2 and again.level_times() == [(1, 60.0, 60.0)]
    sessions.finish(again, Reason.ENDED, 1100.0)
    sessions.finish(again, Reason.TIME, 1200.0)  # a second finish changes nothing
    done = sessions.get(s.id)
    assert (done.ended, done.reason, sessions.current()) == (1100.0, Reason.ENDED, None)


def test_the_database_refuses_a_second_open_session(kata_home):
    sessions = Sessions(Store())
    first = open_session(sessions)
    try:
        open_session(sessions)
    except SessionError as exc:
        assert exc.args == ("auc_roc",)
    else:
        raise AssertionError("a second open session was accepted")
    sessions.finish(first, Reason.ENDED, 1001.0)
    assert open_session(sessions).id != first.id


def test_a_store_from_before_mock_sessions_gains_the_tables(kata_home):
    kata_home.mkdir()
    db = sqlite3.connect(kata_home / "progress.db")  # unversioned, the attempts table only
    db.execute("CREATE TABLE attempts (id INTEGER PRIMARY KEY, kata TEXT NOT NULL, "
               "impl TEXT NOT NULL, at REAL NOT NULL, best_level INTEGER NOT NULL, "
               "passed INTEGER NOT NULL, total INTEGER NOT NULL, levels TEXT NOT NULL)")
    db.close()
    store = Store()
    assert store.notice == "" and Sessions(store).history() == []


def test_a_corrupt_store_is_kept_aside_and_a_fresh_one_started(kata_home, tmp_path):
    kata_home.mkdir()
    (kata_home / "progress.db").write_bytes(b"not a database, really" * 200)
    work = tmp_path / "auc.py"
    work.write_text("# mine\n")
    result = kata("mock", "auc_roc", "--file", str(work))
    assert result.exit_code == 0 and "kept it as" in result.output, result.output
    backups = list(kata_home.glob("progress.db.corrupt-*"))
    assert len(backups) == 1 and backups[0].read_bytes().startswith(b"not a database")
    assert Sessions(Store()).current().kata == "auc_roc"


def test_a_store_corrupted_mid_session_is_reported_and_replaced(kata_home, tmp_path):
    work = tmp_path / "auc.py"
    work.write_text("# mine\n")
    assert kata("mock", "auc_roc", "--file", str(work)).exit_code == 0
    (kata_home / "progress.db").write_bytes(b"\x00garbage" * 500)
    result = kata("mock", "status")
    assert "kept it as" in result.output and "No mock interview is open" in result.output
    assert result.exit_code == 1


def test_a_locked_store_is_a_clear_error_not_a_traceback(kata_home):
    Sessions(Store())
    blocker = sqlite3.connect(kata_home / "progress.db")
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        result = kata("mock", "status")
    finally:
        blocker.rollback()
        blocker.close()
    assert result.exit_code == 2 and "locked by another kata command" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_killed_writer_leaves_the_session_as_it_was(kata_home):
    sessions = Sessions(Store())
    s = open_session(sessions)
    sessions.record(s, 1010.0, (Kind.PASS, 1, {}))
    code = (
        "import os, sqlite3\n"
        f"db = sqlite3.connect({str(kata_home / 'progress.db')!r})\n"
        "db.execute('BEGIN')\n"
        f"db.execute(\"INSERT INTO mock_events (session, at, kind, level, data) "
        f"VALUES ({s.id}, 1020, 'pass', 2, '{{}}')\")\n"
        "db.execute('UPDATE mock_sessions SET ended = 1020, open = NULL')\n"
        "os._exit(9)\n"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 9
    after = Sessions(Store()).current()
    assert after is not None and after.level == 2 and after.passed == {1: 1010.0}


def test_two_commands_at_once_lose_nothing_and_open_one_session(kata_home):
    Sessions(Store())
    code = ("import sys\n"
            "from harness.session.log import Kind, SessionError, Sessions\n"
            "from harness.store import Store\n"
            "sessions = Sessions(Store())\n"
            "try:\n"
            "    sessions.start('auc_roc', '/tmp/auc.py', 'en', 3, 40, 1000.0)\n"
            "    print('started')\n"
            "except SessionError:\n"
            "    print('refused')\n"
            "s = sessions.current()\n"
            "for i in range(20):\n"
            "    hint = (Kind.HINT, 1, {'category': sys.argv[1], 'step': i})\n"
            "    sessions.record(s, 1001.0, hint)\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, name], stdout=subprocess.PIPE,
                              text=True) for name in ("a", "b")]
    outputs = sorted(p.communicate(timeout=120)[0].strip() for p in procs)
    assert [p.returncode for p in procs] == [0, 0]
    assert outputs == ["refused", "started"]
    [session] = Sessions(Store()).history()
    assert len(session.hints) == 40
