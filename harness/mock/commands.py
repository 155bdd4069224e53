"""`kata mock ...`: the commands of a mock interview. The state lives in the progress store, so any
command can be interrupted (Ctrl-C, a closed terminal) and the next one picks the session up."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import typer
from rich.console import Console

from harness import catalog, command, grading
from harness.command import SessionLangOpt as LangOpt
from harness.countdown import Countdown
from harness.lang import lang as default_lang
from harness.mock import watch
from harness.mock.screens import Screen
from harness.session import interview
from harness.session.clock import clock
from harness.session.log import Mode, Reason, Session, SessionError, Sessions
from harness.words import say

console = Console()


class MockGroup(command.DefaultGroup):
    """`kata mock [KATA] [OPTIONS]` means `kata mock start [KATA] [OPTIONS]`."""
    default, when_empty = "start", True
    usage = "[KATA] [--brief | --pair] [--minutes N] [--lang en|zh-TW]"


mock = command.App(
    cls=MockGroup,
    help="A timed mock interview.\n\nLevels unlock in order, the interviewer answers clarifying "
         "questions, hints are counted, and a scorecard with follow-up questions ends it. "
         "--brief opens each level with the question as an interviewer says it (the rules are "
         "earned by asking); --pair runs the candidate's side for a person who plays the "
         "interviewer with `kata interviewer`.\n\n"
         "`kata mock [KATA] [--minutes N] [--lang en|zh-TW]` starts a session (on a kata you "
         "have not passed yet when KATA is left out) or shows the open one; it is short for "
         "`kata mock start`.")


def _guard(lang: str | None):
    """Clear messages instead of tracebacks for a busy store and for Ctrl-C."""
    return command.guard(console, say("mock.interrupted", lang or default_lang()))


@contextmanager
def _opened(lang: str | None, need_kata: bool = True) -> Iterator[
        tuple[Sessions, Session, catalog.Kata | None, Screen]]:
    """`_open`, guarded, for the `--lang` given."""
    lang = command.checked_lang(lang)
    with _guard(lang):
        sessions = Sessions(command.open_store(console))
        yield sessions, *_open(sessions, lang, need_kata)


def _open(sessions: Sessions, lang: str | None, need_kata: bool = True
          ) -> tuple[Session, catalog.Kata | None, Screen]:
    """The open session, its kata and a screen; a session whose time is up ends first, with its
    scorecard, and the command with it."""
    session = sessions.current()
    if session is None:
        last = sessions.last_finished()
        if last is not None and last.reason == Reason.TIME:
            # the clock ran out between two commands: say that, not just "no interview is open"
            Screen(console, lang or last.lang).say("time_was_up", "yellow", kata=last.kata)
        else:
            Screen(console, lang or default_lang()).say("no_session", "yellow")
        raise typer.Exit(1)
    screen = Screen(console, lang or session.lang)
    kata = interview.kata_of(session)
    if _expire(sessions, session, screen):
        screen.end(session, kata)
        raise typer.Exit(0)
    if kata is None and need_kata:
        screen.say("kata_gone", "red", kata=session.kata)
        raise typer.Exit(2)
    return session, kata, screen


def _expire(sessions: Sessions, session: Session, screen: Screen) -> bool:
    """interview.expire, saying first that the file is graded when time is up."""
    if session.is_open and interview.now() >= session.deadline:
        screen.say("grading", file=session.file)
    return interview.expire(sessions, session)


@mock.command()
def start(name: str = typer.Argument(None, metavar="KATA",
                                     help="the kata (default: one you have not passed yet)"),
          minutes: float = typer.Option(None, "--minutes", help="the clock (default: the kata's)"),
          lang: str = command.LangOpt,
          file: Path = typer.Option(None, "--file",
                                    help="grade this file instead of katas/KATA/<module>.py"),
          brief: bool = typer.Option(False, "--brief",
                                     help="each level opens with its brief, not the full prompt"),
          pair: bool = typer.Option(False, "--pair",
                                    help="a person interviews you: briefs, and this tool answers "
                                         "no question and gives no hint")
          ) -> None:
    """Start a session, or show the open one."""
    lang = command.checked_lang(lang)
    if minutes is not None and minutes <= 0:
        raise typer.BadParameter(say("cli.minutes_positive", minutes=minutes))
    if file is not None and file.exists() and not file.is_file():
        raise typer.BadParameter(say("cli.not_a_file", file=file))
    with _guard(lang):
        sessions = Sessions(command.open_store(console))
        if sessions.current() is not None:
            session, kata, screen = _open(sessions, lang)
            if name not in (None, session.kata):
                screen.say("other_open", "red", kata=session.kata)
                raise typer.Exit(1)
            screen.session(session, kata, resumed=True)
            return
        lang = lang or default_lang()
        screen = Screen(console, lang)
        kata = _pick(name, sessions, screen)
        if file is not None and not file.exists():
            _new_file(file, kata, screen)
        try:
            mode = Mode.PAIR if pair else Mode.BRIEF if brief else Mode.SOLO
            session = interview.start(sessions, kata, lang, minutes, file, mode)
        except SessionError as exc:  # another `kata mock` started one a moment ago
            screen.say("other_open", "red", kata=exc.args[0])
            raise typer.Exit(1) from exc
        screen.session(session, kata)


def _new_file(file: Path, kata: catalog.Kata, screen: Screen) -> None:
    """Offer to start a --file that does not exist yet from the pristine stub; without a yes
    (or with no one to answer), say how and stop."""
    try:
        question = screen.words("file_new", file=file, kata=kata.name)
        yes = command.confirm(question, True, screen.lang)
    except typer.Abort:  # no input to read the answer from
        yes = False
    if not yes:
        stub, here = kata.stub_path, Path.cwd()  # the command is pasted here: relative below it
        screen.say("file_how", "yellow", file=file,
                   stub=stub.relative_to(here) if stub.is_relative_to(here) else stub)
        raise typer.Exit(1)
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(kata.pristine_stub(), encoding="utf-8")
    screen.say("file_started", file=file)


def _pick(name: str | None, sessions: Sessions, screen: Screen) -> catalog.Kata:
    if name is None:
        kata = interview.choose(sessions.store, sessions)
        if kata is None:
            screen.say("all_passed", "yellow")
            raise typer.Exit(1)
        return kata
    kata = command.kata(name)
    problems = interview.usable(kata)
    if problems:
        screen.say("bad_kata", "red", kata=name, problems="; ".join(problems[:3]))
        raise typer.Exit(2)
    return kata


@mock.command()
def status(lang: str = LangOpt) -> None:
    """The current level's prompt and the clock."""
    with _opened(lang) as (_, session, kata, screen):
        screen.session(session, kata)


