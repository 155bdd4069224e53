"""`kata interviewer ...`: the interviewer's side of a pair mock interview. Nothing here writes the
candidate's files; each command reads the session as it is and changes only what its name says
(`hint`, `answered`, `note` and `undo` log into a session, `score` into the rubric, `script` the
interviewer's own reveal, never the candidate's). `--session N` picks a pair session by the
number `kata interviewer sessions` gives it; without it, the last one."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from harness import catalog, command, grading
from harness.command import SessionLangOpt as LangOpt
from harness.command import checked_lang, say_to
from harness.interviewer import document, report, say, script, suite, timeline, watch
from harness.lang import lang as default_lang
from harness.screen import Screen
from harness.session import interview, rubric
from harness.session.clock import clock, when
from harness.session.log import TAKEN_BACK, Kind, Mode, Session, Sessions
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
SessionOpt = typer.Option(None, "--session", metavar="N",
                          help="the pair session's number in `kata interviewer sessions` "
                               "(default: the last)")
INTERVIEWER = "interviewer:"  # the interviewer's reveals, kept apart from the candidate's
LEVELS = {str(n) for n in rubric.LEVELS}  # a level as typed


def fail(message: str, code: int = 2) -> typer.Exit:
    say_to(console, message, "red")
    return typer.Exit(code)


def note(message: str, style: str | None = None) -> None:
    say_to(console, message, style)


def _pick(lang: str | None, kata_name: str | None, number: int | None,
          open_only: bool = False) -> tuple[Sessions, Session, str, catalog.Kata]:
    """The pair session numbered `number`, or the last one (the open one with `open_only`), the
    language to speak (`--lang`, else the session's) and the session's kata."""
    lang = checked_lang(lang)
    sessions = Sessions(command.open_store(console))
    if number is not None:
        session = next((s for s in sessions.pairs() if s.id == number), None)
        if session is None:
            raise fail(say("no_session", lang or default_lang(), n=number))
    elif open_only:
        session = sessions.current()
        if session is None or session.mode != Mode.PAIR:
            raise fail(say("no_pair", lang or (session.lang if session else default_lang())))
    else:
        session = sessions.last_pair()
        if session is None:
            raise fail(say("no_pair_yet", lang or default_lang()))
    lang = lang or session.lang
    if kata_name is not None and kata_name != session.kata:
        raise fail(say("other_kata", lang, kata=session.kata, wanted=kata_name))
    kata = interview.kata_of(session)
    if kata is None:
        raise fail(say_key("mock.kata_gone", lang, kata=session.kata))
    return sessions, session, lang, kata


def _known(dimension: str, lang: str) -> str:
    """A rubric dimension's id, refused unless there is one."""
    known = [d.id for d in rubric.dimensions()]
    if dimension not in known:
        raise fail(say("bad_dimension", lang, name=dimension, known=", ".join(known)))
    return dimension


def _show(doc: document.Document, html_file: Path | None) -> None:
    """On the terminal, or as one HTML page in `html_file`."""
    if html_file is None:
        document.show(console, doc)
        return
    html_file.parent.mkdir(parents=True, exist_ok=True)
    html_file.write_text(document.page(doc), encoding="utf-8")
    note(say("wrote", doc.lang, path=html_file))


def _reveal(store: Store, kata: catalog.Kata, lang: str, yes: bool) -> None:
    """The script is the interviewer's: asked for once and recorded as the interviewer's look,
    never as the candidate's "solution looked at", so it unlocks nothing the candidate sees. Run
    while a pair session on the kata is open, the session logs it too: both see it."""
    if interview.look("kata interviewer script", kata.name):
        note(say("visible", lang), "yellow")
    mark = INTERVIEWER + kata.name
    if command.earned(store, kata) or command.maintainer() or store.revealed(mark):
        return
    if not yes and not command.confirm(say("reveal", lang, kata=kata.name), lang=lang):
        raise typer.Exit(1)
    store.add_reveal(mark)


@interviewer.command("script")
def script_(name: str = typer.Argument(..., metavar="KATA", help="the kata's name"),
            lang: str = command.LangOpt,
            html_file: Path = HtmlOpt,
            yes: bool = typer.Option(False, "--yes", help="do not ask before revealing")) -> None:
    """The script: briefs, answers, hints, mistakes.

    A sheet per level, then the follow-ups and the rubric. It holds the answers, the hints
    and the classic mistakes, so the first look asks and is recorded as yours, the
    interviewer's: it does not count as the candidate looking at the solution."""
    lang = command.language(lang)
    kata = command.kata(name)
    with command.guard(console):
        store = command.open_store(console)
        _reveal(store, kata, lang, yes)
        firsts = script.ranked_first(kata, Sessions(store).history(kata.name))
    try:
        tests = suite.hidden_tests(kata)
    except grading.GradingError as exc:
        raise fail(str(exc)) from exc
    _show(document.script(script.build(kata, lang, tests, firsts)), html_file)


@interviewer.command("sessions")
def sessions_(lang: str = LangOpt) -> None:
    """List the pair sessions, the last one last.

    Each with its number (for --session N), kata, date, candidate and state."""
    lang = command.language(lang)
    with command.guard(console):
        store = command.open_store(console)
        found = Sessions(store).pairs()
        if not found:
            raise fail(say("no_pair_yet", lang), 1)
        for s in found:
            scored = not rubric.Scores(store).of(s.id).empty
            state = say("state_open" if s.is_open else "state_scored" if scored
                        else "state_done", lang)
            note(say("session_row", lang, n=s.id, kata=s.kata, when=when(s.started),
                     candidate=s.candidate or "—", passed=s.levels_passed, total=s.levels,
                     state=state))


@interviewer.command("watch")
def watch_(lang: str = LangOpt, kata: str = KataOpt, number: int = SessionOpt,
           candidate: str = typer.Option(None, "--candidate", metavar="NAME",
                                         help="name the candidate in `kata interviewer "
                                              "sessions`"),
           interval: float = typer.Option(watch.INTERVAL, hidden=True)) -> None:
    """Follow a pair session live.

    By default the open one. In a second terminal: every submit with the verdicts the
    candidate saw, at most two likely mistakes and the diff of the file since the previous
    submit; the hints, answers and notes logged; the candidate's looks at the prompt, the
    mutants or the solution. Before the candidate starts, it waits. Ctrl-C stops watching;
    the session is not touched."""
    lang = checked_lang(lang)
    with command.guard(console):
        sessions = Sessions(command.open_store(console))
        try:
            if number is None:
                number = watch.wait(console, sessions, lang or default_lang(), interval).id
            sessions, session, lang, kata_ = _pick(lang, kata, number)
            if candidate:
                sessions.record(session, interview.now(), (Kind.LABEL, session.level,
                                                           {"candidate": candidate.strip()}))
            note(say("watch_header", lang, kata=session.kata, when=when(session.started),
                     file=session.file), "bold")
            found = watch.follow(console, sessions, session, kata_, lang, interval)
        except KeyboardInterrupt:
            note(say("watch_stopped", lang or default_lang()), "yellow")
            return
    if not found:
        raise fail(say("no_pair", lang), 1)


@interviewer.command("replay")
def replay(lang: str = LangOpt, kata: str = KataOpt, number: int = SessionOpt,
           step: bool = typer.Option(False, "--step", help="wait for Enter between submits")
           ) -> None:
    """Step through the candidate's file, submit by submit.

    Each submit with its time and verdict and the diff since the one before (the first in
    full), then the final code."""
    with command.guard(console):
        _, session, lang, kata_ = _pick(lang, kata, number)
    printer = Screen(console, lang, "interviewer", wrap=True)
    printer.rule(say("replay_title", lang, kata=session.kata, when=when(session.started)))
    lines = timeline.Timeline(session, kata_, lang, detail=True)
    submits = session.of(Kind.SUBMIT)
    if not submits:
        printer.say("no_submits", "yellow")
    for n, event in enumerate(submits, start=1):
        printer.say("replay_step", "bold", n=n, total=len(submits))
        for line in lines.lines(event):
            printer.text(line.text, line.style)
        if step and n < len(submits):
            typer.prompt(say("replay_next", lang), default="", show_default=False)


@interviewer.command("note")
def note_(text: str = typer.Argument(..., metavar="TEXT", help="what you saw or heard"),
          dimension: str = typer.Option("", "--dimension", metavar="ID",
                                        help="the rubric dimension it is evidence for"),
          share: bool = typer.Option(False, "--share",
                                     help="show it in the candidate's report too"),
          lang: str = LangOpt, kata: str = KataOpt, number: int = SessionOpt) -> None:
    """Note what you see, with its time.

    Offered as evidence when you score, in your copy of the report, and in the candidate's
    only with --share."""
    with command.guard(console):
        sessions, session, lang, _ = _pick(lang, kata, number)
        if dimension:
            _known(dimension, lang)
        if not text.strip():
            raise fail(say("empty_note", lang))
        at = interview.now()
        sessions.record(session, at, (Kind.NOTE, min(session.level, session.levels),
                                      {"text": text.strip(), "dimension": dimension,
                                       "share": share, "by": "interviewer"}))
        note(say("logged_note", lang, at=clock(at - session.started),
                 shared=say("note_shared" if share else "note_private", lang)), "green")


@interviewer.command("undo")
def undo(lang: str = LangOpt, kata: str = KataOpt, number: int = SessionOpt) -> None:
    """Take back the last hint, answer or note you logged.

    Says which; the counts and the candidate's report follow."""
    with command.guard(console):
        sessions, session, lang, kata_ = _pick(lang, kata, number)
        last = next((e for e in reversed(session.live) if e.kind in TAKEN_BACK), None)
        if last is None:
            raise fail(say("nothing_to_undo", lang), 1)
        what = timeline.Timeline(session, kata_, lang, True).what(last)
        sessions.record(session, interview.now(), (Kind.UNDO, last.level, {"event": last.id}))
        note(say("undone", lang, what=what, at=clock(last.at - session.started)), "green")
        note(say("counts_now", lang, hints=len(session.hints), asked=len(session.asked)))


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
    with command.guard(console):
        sessions, session, lang, kata_ = _pick(lang, kata, None, open_only=True)
        hints = kata_.spec.hints
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
    with command.guard(console):
        sessions, session, lang, kata_ = _pick(lang, kata, None, open_only=True)
        questions = kata_.spec.questions
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
          not_observed: list[str] = typer.Option([], "--not-observed", metavar="ID",
                                                 help="nothing in the round showed this "
                                                      "dimension (repeatable)"),
          covered: list[str] = typer.Option([], "--covered", metavar="F.P",
                                            help="follow-up F's point P was covered "
                                                 "(repeatable)"),
          missed: list[str] = typer.Option([], "--missed", metavar="F.P",
                                           help="it was not (the default; undoes --covered)"),
          not_asked: list[int] = typer.Option([], "--not-asked", metavar="F",
                                              help="follow-up F was never asked (repeatable)"),
          overall: int = typer.Option(None, "--overall", metavar="LEVEL",
                                      help="the overall recommendation, 1 to 4"),
          overall_evidence: str = typer.Option("", "--overall-evidence", metavar="TEXT",
                                               help="why, for --overall"),
          notes: str = typer.Option(None, "--notes", help="free notes for the candidate"),
          lang: str = LangOpt, kata: str = KataOpt, number: int = SessionOpt) -> None:
    """Score a pair session on the rubric.

    By default the last one. One level, 1 poor to 4 excellent, and a line of evidence per
    dimension, or "not observed"; the follow-up points, or "not asked"; an overall
    recommendation. On a terminal without options it asks for each, offering your notes as
    evidence, and saves each answer as it is given: stopped midway, it resumes where it stopped.
    Scoring again replaces what it names and keeps the rest."""
    with command.guard(console):
        sessions, session, lang, kata_ = _pick(lang, kata, number)
        scores = rubric.Scores(sessions.store)
        points = rubric.points(kata_)
        if dimension or evidence or not_observed or covered or missed or not_asked \
                or overall is not None or notes is not None:
            if len(evidence) != len(dimension):
                raise fail(say("evidence_count", lang, d=len(dimension), e=len(evidence)))
            entries = []
            for pair, why in zip(dimension, evidence, strict=True):
                name, _, level = pair.partition("=")
                if not level:
                    raise fail(say("bad_pair", lang, text=pair))
                entries.append(_rated(lang, _known(name, lang), level, why))
            for texts, value in ((covered, 1), (missed, 0)):
                for text in texts:
                    f, _, p = text.partition(".")
                    point = (int(f), int(p)) if f.isdigit() and p.isdigit() else None
                    if point not in points:
                        raise fail(say("bad_point", lang, text=text))
                    entries.append((rubric.point_item(*point), value, ""))
            if notes is not None:
                entries.append((rubric.NOTES, None, notes.strip()))
            entries += [(_known(name, lang), rubric.NOT_OBSERVED, "") for name in not_observed]
            for f in not_asked:
                if not 1 <= f <= len(kata_.spec.followups):
                    raise fail(say("bad_point", lang, text=str(f)))
                entries += [(rubric.point_item(f, p), rubric.NOT_ASKED, "")
                            for g, p in points if g == f]
            if overall is not None:
                entries.append(_rated(lang, rubric.OVERALL, overall, overall_evidence))
            scores.record(session.id, interview.now(), entries)
        elif console.is_terminal:
            try:
                _ask(kata_, session, lang, scores.of(session.id),
                     lambda *e: scores.record(session.id, interview.now(), list(e)))
            except (KeyboardInterrupt, typer.Abort):
                raise fail(say("score_paused", lang), 130) from None
        else:
            raise fail(say("nothing_to_score", lang))
        stored = scores.of(session.id)
        note(say("scored", lang, when=when(session.started), n=len(stored.levels),
                 covered=sum(bool(stored.covered.get(p)) for p in points), points=len(points)),
             "green")


