"""`kata interviewer ...`: the interviewer's side of a pair mock interview. Nothing here writes the
candidate's files; each command reads the session as it is and changes only what its name says
(`hint` and `answered` log into the open session, `score` into the rubric, `script` a reveal)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from harness import catalog, command, grading
from harness.command import SessionLangOpt as LangOpt
from harness.command import checked_lang as _lang
from harness.interviewer import document, report, say, script, suite, watch
from harness.lang import lang as default_lang
from harness.screen import Screen
from harness.session import interview, rubric
from harness.session.clock import clock, when
from harness.session.log import Mode, Session, Sessions
from harness.store import Store
from harness.words import say as say_key

console = Console()


class InterviewerGroup(command.DefaultGroup):
    """`kata interviewer KATA [OPTIONS]` means `kata interviewer script KATA [OPTIONS]`."""
    default = "script"
    usage = "KATA [--lang en|zh-TW] [--html FILE]"


interviewer = command.App(
    cls=InterviewerGroup, no_args_is_help=True,
    help="Interview someone else on a kata.\n\nThe candidate runs `kata mock start KATA --pair` "
         "(briefs, the clock, grading; the tool answers nothing). You read the script, follow "
         "the session live, log the hints and answers you give, then score it on the rubric "
         "and hand over the feedback report.\n\n`kata interviewer KATA` is short for "
         "`kata interviewer script KATA`.")

KataOpt = typer.Option(None, "--kata", metavar="KATA",
                       help="refuse unless the pair session is on this kata")
HtmlOpt = typer.Option(None, "--html", metavar="FILE",
                       help="write one self-contained, printable page instead")


def fail(message: str, code: int = 2) -> typer.Exit:
    command.say_to(console, message, "red")
    return typer.Exit(code)


def note(message: str, style: str | None = None) -> None:
    command.say_to(console, message, style)


def _guard():
    """A store being written by another process is a clear error, never a traceback."""
    return command.guard(console)


def _store() -> Store:
    return command.open_store(console)


def _open_pair(lang: str | None, kata_name: str | None) -> tuple[Sessions, Session, str]:
    """The open pair session and the language to speak; exit 2 when there is none."""
    sessions = Sessions(_store())
    session = sessions.current()
    if session is None or session.mode != Mode.PAIR:
        raise fail(say("no_pair", lang or (session.lang if session else default_lang())))
    return sessions, _checked(session, kata_name, lang), lang or session.lang


def _last_pair(lang: str | None, kata_name: str | None) -> tuple[Store, Session, str]:
    store = _store()
    session = Sessions(store).last_pair()
    if session is None:
        raise fail(say("no_pair_yet", lang or default_lang()))
    return store, _checked(session, kata_name, lang), lang or session.lang


def _checked(session: Session, kata_name: str | None, lang: str | None) -> Session:
    if kata_name is not None and kata_name != session.kata:
        raise fail(say("other_kata", lang or session.lang, kata=session.kata, wanted=kata_name))
    if interview.kata_of(session) is None:
        raise fail(say_key("mock.kata_gone", lang or session.lang, kata=session.kata))
    return session


def _show(doc: document.Document, html_file: Path | None) -> None:
    """On the terminal, or as one HTML page in `html_file`."""
    if html_file is None:
        document.show(console, doc)
        return
    html_file.parent.mkdir(parents=True, exist_ok=True)
    html_file.write_text(document.page(doc), encoding="utf-8")
    note(say("wrote", doc.lang, path=html_file))


@interviewer.command("script")
def script_(name: str = typer.Argument(..., metavar="KATA", help="the kata's name"),
            lang: str = command.LangOpt,
            html_file: Path = HtmlOpt,
            yes: bool = typer.Option(False, "--yes", help="do not ask before revealing")) -> None:
    """The script: briefs, answers, hints, mistakes.

    A sheet per level, then the follow-ups and the rubric. It holds the answers, the hints
    and the classic mistakes, so looking at it counts as a reveal in your progress, like
    `kata solution`, until you have passed the kata."""
    lang = _lang(lang) or default_lang()
    try:
        kata = catalog.get(name)
    except KeyError as exc:
        raise typer.BadParameter(exc.args[0]) from exc
    with _guard():
        command.reveal(_store(), kata, say("reveal", lang, kata=kata.name), yes)
    try:
        tests = suite.hidden_tests(kata)
    except grading.GradingError as exc:
        raise fail(str(exc)) from exc
    _show(document.script(script.build(kata, lang, tests)), html_file)


@interviewer.command("watch")
def watch_(lang: str = LangOpt, kata: str = KataOpt,
           interval: float = typer.Option(watch.INTERVAL, hidden=True)) -> None:
    """Follow the open pair session live.

    In a second terminal: every submit with its failing hidden tests and the likely mistakes,
    the hints and answers logged. Ctrl-C stops watching; the session is not touched."""
    lang = _lang(lang)
    with _guard():
        sessions, session, lang = _open_pair(lang, kata)
        note(say("watch_header", lang, kata=session.kata, when=when(session.started),
                 file=session.file), "bold")
        try:
            found = watch.follow(console, sessions, session, interview.kata_of(session), lang,
                                 interval)
        except KeyboardInterrupt:
            note(say("watch_stopped", lang), "yellow")
            return
    if not found:
        raise fail(say("no_pair", lang), 1)


def _live(session: Session, lang: str) -> None:
    """Logs go into a session whose clock still runs (closing it is the candidate's command)."""
    if interview.now() >= session.deadline:
        raise fail(say("time_up", lang), 1)


@interviewer.command("hint")
def hint(category: str = typer.Argument(..., metavar="CATEGORY",
                                        help="the hint category, as the script names it"),
         lang: str = LangOpt, kata: str = KataOpt) -> None:
    """Log a hint you gave (counted).

    The nudge first, then the pointer, counted as in solo mode."""
    lang = _lang(lang)
    with _guard():
        sessions, session, lang = _open_pair(lang, kata)
        hints = interview.kata_of(session).spec.hints
        if category not in hints:
            raise fail(say("bad_category", lang, kata=session.kata, category=category,
                           known=", ".join(hints)))
        _live(session, lang)
        at = interview.now()
        step = interview.give_hint(sessions, session, category, by="interviewer")
        if step is None:
            note(say("hint_spent", lang, category=category, text=hints[category](lang)[1]),
                 "yellow")
            return
        note(say("logged_hint", lang, at=clock(at - session.started), step=step + 1,
                 kind=say("nudge" if step == 0 else "pointer", lang), category=category,
                 text=hints[category](lang)[step]), "green")
        note(say("hints_given", lang, n=len(session.hints)))


@interviewer.command("answered")
def answered(which: list[str] = typer.Argument(..., metavar="N...",
                                               help="question numbers as the script gives "
                                                    "them, or their ids"),
             lang: str = LangOpt, kata: str = KataOpt) -> None:
    """Log the questions you answered (counted).

    Counted as in solo mode."""
    lang = _lang(lang)
    with _guard():
        sessions, session, lang = _open_pair(lang, kata)
        questions = interview.kata_of(session).spec.questions
        ids = [q.id for q in questions]
        indices = []
        for item in which:
            index = int(item) - 1 if item.isdigit() else ids.index(item) if item in ids else -1
            if not 0 <= index < len(questions):
                raise fail(say("bad_question", lang, kata=session.kata, which=item,
                               n=len(questions), ids=", ".join(ids)))
            indices.append(index)
        _live(session, lang)
        at = interview.now()
        fresh = interview.log_answers(sessions, session, indices)
        for i in dict.fromkeys(indices):
            if i in fresh:
                note(say("logged_answer", lang, at=clock(at - session.started), number=i + 1,
                         ask=questions[i].ask(lang)), "green")
            else:
                note(say("answered_before", lang, number=i + 1), "yellow")


@interviewer.command()
def score(dimension: list[str] = typer.Option([], "--dimension", metavar="ID=LEVEL",
                                              help="a dimension's level, 1 poor to 4 excellent "
                                                   "(repeatable)"),
          evidence: list[str] = typer.Option([], "--evidence", metavar="TEXT",
                                             help="what you saw, one per --dimension, in order"),
          covered: list[str] = typer.Option([], "--covered", metavar="F.P",
                                            help="follow-up F's point P was covered "
                                                 "(repeatable)"),
          missed: list[str] = typer.Option([], "--missed", metavar="F.P",
                                           help="it was not (the default; undoes --covered)"),
          notes: str = typer.Option(None, "--notes", help="free notes for the candidate"),
          lang: str = LangOpt, kata: str = KataOpt) -> None:
    """Score the last pair session on the rubric.

    One level, 1 poor to 4 excellent, and a line of evidence per dimension. On a terminal
    without options it asks for each dimension, showing its anchors. Scoring again replaces
    what it names and keeps the rest."""
    lang = _lang(lang)
    with _guard():
        store, session, lang = _last_pair(lang, kata)
        kata_ = interview.kata_of(session)
        flags = dimension or evidence or covered or missed or notes is not None
        if flags:
            entries = _entries(kata_, lang, dimension, evidence, covered, missed, notes)
        elif console.is_terminal:
            entries = _ask(kata_, session, lang)
        else:
            raise fail(say("nothing_to_score", lang))
        rubric.Scores(store).record(session.id, interview.now(), entries)
        stored = rubric.Scores(store).of(session.id)
        points = rubric.points(kata_)
        note(say("scored", lang, when=when(session.started), n=len(stored.levels),
                 covered=sum(stored.covered.get(p, False) for p in points), points=len(points)),
             "green")


def _entries(kata: catalog.Kata, lang: str, dimension: list[str], evidence: list[str],
             covered: list[str], missed: list[str], notes: str | None) -> list[tuple]:
    """The rubric entries the options give, every one validated before any is written."""
    known = [d.id for d in rubric.dimensions()]
    if len(evidence) != len(dimension):
        raise fail(say("evidence_count", lang, d=len(dimension), e=len(evidence)))
    entries = []
    for pair, why in zip(dimension, evidence, strict=True):
        name, _, level = pair.partition("=")
        if not level:
            raise fail(say("bad_pair", lang, text=pair))
        if name not in known:
            raise fail(say("bad_dimension", lang, name=name, known=", ".join(known)))
        if level.strip() not in {str(n) for n in rubric.LEVELS}:
            raise fail(say("bad_level", lang, dimension=name, level=level))
        if not why.strip():
            raise fail(say("empty_evidence", lang, dimension=name))
        entries.append((name, int(level), why.strip()))
    points = set(rubric.points(kata))
    for texts, value in ((covered, 1), (missed, 0)):
        for text in texts:
            f, _, p = text.partition(".")
            point = (int(f), int(p)) if f.isdigit() and p.isdigit() else None
            if point not in points:
                raise fail(say("bad_point", lang, text=text))
            entries.append((rubric.point_item(*point), value, ""))
    if notes is not None:
        entries.append((rubric.NOTES, None, notes.strip()))
    return entries


def _ask(kata: catalog.Kata, session: Session, lang: str) -> list[tuple]:
    """Each dimension with its anchors, then each follow-up point, then the notes."""
    printer = Screen(console, lang, "interviewer", wrap=True)
    printer.rule(say("score_title", lang, kata=kata.name, when=when(session.started)))
    entries = []
    for n, d in enumerate(rubric.dimensions(), start=1):
        printer.text(f"{n}. {d.name[lang]}", "bold")
        own = rubric.kata_anchors(kata, d.id, lang)
        for level, anchor in enumerate(d.anchors[lang], start=1):
            printer.say("anchor", level=level, label=rubric.level_name(level, lang),
                        text=anchor, indent=3)
            if own:
                printer.say("anchor_own", "cyan", text=own[level - 1], indent=5)
        level = typer.prompt(say("ask_level", lang), type=int)
        while level not in rubric.LEVELS:
            printer.say("bad_level", "red", dimension=d.id, level=level)
            level = typer.prompt(say("ask_level", lang), type=int)
        why = ""
        while not why.strip():
            why = typer.prompt(say("ask_evidence", lang))
        entries.append((d.id, level, why.strip()))
    for f, followup in enumerate(kata.spec.followups, start=1):
        printer.text(f"{f}. {followup.question(lang)}", "bold")
        for p, point in enumerate(followup.points(lang), start=1):
            yes = typer.confirm(say("ask_point", lang, point=point), default=False)
            entries.append((rubric.point_item(f, p), int(yes), ""))
    notes = typer.prompt(say("ask_notes", lang), default="", show_default=False)
    return entries + [(rubric.NOTES, None, notes.strip())]


@interviewer.command("report")
def report_(lang: str = LangOpt, html_file: Path = HtmlOpt, kata: str = KataOpt) -> None:
    """The candidate's feedback report.

    Of the last pair session: the timeline, what the grader measured, the rubric with its
    evidence, the follow-up points covered and missed, the next kata."""
    lang = _lang(lang)
    with _guard():
        store, session, lang = _last_pair(lang, kata)
        built = report.build(store, session, interview.kata_of(session), lang)
    _show(document.report(built), html_file)
