"""The interviewer: start a session, grade a submit, unlock levels in order, hand out hints.

A submit judges the level being worked on together with every level below it; when they all pass,
that level is recorded with the time and the next prompt unlocks. Levels unlock one per submit, as
in a real assessment, even when the file already passes more. Nothing here writes to the learner's
file.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from harness import catalog, diagnosis, grading, metadata
from harness.results import EXAMPLES, KataRun
from harness.session.log import Asked, Failure, Kind, Mode, Reason, Session, Sessions
from harness.session.matcher import Match, Matcher, Outcome
from harness.store import Store, StoreError
from harness.words import say

now = time.time  # the clock; tests replace it


@dataclass(frozen=True)
class Verdict:
    """What one submit found, as the learner may see it."""
    level: int  # the level judged
    passed: bool  # it passed, with every level below
    counts: tuple[int, int]  # hidden tests of that level: (passed, total)
    failures: list[Failure]  # hidden, levels <= `level`
    import_error: str | None
    recorded: str  # the scorecard's last line: where the run was stored, or why not
    stored: bool  # `recorded` says where


@dataclass(frozen=True)
class Hint:
    title: str  # the failing hidden test it is for
    category: str
    step: int  # 0 = nudge, 1 = pointer
    counted: bool  # False when shown again after every hint was spent


def kata_of(session: Session) -> catalog.Kata | None:
    """The session's kata, or None when its folder was deleted or renamed."""
    try:
        return catalog.get(session.kata)
    except KeyError:
        return None


def usable(kata: catalog.Kata) -> list[str]:
    """Why a kata cannot be interviewed on (empty when it can)."""
    try:
        return metadata.problems(kata.meta)
    except (OSError, ValueError) as exc:  # a kata.toml being written, or broken
        return [str(exc)]


def choose(store: Store, sessions: Sessions, exclude: str = "") -> catalog.Kata | None:
    """The first kata, in catalog order, that you have not passed in full yet."""
    for kata in catalog.all_katas():
        if kata.name == exclude or usable(kata):
            continue
        best = store.best(kata.name)
        graded = best.best_level if best else 0
        mocked = max((s.levels_passed for s in sessions.history(kata.name)), default=0)
        if max(graded, mocked) < kata.num_levels:
            return kata
    return None


def start(sessions: Sessions, kata: catalog.Kata, lang: str, minutes: float | None = None,
          file: Path | None = None, mode: Mode = Mode.SOLO) -> Session:
    path = Path(file).resolve() if file else kata.stub_path
    return sessions.start(kata.name, str(path), lang, kata.num_levels,
                          minutes or kata.spec.minutes, now(), mode)


def expire(sessions: Sessions, session: Session, graded: bool = False) -> bool:
    """End an open session whose time is up, at its deadline; True when it ended now.

    The file is graded as it stands first (unless `graded`: a submit just did), as the final
    submit of the session: a learner who never typed `kata mock submit` still gets a score.
    """
    if not session.is_open or now() < session.deadline:
        return False
    kata = None if graded else kata_of(session)
    if kata is None:
        sessions.finish(session, Reason.TIME, session.deadline)
        return True
    try:
        run = _grade(session, kata)
    except (FileNotFoundError, grading.GradingError) as exc:
        missing = isinstance(exc, FileNotFoundError)
        message = say("grade.missing", session.lang, path=session.file) if missing else str(exc)
        run = KataRun(kata.name, session.file, import_error=message)
    _record(sessions, session, run, session.deadline, time_up=True)
    return True


def submit(sessions: Sessions, session: Session, kata: catalog.Kata) -> Verdict:
    """Grade the session's file and record it; unlock the next level on a full pass."""
    return _record(sessions, session, _grade(session, kata), now())


def _grade(session: Session, kata: catalog.Kata) -> KataRun:
    file = Path(session.file)
    if not file.is_file():
        raise FileNotFoundError(file)
    impl = "stub" if file == kata.stub_path else str(file)
    return grading.grade(kata, impl, via="mock", lang=session.lang)[0]


def _record(sessions: Sessions, session: Session, run: KataRun, at: float,
            time_up: bool = False) -> Verdict:
    """Log a run as a submit of the level worked on (and its pass, which unlocks the next): what
    the scorecard, the hints and the interviewer's diffs need, nothing of pytest's output."""
    level, counts = session.level, run.level_counts()
    # A file that does not import "fails" every test the same way: none is listed then.
    failed = [] if run.import_error else [Failure(r.level, r.title, r.hint, r.verdicts or r.verdict)
                                          for r in run.results if r.failed]
    # The visible examples are the learner's own tool (and may call later levels' API): only
    # hidden tests judge a level.
    judged = [f for f in failed if EXAMPLES < f.level <= level]
    passed = run.import_error is None and level in counts and not judged
    try:
        code = Path(session.file).read_text(encoding="utf-8")  # the file as graded
    except (OSError, UnicodeDecodeError):
        code = None
    data = {"hidden": [run.hidden_passed, run.hidden_total],
            "counts": {str(n): list(pt) for n, pt in counts.items()},
            "failures": [[f.level, f.title, f.hint, f.verdict] for f in failed],
            "import_error": run.import_error, "time_up": time_up, "code": code}
    entries = [(Kind.SUBMIT, level, data)]
    if passed:
        entries.append((Kind.PASS, level, {}))
    last = passed and level == session.levels
    sessions.record(session, at, *entries,
                    finish=Reason.TIME if time_up else Reason.PASSED if last else None)
    return Verdict(level, passed, counts.get(level, (0, 0)), judged, run.import_error,
                   run.recorded, run.stored)


