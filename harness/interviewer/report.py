"""The candidate's feedback report of a pair session, as one document: the timeline, what the
grader measured, the rubric with its evidence and anchors, the follow-up points, the final code
and the next kata. The interviewer's copy (`private`) adds every note; the candidate's shows
only the notes marked for sharing."""

from __future__ import annotations

from harness import catalog, mutants
from harness.interviewer import say
from harness.interviewer.document import Document
from harness.interviewer.timeline import Timeline, likely
from harness.session import interview, rubric
from harness.session.clock import clock, when
from harness.session.log import Session, Sessions
from harness.store import Store


def build(store: Store, session: Session, kata: catalog.Kata, lang: str,
          private: bool = False) -> Document:
    doc = Document(lang, say("report_title_private" if private else "report_title", lang,
                             title=kata.title(lang)))
    doc.add("title", doc.title)
    doc.say("report_session", "bold", when=when(session.started), minutes=f"{session.minutes:g}",
            passed=session.levels_passed, total=session.levels)
    doc.add("section", say("timeline", lang))
    if session.is_open:
        doc.say("still_open", "yellow")
    doc.say("tl_start")
    timeline = Timeline(session, kata, lang, detail=False, private=private)
    lines = [line for e in session.live for line in timeline.lines(e)]
    for line in lines if session.is_open else [*lines, timeline.end()]:
        doc.add("text", line.text, line.style)
    doc.add("section", say("measured", lang))
    measured(doc, session, kata)
    doc.add("section", say("assessment", lang))
    assessment(doc, rubric.Scores(store).of(session.id), kata)
    selfcheck = kata.spec.selfcheck(lang)
    if selfcheck:
        doc.add("section", say("selfcheck", lang))
    for item in selfcheck:
        doc.add("text", f"[ ] {item}")
    next_kata(doc, store, session, kata)
    last = session.last_submit
    if last and last.code is not None:
        doc.add("section", say("final_code", lang))
        doc.add("markdown", f"~~~~python\n{last.code}\n~~~~")
    return doc


def measured(doc: Document, session: Session, kata: catalog.Kata) -> None:
    last = session.last_submit
    counts = last.counts if last and not last.import_error else {}
    passed_at = {level: at for level, at, _ in session.level_times()}
    for level in range(1, session.levels + 1):
        if level not in counts:
            doc.say("not_submitted", "dim", n=level)
            continue
        ok, total = counts[level]
        text = say("measured_level", doc.lang, n=level, passed=ok, total=total)
        if level in passed_at:
            text += say("measured_passed", doc.lang, at=clock(passed_at[level]))
        doc.add("text", text, "green" if ok == total else "red")
    doc.say("totals", submits=len(session.submits), hints=len(session.hints),
            asked=len(session.asked), total=len(kata.spec.questions))
    hit = hits(session, kata)
    doc.say("hit" if hit else "none_hit")
    for mutant, first, fixed in hit:
        state = say("fixed" if fixed else "still", doc.lang)
        doc.say("hit_item", "green" if fixed else "red", mistake=mutant.mistake[doc.lang],
                name=mutant.name, at=clock(first), state=state)


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


def assessment(doc: Document, score: rubric.Score, kata: catalog.Kata) -> None:
    lang = doc.lang
    if score.empty:
        doc.say("not_scored", "yellow")
        return
    for d in rubric.dimensions():
        level, evidence = score.levels.get(d.id, (None, ""))
        if level is None or level == rubric.NOT_OBSERVED:
            doc.say("dim_unscored" if level is None else "dim_not_observed", "dim",
                    name=d.name[lang])
            continue
        doc.say("dim_line", "bold", name=d.name[lang], level=level,
                label=rubric.level_name(level, lang))
        doc.say("evidence", text=evidence)
        doc.say("anchor_given", "dim", text=d.anchors[lang][level - 1])
        if level < rubric.LEVELS[-1]:
            doc.say("anchor_next", "dim", level=level + 1, text=d.anchors[lang][level])
    points = rubric.points(kata)
    doc.say("points", "bold", covered=sum(bool(score.covered.get(p)) for p in points),
            total=len(points))
    for f, followup in enumerate(kata.spec.followups, start=1):
        doc.add("text", f"{f}. {followup.question(lang)}")
        for p, text in enumerate(followup.points(lang), start=1):
            value = score.covered.get((f, p), False)
            key, style = ("point_not_asked", "dim") if value is None else \
                ("point_yes", "green") if value else ("point_no", "red")
            doc.say(key, style, text=text)
    if score.overall:
        level, evidence = score.overall
        doc.say("overall_line", "bold", level=level, label=rubric.overall_name(level, lang))
        doc.say("evidence", text=evidence)
        doc.say("anchor_given", "dim", text=rubric.overall_anchors(lang)[level - 1])
    if score.notes:
        doc.say("notes", text=score.notes)


def next_kata(doc: Document, store: Store, session: Session, kata: catalog.Kata) -> None:
    if not session.done:
        doc.say("again", "bold", kata=kata.name)
        return
    chosen = interview.choose(store, Sessions(store), exclude=kata.name)
    if chosen is None:
        doc.say("all_done", "bold")
    else:
        doc.say("next", "bold", kata=chosen.name, title=chosen.title(doc.lang))