def _rated(lang: str, name: str, level: str | int, why: str) -> tuple[str, int, str]:
    """A dimension's or the overall level with its evidence, refused unless the level is 1 to 4
    and the evidence says something."""
    if str(level).strip() not in LEVELS:
        raise fail(say("bad_level", lang, dimension=name, level=level))
    if not why.strip():
        raise fail(say("empty_evidence", lang, dimension=name))
    return name, int(level), why.strip()


def _ask(kata: catalog.Kata, session: Session, lang: str, stored: rubric.Score, save) -> None:
    """Each dimension with its anchors and the notes tagged for it, then each follow-up, the
    overall recommendation and the notes; each saved by `save(*entries)` as it is given. What a
    stopped run saved is not asked again, unless everything was (then it all is, to rescore)."""
    printer = Screen(console, lang, "interviewer", wrap=True)
    printer.rule(say("score_title", lang, kata=kata.name, when=when(session.started)))
    followups = kata.spec.followups
    asked = {f for f in range(1, len(followups) + 1)
             if all((f, p) in stored.covered for g, p in rubric.points(kata) if g == f)}
    if len(stored.levels) == len(rubric.dimensions()) and len(asked) == len(followups) \
            and stored.overall is not None:
        stored, asked = rubric.Score(), set()
    elif not stored.empty:
        printer.say("score_resumed", "yellow")
    notes = session.of(Kind.NOTE)
    for n, d in enumerate(rubric.dimensions(), start=1):
        if d.id in stored.levels:
            continue
        sheet = document.Document(lang, d.name[lang])
        sheet.add("text", f"{n}. {d.name[lang]}", "bold")
        document.anchors(sheet, d, rubric.kata_anchors(kata, d.id, lang))
        offered = [e for e in notes if e.data.get("dimension") in ("", d.id)]
        for k, e in enumerate(offered, start=1):
            sheet.say("offered_note", "cyan", 3, k=k, at=clock(e.at - session.started),
                      text=e.data["text"])
        document.show(console, sheet)
        level = _ask_level(printer, lang, d.id, allow_none=True)
        save((d.id, level, "" if level == rubric.NOT_OBSERVED else _evidence(lang, offered)))
    for f, followup in enumerate(followups, start=1):
        if f in asked:
            continue
        printer.text(f"{f}. {followup.question(lang)}", "bold")
        was_asked = command.confirm(say("ask_asked", lang), True, lang)
        entries = []
        for p, point in enumerate(followup.points(lang), start=1):
            value = int(command.confirm(say("ask_point", lang, point=point), False, lang)) \
                if was_asked else rubric.NOT_ASKED
            entries.append((rubric.point_item(f, p), value, ""))
        save(*entries)
    if stored.overall is None:
        sheet = document.Document(lang, say("overall", lang))
        sheet.add("text", sheet.title, "bold")
        document.anchors(sheet, None)
        document.show(console, sheet)
        level = _ask_level(printer, lang, rubric.OVERALL, allow_none=False)
        save((rubric.OVERALL, level, _evidence(lang, notes)))
    text = typer.prompt(say("ask_notes", lang), default="", show_default=False)
    save((rubric.NOTES, None, text.strip()))