def failures(session: Session) -> list[Failure]:
    """The hidden failures of the last submit that the learner may see: levels already shown."""
    last = session.last_submit
    return [f for f in last.failures if EXAMPLES < f.level <= shown(session)] if last else []


def hint(sessions: Sessions, session: Session, kata: catalog.Kata) -> list[Hint] | None:
    """The next hint for a failing test of the current level (or below), recorded once.

    The ladder starts where the diagnosis puts the likely mistake: the hint category of the
    best-ranked mistake's first failing `caught_by` test, then the runner-up's, then the failing
    tests in scorecard order (the only order for a kata without current signatures). None before
    any submit; [] when the failures carry no hint category; the pointers again, uncounted, once
    every failing category has given both its hints.
    """
    if session.last_submit is None:
        return None
    failing = [(f.title, f.hint) for f in failures(session) if f.hint in kata.spec.hints]
    for title, category in diagnosed(kata, session, failing) + failing:
        step = give_hint(sessions, session, category)
        if step is not None:
            return [Hint(title, category, step, True)]
    pointers: dict[str, str] = {}
    for title, category in failing:
        pointers.setdefault(category, title)
    return [Hint(title, category, 1, False) for category, title in pointers.items()]


def diagnosed(kata: catalog.Kata, session: Session,
              failing: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(title, hint category) of each likely mistake of the last submit, best first: its first
    `caught_by` test that fails; [] when the kata has no current signatures."""
    category = dict(failing)
    titles = {f.title for f in failures(session)}  # the hintless ones too: all are explained
    try:
        ranked = diagnosis.likely(kata, titles, range(1, shown(session) + 1))
    except diagnosis.NoSignatures:
        return []
    firsts = (next((t for t in likely.caught_by if t in category), None) for likely in ranked)
    return [(title, category[title]) for title in firsts if title is not None]


def give_hint(sessions: Sessions, session: Session, category: str, **by: str) -> int | None:
    """Log the next step of a hint category (the nudge, then the pointer) and return it; None
    when both were given. `by`: {"by": "interviewer"} for one given in a pair session."""
    left = {0, 1} - {step for given, step in session.hints if given == category}
    if not left:
        return None
    step = min(left)
    sessions.record(session, now(), (Kind.HINT, session.level,
                                     {"category": category, "step": step, **by}))
    return step


def shown(session: Session) -> int:
    """The highest level whose prompt the candidate has seen."""
    return min(session.level, session.levels)


@dataclass(frozen=True)
class Answer:
    """What `ask` made of a question: the matcher's reading, and the question it answers."""
    asked: str
    heard: Match
    index: int = -1  # ANSWER and PICK: the question's index in kata.toml
    before: bool = False  # that question was asked before (in the candidate's words or picked)
    point: str = ""  # OPEN: the open point's text, in the language the question was asked in


def ask(sessions: Sessions, session: Session, kata: catalog.Kata, text: str) -> Answer:
    """Hear `text` at the level open now; log a question it answers (ANSWER or PICK).

    An ANSWER is logged as asked in the candidate's own words, a PICK (a number, as after an
    ask-back) as picked: the scorecard counts the two apart. A later level's question, an open
    point, an ask-back and no answer are not logged: none of them answers a question of the notes.
    """
    matcher = Matcher(kata.meta)
    heard = matcher.match(text, shown(session))
    if heard.outcome == Outcome.OPEN:
        return Answer(text, heard, point=matcher.point(heard.ids[0], heard.lang))
    if heard.outcome not in (Outcome.ANSWER, Outcome.PICK):
        return Answer(text, heard)
    index = next(q.number - 1 for q in kata.spec.questions if q.id == heard.ids[0])
    how = Asked.OWN if heard.outcome == Outcome.ANSWER else Asked.PICKED
    before = index in session.asked
    if index not in (session.asked_own if how == Asked.OWN else session.asked):
        sessions.record(session, now(), (Kind.ASK, session.level,
                                         {"question": index, "how": how.value}))
    return Answer(text, heard, index, before)


def log_answers(sessions: Sessions, session: Session, indices: list[int]) -> list[int]:
    """Log questions an interviewer answered in a pair session; the ones not logged before."""
    fresh = [i for i in dict.fromkeys(indices) if i not in session.asked]
    sessions.record(session, now(), *[(Kind.ASK, session.level,
                                       {"question": i, "by": "interviewer"}) for i in fresh])
    return fresh


def spec(sessions: Sessions, session: Session) -> None:
    """Note that the candidate opened the full prompt, where the session shows briefs."""
    if session.briefed:
        sessions.record(session, now(), (Kind.SPEC, shown(session), {}))


def look(what: str, kata: str, detail: str = "") -> bool:
    """Log, into the open pair session on `kata`, that the candidate ran a command the interviewer
    should know of (`kata show`, `kata mutants`, ...); True when one was logged, so the command
    tells the candidate the interviewer sees it."""
    try:
        sessions = Sessions(Store())
        session = sessions.current()
        if session is None or session.mode != Mode.PAIR or session.kata != kata:
            return False
        sessions.record(session, now(), (Kind.LOOK, shown(session),
                                         {"what": what, "detail": detail}))
    except (OSError, sqlite3.Error, StoreError):  # never let the log stop the command itself
        return False
    return True