@mock.command()
def questions(lang: str = LangOpt) -> None:
    """The clarifying questions the interviewer can answer.

    Answers are shown for those you asked."""
    with _opened(lang) as (_, session, kata, screen):
        if session.mode == Mode.PAIR:
            screen.say("pair_ask")
        else:
            screen.questions(session, kata)


@mock.command()
def ask(question: str = typer.Argument(..., help="your question in your own words, or its "
                                        "number in `kata mock questions`"),
        lang: str = LangOpt) -> None:
    """Ask the interviewer a clarifying question.

    It costs nothing, and the scorecard lists it."""
    with _opened(lang) as (sessions, session, kata, screen):
        if session.mode == Mode.PAIR:
            screen.say("pair_ask", "yellow")
            raise typer.Exit(1)
        screen.answer(kata, interview.ask(sessions, session, kata, question))


@mock.command()
def submit(hint: bool = typer.Option(False, "--hint", help="also show the next hint (counted)"),
           lang: str = LangOpt) -> None:
    """Grade your file; a level passed in full unlocks the next."""
    with _opened(lang) as (sessions, session, kata, screen):
        passed = _submit(sessions, session, kata, screen, hinting=hint)
        if hint and session.is_open and not passed:
            _hint(sessions, session, kata, screen)
        raise typer.Exit(0 if passed else 1)


