-- The progress store's tables, the mock interview's included: one schema, one version number
-- (harness/store.py's VERSION, bumped with every change here).
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
-- `open` is 1 while a session runs and NULL after: UNIQUE lets many NULLs through but only one 1,
-- so the database itself refuses a second open session.
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
-- An append-only log of an interviewer's scoring of a pair session: the latest entry for an item
-- (a dimension, a follow-up point, the notes) is its value.
CREATE TABLE IF NOT EXISTS rubric_entries (
    id INTEGER PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES mock_sessions(id),
    at REAL NOT NULL,
    item TEXT NOT NULL,
    level INTEGER,
    text TEXT NOT NULL DEFAULT ''
);
