"""The candidate's feedback report of a pair session: the timeline, what the grader measured, the
interviewer's levels with their evidence, the follow-up points covered and missed, and the next
kata to try. Built as sections of lines, so the terminal and the HTML page show the same text."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness import catalog
from harness.interviewer import mistakes, say
from harness.interviewer.timeline import Line, Timeline
from harness.session import interview, rubric
from harness.session.clock import clock, when
from harness.session.log import Session, Sessions
from harness.store import Store


@dataclass
class Section:
    title: str
    lines: list[Line] = field(default_factory=list)


@dataclass
class Report:
    lang: str
    title: str
    subtitle: str
    sections: list[Section]


def build(store: Store, session: Session, kata: catalog.Kata, lang: str) -> Report:
    subtitle = say("report_session", lang, when=when(session.started),
                   minutes=f"{session.minutes:g}", passed=session.levels_passed,
                   total=session.levels)
    timeline = Timeline(session, kata, lang, detail=False)
    events = [line for e in session.events for line in timeline.lines(e)]
    lines = [Line(say("still_open", lang), "yellow")] if session.is_open else []
    lines += [Line(say("tl_start", lang))] + events
    if not session.is_open:
        lines.append(timeline.end())
    sections = [Section(say("timeline", lang), lines),
                Section(say("measured", lang), measured(session, kata, lang)),
                Section(say("assessment", lang), assessment(store, session, kata, lang))]
    selfcheck = kata.spec.selfcheck(lang)
    if selfcheck:
        sections.append(Section(say("selfcheck", lang),
                                [Line(f"[ ] {item}") for item in selfcheck]))
    return Report(lang, say("report_title", lang, title=kata.title(lang)), subtitle,
                  sections + [Section("", [next_kata(store, session, kata, lang)])])


def measured(session: Session, kata: catalog.Kata, lang: str) -> list[Line]:
    last = session.last_submit
    counts = last.counts if last and not last.import_error else {}
    passed_at = {level: at for level, at, _ in session.level_times()}
    lines = []
    for level in range(1, session.levels + 1):
        if level not in counts:
            lines.append(Line(say("not_submitted", lang, n=level), "dim"))
            continue
        ok, total = counts[level]
        text = say("measured_level", lang, n=level, passed=ok, total=total)
        if level in passed_at:
            text += say("measured_passed", lang, at=clock(passed_at[level]))
        lines.append(Line(text, "green" if ok == total else "red"))
    asked = len(session.asked)
    lines.append(Line(say("totals", lang, submits=len(session.submits),
                          hints=len(session.hints), asked=asked,
                          total=len(kata.spec.questions))))
    hit = hits(session, kata)
    lines.append(Line(say("hit" if hit else "none_hit", lang)))
    for mutant, first, fixed in hit:
        lines.append(Line(say("hit_item", lang, mistake=mutant.mistake[lang], name=mutant.name,
                              at=clock(first), state=say("fixed" if fixed else "still", lang)),
                          "green" if fixed else "red"))
    return lines


def hits(session: Session, kata: catalog.Kata) -> list[tuple]:
    """(mutant, seconds in when a failing test first pointed at it, fixed by the last submit)."""
    found = mistakes.load(kata)
    first: dict[str, tuple] = {}
    for submit in session.submits:
        for failure in submit.shown():
            for m in mistakes.likely(found, failure.title):
                first.setdefault(m.name, (m, submit.at - session.started))
    last = session.last_submit
    failing = {f.title for f in last.failures} if last else set()
    return [(m, at, not failing & set(m.caught_by)) for m, at in first.values()]


def assessment(store: Store, session: Session, kata: catalog.Kata, lang: str) -> list[Line]:
    score = rubric.Scores(store).of(session.id)
    if score.empty:
        return [Line(say("not_scored", lang), "yellow")]
    lines = []
    for d in rubric.dimensions():
        if d.id not in score.levels:
            lines.append(Line(say("dim_unscored", lang, name=d.name[lang]), "dim"))
            continue
        level, evidence = score.levels[d.id]
        lines.append(Line(say("dim_line", lang, name=d.name[lang], level=level,
                              label=rubric.level_name(level, lang)), "bold"))
        lines.append(Line(say("evidence", lang, text=evidence)))
    points = rubric.points(kata)
    covered = sum(score.covered.get(p, False) for p in points)
    lines.append(Line(say("points", lang, covered=covered, total=len(points)), "bold"))
    for f, followup in enumerate(kata.spec.followups, start=1):
        lines.append(Line(f"{f}. {followup.question(lang)}"))
        for p, text in enumerate(followup.points(lang), start=1):
            yes = score.covered.get((f, p), False)
            lines.append(Line(say("point_yes" if yes else "point_no", lang, text=text),
                              "green" if yes else "red"))
    if score.notes:
        lines.append(Line(say("notes", lang, text=score.notes)))
    return lines


def next_kata(store: Store, session: Session, kata: catalog.Kata, lang: str) -> Line:
    if not session.done:
        return Line(say("again", lang, kata=kata.name), "bold")
    chosen = interview.choose(store, Sessions(store), exclude=kata.name)
    if chosen is None:
        return Line(say("all_done", lang), "bold")
    return Line(say("next", lang, kata=chosen.name, title=chosen.title(lang)), "bold")
