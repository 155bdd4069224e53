"""What the learner sees at each step, in the session's language. Plain text when not a terminal."""

from __future__ import annotations

import time

from rich.console import Console

from harness import catalog, cjk, render
from harness.mock import interview
from harness.mock.session import Mode, Reason, Session
from harness.mock.text import clock, say


class Screen:
    def __init__(self, console: Console, lang: str) -> None:
        self.console, self.lang = console, lang

    def say(self, key: str, style: str | None = None, **fields: object) -> None:
        # markup off: titles and hints may hold brackets that are not rich markup
        self.console.print(say(key, self.lang, **fields), style=style, markup=False,
                           highlight=False, soft_wrap=True)

    def rule(self, text: str) -> None:
        self.console.rule(text.replace("[", r"\["))

    def level(self, kata: catalog.Kata, n: int, brief: bool = False) -> None:
        """Level n's heading and its prompt, or its brief (when the kata has one)."""
        spec = kata.meta["levels"][n - 1]
        self.rule(say("level", self.lang, n=n, total=kata.num_levels,
                      title=spec["title"][self.lang]))
        text = spec.get("brief", {}).get(self.lang) if brief else None
        if brief and not text:
            self.say("no_brief", "yellow", n=n)
        render.print_markdown(self.console, text or spec["prompt"][self.lang], self.lang)

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

    def questions(self, session: Session, kata: catalog.Kata) -> None:
        """The questions of the levels open so far, numbered as in kata.toml (and the script)."""
        questions, shown = kata.meta["questions"], interview.open_questions(session, kata)
        asked = [i for i in session.asked if i in shown]
        self.say("questions", "bold", asked=len(asked), total=len(shown))
        for i in shown:
            self.console.print(f"  {i + 1}. {questions[i]['ask'][self.lang]}", markup=False,
                               soft_wrap=True)
            if i in session.asked:
                self.console.print(f"     → {questions[i]['answer'][self.lang]}", markup=False,
                                   soft_wrap=True, style="green")
        self.say("ask_how")

    def answer(self, session: Session, kata: catalog.Kata, index: int, before: bool) -> None:
        questions = kata.meta["questions"]
        if index < 0:
            self.say("no_match", "yellow")
            levels = kata.meta["levels"][:interview.shown(session)]
            left_open = [(n, level["open"][self.lang]) for n, level in enumerate(levels, start=1)
                         if level.get("open", {}).get(self.lang)]
            if left_open:
                self.say("open_points")
                for n, text in left_open:
                    self.say("open_point", n=n, text=flat(text, self.lang))
            self.say("can_answer")
            for i in interview.open_questions(session, kata):
                self.console.print(f"  {i + 1}. {questions[i]['ask'][self.lang]}", markup=False,
                                   soft_wrap=True)
            return
        self.say("heard", ask=questions[index]["ask"][self.lang])
        self.say("answer", "green bold", answer=questions[index]["answer"][self.lang])
        if before:
            self.say("asked_before")

    def verdict(self, session: Session, kata: catalog.Kata, v: interview.Verdict) -> None:
        self.judged(session, kata, v)
        if v.recorded:
            recorded = v.recorded.startswith("recorded in ")
            self.say("recorded" if recorded else "not_recorded", "dim", why=v.recorded)

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
        self.failures([(r.level, r.title, r.verdict) for r in v.failures], v.level)
        self.say("hint_how_pair" if session.mode == Mode.PAIR else "hint_how")
        self.clock(session)

    def failures(self, failures: list[tuple[int, str, str]], current: int | None = None) -> None:
        """One line per failing title, counted: parametrized cases share their title."""
        counts: dict[tuple[int, str, str], int] = {}
        for failure in failures:
            counts[failure] = counts.get(failure, 0) + 1
        for (level, title, verdict), n in counts.items():
            where = say("where", self.lang, n=level) if level != current else ""
            self.say("failure", "red", where=where, title=title, verdict=verdict,
                     times=f" (×{n})" if n > 1 else "")

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
            text = kata.meta["hints"][h.category][self.lang][h.step]
            self.say("hint", "cyan", step=h.step + 1, title=h.title, category=h.category,
                     text=text)
        self.say("hints_used", n=len(session.hints))

    def end(self, session: Session, kata: catalog.Kata | None) -> None:
        """The reason, the scorecard, then the follow-up discussion and the self-check list."""
        key = {Reason.PASSED: "end_passed", Reason.TIME: "end_time"}.get(session.reason,
                                                                           "end_ended")
        self.say(key, "bold")
        title = kata.title(self.lang) if kata else session.kata
        self.rule(say("scorecard", self.lang, title=title))
        self.say("levels_passed", "bold", n=session.levels_passed, total=session.levels)
        times = {level: (at, took) for level, at, took in session.level_times()}
        for level in range(1, session.levels + 1):
            if level in times:
                at, took = times[level]
                self.say("level_time", "green", n=level, at=clock(at), took=clock(took))
            else:
                reached = level == session.level
                self.say("level_not_passed" if reached else "level_not_reached", "red", n=level)
        failures = interview.failures(session)
        if session.last_submit is not None and session.last_submit.data.get("time_up"):
            self.say("time_up_graded")
            if session.last_submit.data["import_error"]:
                self.say("import_error", "red", error=session.last_submit.data["import_error"])
        if session.last_submit is None:
            self.say("no_submit", "red")
        elif failures:
            self.say("final_failures", "red")
            self.failures([(level, title, verdict) for level, title, _, verdict in failures])
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
        questions = kata.meta["questions"]
        self.say("questions_total", n=len(session.asked), total=len(questions))
        first = session.first_asked()
        for i, q in enumerate(questions):
            if i in first:
                at, level = first[i]
                self.say("question_asked", "green", ask=q["ask"][self.lang], at=clock(at),
                         n=level)
            else:
                self.say("question_missed", ask=q["ask"][self.lang])
        if session.mode == Mode.PAIR:  # the follow-ups and their points are the interviewer's
            self.say("end_pair", "bold")
        else:
            self.followups(kata)
        self.say("untouched")

    def followups(self, kata: catalog.Kata) -> None:
        self.rule(say("followups", self.lang))
        for i, f in enumerate(kata.meta["followups"], start=1):
            self.console.print(f"{i}. {f['question'][self.lang]}", style="bold", markup=False,
                               soft_wrap=True)
            self.say("points")
            for point in f["points"][self.lang]:
                self.console.print(f"   - {point}", markup=False, soft_wrap=True)
        self.rule(say("selfcheck", self.lang))
        for item in kata.meta["selfcheck"][self.lang]:
            self.console.print(f"  [ ] {item}", markup=False, soft_wrap=True)


def flat(text: str, lang: str) -> str:
    """A wrapped paragraph on one line: Chinese lines join without a space."""
    return " ".join(cjk.prose(text, lang).split())
