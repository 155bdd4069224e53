"""What the candidate sees at each step, in the session's language."""

from __future__ import annotations

from collections import Counter

from rich.console import Console

from harness import catalog, cjk
from harness.results import counted, times
from harness.screen import Screen as Base
from harness.session import interview
from harness.session.clock import clock, when
from harness.session.log import Asked, Failure, Mode, Session
from harness.session.matcher import Outcome


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
            self.say("resumed", kata=kata.name, when=when(session.started))
        banner = "banner_pair" if session.mode == Mode.PAIR else "banner"
        self.say(banner, "bold", title=kata.title(self.lang), minutes=f"{session.minutes:g}",
                 file=session.file)
        self.level(kata, session.level, session.briefed)
        self.clock(session)
        self.say(f"how_to_{session.mode}")

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
        shown = [q.number - 1 for q in kata.spec.questions if q.level <= interview.shown(session)]
        asked = [i for i in session.asked if i in shown]
        self.say("questions", "bold", asked=len(asked), total=len(shown))
        self.numbered(shown, kata, set(session.asked))
        self.say("ask_how")

    def answer(self, kata: catalog.Kata, answer: interview.Answer) -> None:
        """The interviewer's reply, in the language the question was asked in (a number: the
        screen's): an answer with what was heard, an ask-back, a later level, an open point, or
        no answer. Never the whole list of questions: asking is the candidate's part."""
        heard = answer.heard
        worded = any(c.isalpha() for c in answer.asked)  # not "3" or "#3"
        out = Screen(self.console, heard.lang) if worded else self
        if answer.index >= 0:
            q = kata.spec.questions[answer.index]
            out.say("heard", ask=q.ask(out.lang))
            out.say("answer", "green bold", answer=q.answer(out.lang))
            if answer.before:
                out.say("asked_before")
        elif heard.outcome == Outcome.ASK_BACK:
            numbers = [next(q.number for q in kata.spec.questions if q.id == qid)
                       for qid in heard.ids]
            out.say("did_you_mean", "yellow", numbers=out.either(numbers))
            out.numbered([n - 1 for n in numbers], kata)
            out.say("pick_how", n=numbers[0])
        elif heard.outcome == Outcome.LATER and heard.level:
            out.say("later", "yellow", n=heard.level)
        elif heard.outcome == Outcome.LATER:
            out.say("later_unsaid", "yellow")
        elif heard.outcome == Outcome.OPEN:
            out.say("open_choice", "green bold", point=cjk.flat(answer.point, out.lang))
        else:
            out.say("no_match", "yellow")
            out.say("no_match_how")

    def either(self, numbers: list[int]) -> str:
        """"6 or 9", "6, 9 or 11": the questions an ask-back offers."""
        named = [self.words("number", n=n) for n in numbers]
        if len(named) == 1:
            return named[0]
        return self.words("comma").join(named[:-1]) + self.words("or") + named[-1]

    def verdict(self, session: Session, kata: catalog.Kata, v: interview.Verdict,
                hinting: bool = False) -> None:
        """`hinting`: a hint follows (`submit --hint`), so no line says how to ask for one."""
        if v.import_error:
            self.say("import_error", "red", error=v.import_error)
        elif v.passed:
            _, at, took = session.level_times()[v.level - 1]
            self.say("level_passed", "green bold", n=v.level, at=clock(at), took=clock(took))
            if not session.done:
                self.say("unlocked", "bold", n=session.level)
                self.level(kata, session.level, session.briefed)
        else:
            self.say("level_counts", "red", n=v.level, passed=v.counts[0], total=v.counts[1])
            if v.counts[0] == v.counts[1]:
                self.say("lower_failing", "red", n=v.level)
            self.say("failing")
            self.failures(v.failures, v.level)
            if not hinting:
                self.say("hint_how_pair" if session.mode == Mode.PAIR else "hint_how")
        if not session.done:  # the last level passed: the scorecard follows
            self.clock(session)
        if v.recorded:
            self.say("recorded" if v.stored else "not_recorded", "dim", why=v.recorded)

    def failures(self, failures: list[Failure], current: int | None = None) -> None:
        for (level, title, verdict), n in counted((f.level, f.title, f.said(self.lang))
                                                  for f in failures):
            where = self.words("where", n=level) if level != current else ""
            self.say("failure", "red", where=where, title=title, verdict=verdict, times=times(n))

    def hints(self, session: Session, kata: catalog.Kata,
              hints: list[interview.Hint] | None) -> None:
        if not hints:  # None: no submit yet
            self.say("hint_none" if hints == [] else "hint_submit_first", "yellow", n=session.level)
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
        self.say(f"end_{session.reason}", "bold")
        title = kata.title(self.lang) if kata else session.kata
        self.rule(self.words("scorecard", title=title))
        self.say("levels_passed", "bold", n=session.levels_passed, total=session.levels)
        for level, at, took in session.level_times():
            self.say("level_time", "green", n=level, at=clock(at), took=clock(took))
        for level in range(session.levels_passed + 1, session.levels + 1):
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
        for category, n in Counter(category for category, _ in session.hints).items():
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
        # Only the levels reached: a question of a level never opened could not be asked.
        reached = [q for q in kata.spec.questions if q.level <= interview.shown(session)]
        own, picked = session.first_asked(Asked.OWN), session.first_asked(Asked.PICKED)
        self.say("questions_counts", own=sum(q.number - 1 in own for q in reached),
                 picked=sum(q.number - 1 in picked and q.number - 1 not in own for q in reached),
                 total=len(reached))
        for q in reached:
            i = q.number - 1
            if i in own:  # ticked only by a question in the candidate's words that matched it
                at, level = own[i]
                self.say("question_asked", "green", ask=q.ask(self.lang), at=clock(at), n=level)
            elif i in picked:
                at, level = picked[i]
                self.say("question_picked", ask=q.ask(self.lang), at=clock(at), n=level)
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
