"""A session's log as the interviewer reads it: one line per event, in the session's clock.

The live view (`detail`) shows each submit once with the verdicts the candidate saw, at most two
likely mistakes ranked by the diagnosis (harness/diagnosis.py), and the diff of the candidate's
file since the previous submit; the report keeps the verdict lines and a diff's size. Notes are
the interviewer's: the report shows one only in the interviewer's copy or when it is shared.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from harness import catalog, diagnosis, mutants
from harness.interviewer import say
from harness.results import counted, times
from harness.session.clock import clock
from harness.session.log import Event, Kind, Reason, Session, Submit


@dataclass(frozen=True)
class Line:
    text: str
    style: str = ""  # a rich style: "red", "green", "dim", "bold", "cyan"


REASONS = {Reason.PASSED: "reason_passed", Reason.TIME: "reason_time", Reason.ENDED: "reason_ended"}


def likely(kata: catalog.Kata | None, submit: Submit) -> list[diagnosis.Likely]:
    """At most two likely mistakes of one submit; none without a kata or fresh signatures."""
    failing = {f.title for f in submit.failures if f.level > 0}
    if kata is None or not failing or submit.import_error:
        return []
    try:
        return diagnosis.likely(kata, failing, range(1, submit.level + 1))
    except diagnosis.NoSignatures:
        return []


def diff(before: str | None, after: str | None) -> list[str]:
    """The changed lines with one line of context, without the file headers."""
    lines = difflib.unified_diff((before or "").splitlines(), (after or "").splitlines(),
                                 lineterm="", n=1)
    return [line for line in lines if not line.startswith(("---", "+++"))]


def size(lines: list[str]) -> tuple[int, int]:
    """(lines added, lines removed) of a diff."""
    return (sum(line.startswith("+") for line in lines),
            sum(line.startswith("-") for line in lines))


class Timeline:
    """Turns events into lines, each event once (a step logged twice counts once, as in the
    session's own state)."""

    def __init__(self, session: Session, kata: catalog.Kata | None, lang: str,
                 detail: bool, private: bool = True) -> None:
        self.kata, self.lang, self.detail, self.private = kata, lang, detail, private
        self.seen: set[tuple] = set()
        self.session = session
        self.code: str | None = None  # the file at the previous submit

    def at(self, event: Event) -> str:
        return clock(event.at - self.session.started)

    def lines(self, event: Event) -> list[Line]:
        key = {Kind.PASS: (Kind.PASS, event.level),
               Kind.HINT: (Kind.HINT, event.data.get("category"), event.data.get("step")),
               Kind.ASK: (Kind.ASK, event.data.get("question"))}.get(event.kind)
        if key is not None:
            if key in self.seen:
                return []
            self.seen.add(key)
        return getattr(self, f"_{event.kind.value}")(event)

    def _submit(self, e: Event) -> list[Line]:
        submit = Submit.of(e)
        out = [Line(say("ev_time_up", self.lang, at=self.at(e)), "yellow")] \
            if submit.time_up else []
        changes = diff(self.code, submit.code) if submit.code is not None else []
        if submit.code is not None:
            self.code = submit.code
        if submit.import_error:
            out.append(Line(say("ev_import", self.lang, at=self.at(e),
                                error=submit.import_error), "red"))
        else:
            passed, total = submit.counts.get(e.level, (0, 0))
            out.append(Line(say("ev_submit", self.lang, at=self.at(e), n=e.level, passed=passed,
                                total=total), "green" if passed == total else "red"))
        if not self.detail:
            if changes:
                added, removed = size(changes)
                out.append(Line(say("ev_changed", self.lang, added=added, removed=removed),
                                "dim"))
            return out
        # what the candidate saw: each failing title once, with the verdict it printed
        shown = ((f.level, f.title, f.hint, f.verdict) for f in submit.shown())
        for (level, title, hint, verdict), n in counted(shown):
            where = say("ev_where", self.lang, n=level) if level != e.level else ""
            out.append(Line(say("ev_failure", self.lang, where=where, title=title, hint=hint,
                                verdict=verdict, times=times(n)), "red"))
        for found in likely(self.kata, submit):
            out.append(Line(say("ev_likely", self.lang, mistake=self.mistake(found.mutant),
                                name=found.mutant, score=f"{found.score:.2f}"), "cyan"))
        if changes:
            out.append(Line(say("ev_diff", self.lang), "bold"))
            out += [Line(line, "green" if line.startswith("+") else
                         "red" if line.startswith("-") else "dim") for line in changes]
        return out

    def mistake(self, name: str) -> str:
        try:
            return mutants.get(self.kata, name).mistake[self.lang]
        except (KeyError, mutants.MutantError):
            return name

    def _pass(self, e: Event) -> list[Line]:
        took = {level: t for level, _, t in self.session.level_times()}
        out = [Line(say("ev_pass", self.lang, at=self.at(e), n=e.level,
                        took=clock(took.get(e.level, 0.0))), "green")]
        if self.detail and e.level < self.session.levels:
            out.append(Line(say("ev_unlocked", self.lang, n=e.level + 1), "bold"))
        return out

    def _hint(self, e: Event) -> list[Line]:
        return [Line(say("ev_hint", self.lang, at=self.at(e), step=e.data["step"] + 1,
                         category=e.data["category"]))]

    def _ask(self, e: Event) -> list[Line]:
        return [Line(say("ev_ask", self.lang, at=self.at(e), number=e.data["question"] + 1,
                         ask=self.question(e.data["question"])))]

    def question(self, index: int) -> str:
        questions = self.kata.spec.questions if self.kata else ()
        return questions[index].ask(self.lang) if 0 <= index < len(questions) else "?"

    def _spec(self, e: Event) -> list[Line]:
        return [Line(say("ev_spec", self.lang, at=self.at(e), n=e.level), "yellow")]

    def _note(self, e: Event) -> list[Line]:
        if not (self.private or e.data.get("share")):
            return []
        tag = f" `{e.data['dimension']}`" if e.data.get("dimension") else ""  # a rubric id
        return [Line(say("ev_note", self.lang, at=self.at(e), tag=tag, text=e.data["text"]),
                     "cyan")]

    def _look(self, e: Event) -> list[Line]:
        return [Line(say("ev_look", self.lang, at=self.at(e),
                         command=f"{e.data['what']} {e.data.get('detail', '')}".strip()),
                     "yellow")]

    def _label(self, e: Event) -> list[Line]:
        return [Line(say("ev_label", self.lang, name=e.data["candidate"]), "dim")] \
            if self.detail else []

    def _undo(self, e: Event) -> list[Line]:
        taken = next((x for x in self.session.events if x.id == e.data["event"]), None)
        what = self.what(taken) if taken else "?"
        return [Line(say("ev_undo", self.lang, at=self.at(e), what=what), "yellow")]

    def what(self, e: Event) -> str:
        """A hint, answer or note in a few words: what an undo says it took back."""
        if e.kind == Kind.HINT:
            return say("what_hint", self.lang, step=e.data["step"] + 1,
                       category=e.data["category"])
        if e.kind == Kind.ASK:
            return say("what_answer", self.lang, number=e.data["question"] + 1)
        return say("what_note", self.lang, text=e.data.get("text", ""))

    def end(self) -> Line:
        s = self.session
        return Line(say("ev_end", self.lang, at=clock((s.ended or s.started) - s.started),
                        reason=say(REASONS.get(s.reason, "reason_ended"), self.lang),
                        passed=s.levels_passed, total=s.levels), "bold")
