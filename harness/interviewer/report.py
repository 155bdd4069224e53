"""The candidate's feedback report of a pair session: the timeline (with the size of each change
to the file), what the grader measured, the interviewer's levels with their evidence and the
anchors of the level given and the next, the follow-up points covered, missed or not asked, the
overall recommendation, the final code and the next kata to try. Built as sections of lines, so
the terminal and the HTML page show the same text. The interviewer's copy (`private`) adds every
note; the candidate's shows only the notes marked for sharing."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness import catalog, mutants
from harness.interviewer import say
from harness.interviewer.timeline import Line, Timeline, likely
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
    code: str | None = None  # the candidate's file at the last submit


def build(store: Store, session: Session, kata: catalog.Kata, lang: str,
          private: bool = False) -> Report:
    subtitle = say("report_session", lang, when=when(session.started),
                   minutes=f"{session.minutes:g}", passed=session.levels_passed,
                   total=session.levels)
    timeline = Timeline(session, kata, lang, detail=False, private=private)
    events = [line for e in session.live for line in timeline.lines(e)]
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
    last = session.last_submit
    title = say("report_title_private" if private else "report_title", lang,
                title=kata.title(lang))
    return Report(lang, title, subtitle,
                  sections + [Section("", [next_kata(store, session, kata, lang)])],
                  last.code if last else None)


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
    """(mutant, seconds in when the diagnosis first named it, fixed): only the mistakes named at
    some submit, each fixed when the last submit judging its level no longer fails a test that
    catches it."""
    first: dict[str, tuple] = {}
    for submit in session.submits:
        for found in likely(kata, submit):
            first.setdefault(found.mutant, (found, submit.at - session.started))
    out = []
    for name, (found, at) in first.items():
        at_level = [s for s in session.submits if s.level == found.level] or session.submits
        failing = {f.title for f in at_level[-1].failures}
        try:
            mutant = mutants.get(kata, name)
        except (KeyError, mutants.MutantError):
            continue
        out.append((mutant, at, not failing & set(found.caught_by)))
    return out


def assessment(store: Store, session: Session, kata: catalog.Kata, lang: str) -> list[Line]:
    score = rubric.Scores(store).of(session.id)
    if score.empty:
        return [Line(say("not_scored", lang), "yellow")]
    lines = []
    for d in rubric.dimensions():
        level, evidence = score.levels.get(d.id, (None, ""))
        if level is None:
            lines.append(Line(say("dim_unscored", lang, name=d.name[lang]), "dim"))
            continue
        if level == rubric.NOT_OBSERVED:
            lines.append(Line(say("dim_not_observed", lang, name=d.name[lang]), "dim"))
            continue
        lines.append(Line(say("dim_line", lang, name=d.name[lang], level=level,
                              label=rubric.level_name(level, lang)), "bold"))
        lines.append(Line(say("evidence", lang, text=evidence)))
        lines.append(Line(say("anchor_given", lang, text=d.anchors[lang][level - 1]), "dim"))
        if level < rubric.LEVELS[-1]:
            lines.append(Line(say("anchor_next", lang, level=level + 1,
                                  text=d.anchors[lang][level]), "dim"))
    points = rubric.points(kata)
    covered = sum(bool(score.covered.get(p)) for p in points)
    lines.append(Line(say("points", lang, covered=covered, total=len(points)), "bold"))
    for f, followup in enumerate(kata.spec.followups, start=1):
        lines.append(Line(f"{f}. {followup.question(lang)}"))
        for p, text in enumerate(followup.points(lang), start=1):
            value = score.covered.get((f, p), False)
            key, style = ("point_not_asked", "dim") if value is None else \
                ("point_yes", "green") if value else ("point_no", "red")
            lines.append(Line(say(key, lang, text=text), style))
    if score.overall:
        level, evidence = score.overall
        lines.append(Line(say("overall_line", lang, level=level,
                              label=rubric.overall_name(level, lang)), "bold"))
        lines.append(Line(say("evidence", lang, text=evidence)))
        lines.append(Line(say("anchor_given", lang, text=rubric.overall_anchors(lang)[level - 1]),
                          "dim"))
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
