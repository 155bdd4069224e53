"""The script and the report on a terminal: prose wraps to the width with its indent kept, code
never wraps, nothing is cropped. Plain text when not a terminal."""

from __future__ import annotations

from rich.console import Console

from harness import cjk
from harness.interviewer import say
from harness.interviewer.report import Report
from harness.interviewer.script import HintLadder, Mistake, Script
from harness.interviewer.timeline import Line
from harness.screen import Screen
from harness.session import rubric
from harness.session.clock import clock


class Printer(Screen):
    """The interviewer's sheets: long lines wrap, their indent kept."""

    def __init__(self, console: Console, lang: str) -> None:
        super().__init__(console, lang, "interviewer", wrap=True)

    def line(self, line: Line) -> None:
        self.text(line.text, line.style)


def print_script(console: Console, script: Script) -> None:
    p, lang = Printer(console, script.lang), script.lang
    p.rule(say("script_title", lang, title=script.title))
    p.say("script_intro", minutes=f"{script.minutes:g}", levels=len(script.sheets),
          kata=script.kata)
    for sheet in script.sheets:
        p.rule(say("sheet", lang, n=sheet.level, total=len(script.sheets), title=sheet.title))
        plan = sheet.plan
        p.say("time", "bold", start=clock(plan.start * 60), end=clock(plan.end * 60),
              pointers=clock(plan.pointers * 60), followups=clock(plan.followups * 60))
        p.say("read_out", "bold")
        if sheet.brief:
            p.markdown(sheet.brief)
        else:
            p.say("no_brief", "yellow")
        p.say("answer_key", "bold")
        p.markdown(sheet.prompt)
        p.say("questions", "bold")
        if not sheet.questions:
            p.say("no_questions", "dim", indent=2)
        for q in sheet.questions:
            p.text(f"{q.number}. {q.ask}  [{q.id}]", indent=2)
            p.text(f"→ {q.answer}", "green", indent=5)
        if sheet.left_open:
            p.say("left_open", "bold")
            p.text(cjk.flat(sheet.left_open, lang), indent=2)
        if sheet.hints:
            p.say("hints", "bold")
        for ladder in sheet.hints:
            print_ladder(p, ladder)
        if sheet.mistakes:
            p.say("mistakes", "bold")
        for mistake in sheet.mistakes:
            print_mistake(p, mistake)
    p.rule(say("followups", lang))
    for n, f in enumerate(script.followups, start=1):
        p.text(f"{n}. {f.question}", "bold")
        for m, point in enumerate(f.points, start=1):
            p.text(f"[ ] {n}.{m} {point}", indent=3)
    p.rule(say("selfcheck", lang))
    for item in script.selfcheck:
        p.text(f"[ ] {item}", indent=2)
    if script.other_hints:
        p.rule(say("other_hints", lang))
        for ladder in script.other_hints:
            print_ladder(p, ladder)
    if script.other_mistakes:
        p.rule(say("other_mistakes", lang))
        for mistake in script.other_mistakes:
            print_mistake(p, mistake)
    p.rule(say("rubric", lang))
    for n, d in enumerate(script.rubric, start=1):
        p.text(f"{n}. {d.name}  [{d.id}]", "bold")
        for level, anchor in enumerate(d.anchors, start=1):
            p.say("anchor", level=level, label=rubric.level_name(level, lang), text=anchor,
                  indent=3)
            if d.own:
                p.say("anchor_own", "cyan", text=d.own[level - 1], indent=5)


def print_ladder(p: Printer, ladder: HintLadder) -> None:
    p.text(ladder.category, "cyan bold", indent=2)
    # no-break spaces: a Chinese line has no other place to wrap, so "2." stays with its text
    p.say("labelled", label=f"1.\u00a0{say('nudge', p.lang)}", text=ladder.nudge, indent=4)
    p.say("labelled", label=f"2.\u00a0{say('pointer', p.lang)}", text=ladder.pointer, indent=4)
    if ladder.titles:
        p.say("labelled", "dim", label=say("used_by", p.lang), text="; ".join(ladder.titles),
              indent=4)


def print_mistake(p: Printer, mistake: Mistake) -> None:
    planted = f" ({say('planted', p.lang)})" if mistake.planted else ""
    p.text(f"· {mistake.text}{planted}  [{mistake.name}]", indent=2)
    p.say("labelled", "dim", label=say("caught_by", p.lang), text="; ".join(mistake.caught_by),
          indent=4)


def print_report(console: Console, report: Report) -> None:
    p = Printer(console, report.lang)
    p.rule(report.title)
    p.text(report.subtitle, "bold")
    for section in report.sections:
        if section.title:
            p.rule(section.title)
        for line in section.lines:
            p.line(line)
