"""A session's log as the interviewer reads it: one line per event, in the session's clock.

The live view shows each submit with its failing hidden tests and, under each title, the classic
mistakes whose `caught_by` names it; the report keeps the lines without that detail.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness import catalog, mutants
from harness.interviewer import mistakes, say
from harness.results import counted, times
from harness.session.clock import clock
from harness.session.log import Event, Kind, Reason, Session, Submit


@dataclass(frozen=True)
class Line:
    text: str
    style: str = ""  # a rich style: "red", "green", "dim", "bold", "cyan"


REASONS = {Reason.PASSED: "reason_passed", Reason.TIME: "reason_time", Reason.ENDED: "reason_ended"}


class Timeline:
    """Turns events into lines, each event once (a step logged twice counts once, as in the
    session's own state)."""

    def __init__(self, session: Session, kata: catalog.Kata | None, lang: str,
                 detail: bool) -> None:
        self.kata, self.lang, self.detail = kata, lang, detail
        self.found: list[mutants.Mutant] = mistakes.load(kata) if kata and detail else []
        self.seen: set[tuple] = set()
        self.session = session

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
        if submit.import_error:
            return out + [Line(say("ev_import", self.lang, at=self.at(e),
                                   error=submit.import_error), "red")]
        passed, total = submit.counts.get(e.level, (0, 0))
        out.append(Line(say("ev_submit", self.lang, at=self.at(e), n=e.level, passed=passed,
                            total=total), "green" if passed == total else "red"))
        if not self.detail:
            return out
        shown = ((f.level, f.title, f.hint) for f in submit.shown())  # what the candidate saw
        for (level, title, hint), n in counted(shown):
            where = say("ev_where", self.lang, n=level) if level != e.level else ""
            out.append(Line(say("ev_failure", self.lang, where=where, title=title, hint=hint,
                                times=times(n)), "red"))
            out += [Line(say("ev_likely", self.lang, mistake=m.mistake[self.lang], name=m.name),
                         "cyan") for m in mistakes.likely(self.found, title)]
        return out

    def _pass(self, e: Event) -> list[Line]:
        times = {level: took for level, _, took in self.session.level_times()}
        out = [Line(say("ev_pass", self.lang, at=self.at(e), n=e.level,
                        took=clock(times.get(e.level, 0.0))), "green")]
        if self.detail and e.level < self.session.levels:
            out.append(Line(say("ev_unlocked", self.lang, n=e.level + 1), "bold"))
        return out

    def _hint(self, e: Event) -> list[Line]:
        return [Line(say("ev_hint", self.lang, at=self.at(e), step=e.data["step"] + 1,
                         category=e.data["category"]))]

    def _ask(self, e: Event) -> list[Line]:
        index = e.data["question"]
        questions = self.kata.spec.questions if self.kata else ()
        ask = questions[index].ask(self.lang) if 0 <= index < len(questions) else "?"
        return [Line(say("ev_ask", self.lang, at=self.at(e), number=index + 1, ask=ask))]

    def _spec(self, e: Event) -> list[Line]:
        return [Line(say("ev_spec", self.lang, at=self.at(e), n=e.level), "yellow")]

    def end(self) -> Line:
        s = self.session
        return Line(say("ev_end", self.lang, at=clock((s.ended or s.started) - s.started),
                        reason=say(REASONS.get(s.reason, "reason_ended"), self.lang),
                        passed=s.levels_passed, total=s.levels), "bold")