def _ask_level(printer: Screen, lang: str, name: str, allow_none: bool) -> int:
    """A level from 1 to 4, or "n" (not observed) where allowed."""
    while True:
        answer = typer.prompt(say("ask_level_n" if allow_none else "ask_level", lang)).strip()
        if allow_none and answer.lower() == "n":
            return rubric.NOT_OBSERVED
        if answer in LEVELS:
            return int(answer)
        printer.say("bad_level", "red", dimension=name, level=answer)


def _evidence(lang: str, offered: list) -> str:
    """Typed, or a note picked by its number."""
    why = ""
    while not why.strip():
        why = typer.prompt(say("ask_evidence_notes" if offered else "ask_evidence", lang))
        if why.strip().isdigit() and 1 <= int(why) <= len(offered):
            why = offered[int(why) - 1].data["text"]
    return why.strip()


@interviewer.command("report")
def report_(lang: str = LangOpt, html_file: Path = HtmlOpt, kata: str = KataOpt,
            number: int = SessionOpt,
            mine: bool = typer.Option(False, "--mine",
                                      help="the interviewer's copy: every note, shared or not")
            ) -> None:
    """The candidate's feedback report.

    By default of the last pair session. The timeline with each change to the file, what the
    grader measured, the rubric with its evidence and anchors, the follow-up points covered,
    missed or not asked, the overall recommendation, the final code, the next kata. Your
    notes appear only with --mine, or where you shared them."""
    with command.guard(console):
        sessions, session, lang, kata_ = _pick(lang, kata, number)
        built = report.build(sessions.store, session, kata_, lang, mine)
    _show(built, html_file)
