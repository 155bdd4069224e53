"""What the candidate sees at each step, in the session's language."""

from __future__ import annotations

import time

from rich.console import Console

from harness import catalog, cjk
from harness.results import counted, times
from harness.screen import Screen as Base
from harness.session import interview
from harness.session.clock import clock
from harness.session.log import Failure, Mode, Reason, Session


class Screen(Base):
    def __init__(self, console: Console, lang: str) -> None:
        super().__init__(console, lang, "mock")

    def level(self, kata: catalog.Kata, n: int, brief: bool = False) -> None:
        """Level n's heading and its prompt, or its brief (when the kata has one)."""
        spec = kata.spec.levels[n - 1]
        self.rule(self.words("level", n=n, total=kata.num_levels, title=spec.title(self.lang)))
        text = spec.brief(self.lang) if brief and spec.brief else None
        if brief and not text:
            self.say("no_brief", "yellow", n=n)
        self.markdown(text or spec.prompt(self.lang))

    def spec(self, session: Session, kata: catalog.Kata) -> None:
        """The full prompt of every level open so far."""
        self.say("spec", "bold")
        for n in range(1, interview.shown(session) + 1):
            self.level(kata, n)
        if session.briefed:
            self.say("spec_noted", "dim")

    def clock(self, session: Session) -> None:
        self.say("clock", "bold", left=clock(session.left(interview.now())))

    def session(self, session: Session, kata: catalog.Kata, resumed: bool = False) -> None:
        if resumed:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(session.started))
            self.say("resumed", kata=kata.name, when=when)
        banner = "banner_pair" if session.mode == Mode.PAIR else "banner"
        self.say(banner, "bold", title=kata.title(self.lang), minutes=f"{session.minutes:g}",
                 file=session.file)
        self.level(kata, session.level, session.briefed)
        self.clock(session)
        self.say({Mode.SOLO: "how_to", Mode.BRIEF: "how_to_brief",
                  Mode.PAIR: "how_to_pair"}[session.mode])

    def numbered(self, indices: list[int], kata: catalog.Kata, answers: set[int] = frozenset()
                 ) -> None:
        """The questions at `indices`, numbered as in kata.toml, with the answers in `answers`."""
        for i in indices:
            q = kata.spec.questions[i]
            self.text(f"  {q.number}. {q.ask(self.lang)}")
            if i in answers:
                self.text(f"     → {q.answer(self.lang)}", "green")

    def questions(self, session: Session, kata: catalog.Kata) -> None:
        """The questions of the levels open so far, numbered as in kata.toml (and the script)."""
        shown = interview.open_questions(session, kata)
        asked = [i for i in session.asked if i in shown]
        self.say("questions", "bold", asked=len(asked), total=len(shown))
        self.numbered(shown, kata, set(session.asked))
        self.say("ask_how")

    def answer(self, session: Session, kata: catalog.Kata, index: int, before: bool) -> None:
        if index < 0:
            self.say("no_match", "yellow")
            levels = kata.spec.levels[:interview.shown(session)]
            left_open = [(lv.n, lv.open(self.lang)) for lv in levels
                         if lv.open and lv.open(self.lang)]
            if left_open:
                self.say("open_points")
                for n, text in left_open:
                    self.say("open_point", n=n, text=cjk.flat(text, self.lang))
            self.say("can_answer")
            self.numbered(interview.open_questions(session, kata), kata)
            return
        q = kata.spec.questions[index]
        self.say("heard", ask=q.ask(self.lang))
        self.say("answer", "green bold", answer=q.answer(self.lang))
        if before:
            self.say("asked_before")

    def verdict(self, session: Session, kata: catalog.Kata, v: interview.Verdict) -> None:
        self.judged(session, kata, v)
        if v.recorded:
            self.say("recorded" if v.stored else "not_recorded", "dim", why=v.recorded)

    def judged(self, session: Session, kata: catalog.Kata, v: interview.Verdict) -> None:
        if v.import_error:
            self.say("import_error", "red", error=v.import_error)
            self.clock(session)
            return
        if v.passed:
            _, at, took = session.level_times()[v.level - 1]
            self.say("level_passed", "green bold", n=v.level, at=clock(at), took=clock(took))
            if not session.done:
                self.say("unlocked", "bold", n=session.level)
                self.level(kata, session.level, session.briefed)
                self.clock(session)
            return
        self.say("level_counts", "red", n=v.level, passed=v.counts[0], total=v.counts[1])
        if v.counts[0] == v.counts[1]:
            self.say("lower_failing", "red", n=v.level)
        self.say("failing")
        self.failures(v.failures, v.level)
        self.say("hint_how_pair" if session.mode == Mode.PAIR else "hint_how")
        self.clock(session)

    def failures(self, failures: list[Failure], current: int | None = None) -> None:
        for (level, title, verdict), n in counted((f.level, f.title, f.verdict) for f in failures):
            where = self.words("where", n=level) if level != current else ""
            self.say("failure", "red", where=where, title=title, verdict=verdict, times=times(n))

    def hints(self, session: Session, kata: catalog.Kata,
              hints: list[interview.Hint] | None) -> None:
        if hints is None:
            self.say("hint_submit_first", "yellow", n=session.level)
            return
        if not hints:
            self.say("hint_none", "yellow", n=session.level)
            return
        if not hints[0].counted:
            self.say("hints_spent", "yellow")
        for h in hints:
            text = kata.spec.hints[h.category](self.lang)[h.step]
            self.say("hint", "cyan", step=h.step + 1, title=h.title, category=h.category,
                     text=text)
        self.say("hints_used", n=len(session.hints))

    def end(self, session: Session, kata: catalog.Kata | None) -> None:
        """The reason, the scorecard, then the follow-up discussion and the self-check list."""
        key = {Reason.PASSED: "end_passed", Reason.TIME: "end_time"}.get(session.reason,
                                                                           "end_ended")
        self.say(key, "bold")
        title = kata.title(self.lang) if kata else session.kata
        self.rule(self.words("scorecard", title=title))
        self.say("levels_passed", "bold", n=session.levels_passed, total=session.levels)
        times = {level: (at, took) for level, at, took in session.level_times()}
        for level in range(1, session.levels + 1):
            if level in times:
                at, took = times[level]
                self.say("level_time", "green", n=level, at=clock(at), took=clock(took))
            else:
                reached = level == session.level
                self.say("level_not_passed" if reached else "level_not_reached", "red", n=level)
        failures, last = interview.failures(session), session.last_submit
        if last is not None and last.time_up:
            self.say("time_up_graded")
            if last.import_error:
                self.say("import_error", "red", error=last.import_error)
        if last is None:
            self.say("no_submit", "red")
        elif failures:
            self.say("final_failures", "red")
            self.failures(failures)
        else:
            self.say("no_failures", "green")
        self.say("hints_total", n=len(session.hints))
        steps: dict[str, int] = {}
        for category, _ in session.hints:
            steps[category] = steps.get(category, 0) + 1
        for category, n in steps.items():
            self.say("hint_item", category=category, steps=f"{n}/2")
        if session.briefed:
            opened = session.spec_opened()
            if not opened:
                self.say("spec_never")
            for level, at in sorted(opened.items()):
                self.say("spec_opened", n=level, at=clock(at))
        if kata is None:
            self.say("no_meta", "yellow")
            return
        questions = kata.spec.questions
        self.say("questions_total", n=len(session.asked), total=len(questions))
        first = session.first_asked()
        for i, q in enumerate(questions):
            if i in first:
                at, level = first[i]
                self.say("question_asked", "green", ask=q.ask(self.lang), at=clock(at), n=level)
            else:
                self.say("question_missed", ask=q.ask(self.lang))
        if session.mode == Mode.PAIR:  # the follow-ups and their points are the interviewer's
            self.say("end_pair", "bold")
        else:
            self.followups(kata)
        self.say("untouched")

    def followups(self, kata: catalog.Kata) -> None:
        self.rule(self.words("followups"))
        for i, f in enumerate(kata.spec.followups, start=1):
            self.text(f"{i}. {f.question(self.lang)}", "bold")
            self.say("points")
            for point in f.points(self.lang):
                self.text(f"   - {point}")
        self.rule(self.words("selfcheck"))
        for item in kata.spec.selfcheck(self.lang):
            self.text(f"  [ ] {item}")
