"""A session's log as the interviewer reads it: one line per event, in the session's clock. The
live view (`detail`) shows each submit with the verdicts the candidate saw, at most two likely
mistakes and the diff since the previous submit; the report, the verdict and the diff's size."""

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


def likely(kata: catalog.Kata, submit: Submit) -> list[diagnosis.Likely]:
    """At most two likely mistakes of one submit; none without fresh signatures."""
    failing = {f.title for f in submit.failures if f.level > 0}
    if not failing or submit.import_error:
        return []
    try:
        return diagnosis.likely(kata, failing, range(1, submit.level + 1))
    except diagnosis.NoSignatures:
        return []


class Timeline:
    """Turns events into lines, each event once (a step logged twice counts once, as in the
    session's own state)."""

    def __init__(self, session: Session, kata: catalog.Kata, lang: str,
                 detail: bool, private: bool = True) -> None:
        self.session, self.kata, self.lang, self.detail, self.private = \
            session, kata, lang, detail, private
        self.seen: set[tuple] = set()
        self.code: str | None = None  # the file at the previous submit

    def line(self, key: str, style: str = "", event: Event | None = None, **fields) -> Line:
        """The catalogue's text of `key`; with an event, at the event's time in the session."""
        if event is not None:
            fields["at"] = clock(event.at - self.session.started)
        return Line(say(key, self.lang, **fields), style)

    def lines(self, e: Event) -> list[Line]:
        key = {Kind.PASS: (Kind.PASS, e.level),
               Kind.HINT: (Kind.HINT, e.data.get("category"), e.data.get("step")),
               Kind.ASK: (Kind.ASK, e.data.get("question"))}.get(e.kind)
        if key in self.seen:
            return []
        if key is not None:
            self.seen.add(key)
        match e.kind:
            case Kind.SUBMIT:
                return self._submit(e)
            case Kind.PASS:
                took = {level: t for level, _, t in self.session.level_times()}
                out = [self.line("ev_pass", "green", e, n=e.level,
                                 took=clock(took.get(e.level, 0.0)))]
                if self.detail and e.level < self.session.levels:
                    out.append(self.line("ev_unlocked", "bold", n=e.level + 1))
                return out
            case Kind.HINT:
                return [self.line("ev_hint", "", e, step=e.data["step"] + 1,
                                  category=e.data["category"])]
            case Kind.ASK:
                index, questions = e.data["question"], self.kata.spec.questions
                ask = questions[index].ask(self.lang) if 0 <= index < len(questions) else "?"
                return [self.line("ev_ask", "", e, number=index + 1, ask=ask)]
            case Kind.SPEC:
                return [self.line("ev_spec", "yellow", e, n=e.level)]
            case Kind.NOTE if self.private or e.data.get("share"):
                tag = f" `{e.data['dimension']}`" if e.data.get("dimension") else ""  # a rubric id
                return [self.line("ev_note", "cyan", e, tag=tag, text=e.data["text"])]
            case Kind.LOOK:
                command = f"{e.data['what']} {e.data.get('detail', '')}".strip()
                return [self.line("ev_look", "yellow", e, command=command)]
            case Kind.LABEL if self.detail:
                return [self.line("ev_label", "dim", name=e.data["candidate"])]
            case Kind.UNDO:
                taken = next((x for x in self.session.events if x.id == e.data["event"]), None)
                return [self.line("ev_undo", "yellow", e, what=self.what(taken) if taken else "?")]
        return []  # a note kept private, or a label outside the live view

    def _submit(self, e: Event) -> list[Line]:
        submit = Submit.of(e)
        out = [self.line("ev_time_up", "yellow", e)] if submit.time_up else []
        changes = []
        if submit.code is not None:  # the changed lines with one line of context, no headers
            changes = [line for line in difflib.unified_diff(
                (self.code or "").splitlines(), submit.code.splitlines(), lineterm="", n=1)
                if not line.startswith(("---", "+++"))]
            self.code = submit.code
        if submit.import_error:
            out.append(self.line("ev_import", "red", e, error=submit.import_error))
        else:
            passed, total = submit.counts.get(e.level, (0, 0))
            out.append(self.line("ev_submit", "green" if passed == total else "red", e, n=e.level,
                                 passed=passed, total=total))
        if not self.detail:
            if changes:
                out.append(self.line("ev_changed", "dim",
                                     added=sum(line.startswith("+") for line in changes),
                                     removed=sum(line.startswith("-") for line in changes)))
            return out
        # what the candidate saw: each failing title once, with the verdict it printed
        for (level, title, hint, verdict), n in counted(
                (f.level, f.title, f.hint, f.said(self.lang)) for f in submit.shown()):
            where = say("ev_where", self.lang, n=level) if level != e.level else ""
            out.append(self.line("ev_failure", "red", where=where, title=title, hint=hint,
                                 verdict=verdict, times=times(n)))
        for found in likely(self.kata, submit):
            try:
                mistake = mutants.get(self.kata, found.mutant).mistake[self.lang]
            except (KeyError, mutants.MutantError):
                mistake = found.mutant
            out.append(self.line("ev_likely", "cyan", mistake=mistake, name=found.mutant,
                                 score=f"{found.score:.2f}"))
        if changes:
            out.append(self.line("ev_diff", "bold"))
            out += [Line(line, "green" if line.startswith("+") else
                         "red" if line.startswith("-") else "dim") for line in changes]
        return out

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
        return self.line("ev_end", "bold", at=clock((s.ended or s.started) - s.started),
                         reason=say(f"reason_{s.reason or Reason.ENDED}", self.lang),
                         passed=s.levels_passed, total=s.levels)