def _submit(sessions: Sessions, session: Session, kata: catalog.Kata, screen: Screen,
            hinting: bool = False) -> bool:
    """Grade, show the verdict, and the scorecard when the session ends with it. `hinting`: a
    hint follows the verdict."""
    screen.say("grading", file=session.file)
    try:
        verdict = interview.submit(sessions, session, kata)
    except FileNotFoundError as exc:
        screen.say("file_gone", "red", file=session.file)
        raise typer.Exit(2) from exc
    except grading.GradingError as exc:
        screen.text(str(exc), "red")
        raise typer.Exit(2) from exc
    screen.verdict(session, kata, verdict, hinting)
    interview.expire(sessions, session, graded=True)
    if not session.is_open:
        screen.end(session, kata)
    return verdict.passed


@mock.command()
def hint(lang: str = LangOpt) -> None:
    """The next hint for a failing hidden test (counted).

    A nudge first, then a pointer."""
    with _opened(lang) as (sessions, session, kata, screen):
        _hint(sessions, session, kata, screen)


def _hint(sessions: Sessions, session: Session, kata: catalog.Kata, screen: Screen) -> None:
    """The next hint; none in a pair session, where the interviewer gives them (exit 1)."""
    if session.mode == Mode.PAIR:
        screen.say("pair_hint", "yellow")
        raise typer.Exit(1)
    screen.hints(session, kata, interview.hint(sessions, session, kata))


@mock.command()
def spec(lang: str = LangOpt) -> None:
    """The full prompt of the levels open so far.

    Where levels open with their brief, the scorecard notes that you opened it."""
    with _opened(lang) as (sessions, session, kata, screen):
        interview.spec(sessions, session)
        screen.spec(session, kata)


@mock.command("watch")
def watch_file(lang: str = LangOpt) -> None:
    """Grade your file on every save, with the countdown.

    Ctrl-C stops watching."""
    with _opened(lang) as (sessions, session, kata, screen):
        file = Path(session.file)
        screen.say("watching", file=file)

        def line() -> str:
            return screen.words("watch_line", n=interview.shown(session),
                                left=clock(session.left(interview.now())), file=file.name)

        countdown = Countdown(console, line, lambda: session.left(interview.now()),
                              lambda: session.is_open)

        def on_save() -> bool:
            # typer.Exit: the file vanished mid-save, so wait for it to come back
            with countdown.paused(), suppress(typer.Exit):
                _submit(sessions, session, kata, screen)
            return session.is_open

        def on_tick() -> bool:
            if session.is_open and interview.now() >= session.deadline:
                with countdown.paused():
                    _expire(sessions, session, screen)
                    screen.end(session, kata)
                return False
            countdown.show()
            return True

        try:
            with countdown:
                watch.watch(file, on_save, on_tick)
        except KeyboardInterrupt:
            screen.say("watch_stopped", "yellow")


@mock.command()
def scorecard(lang: str = LangOpt) -> None:
    """The scorecard of your last finished session, again.

    With its follow-up questions."""
    lang = command.checked_lang(lang)
    with _guard(lang):
        session = Sessions(command.open_store(console)).last_finished()
        if session is None:
            Screen(console, lang or default_lang()).say("no_finished", "yellow")
            raise typer.Exit(1)
        Screen(console, lang or session.lang).end(session, interview.kata_of(session))


@mock.command()
def end(lang: str = LangOpt) -> None:
    """End the session now, with its scorecard.

    Then the follow-up questions and the self-check."""
    with _opened(lang, need_kata=False) as (sessions, session, kata, screen):
        sessions.finish(session, Reason.ENDED, interview.now())
        screen.end(session, kata)
