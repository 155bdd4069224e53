"""The script and the report as one self-contained, printable HTML page each: the styles inline,
no script, no font, image or link to fetch, so it opens offline and prints as it shows."""

from __future__ import annotations

import html

from markdown_it import MarkdownIt

from harness import cjk
from harness.interviewer import say
from harness.interviewer.report import Report
from harness.interviewer.script import HintLadder, Mistake, Script
from harness.session import rubric
from harness.session.clock import clock

CSS = """
:root { color-scheme: light; }
body { margin: 0; background: #fff; color: #1b1b1f; font: 16px/1.55 system-ui, -apple-system,
  "Segoe UI", "Noto Sans", "Noto Sans CJK TC", "PingFang TC", "Microsoft JhengHei", sans-serif; }
main { max-width: 50rem; margin: 0 auto; padding: 1.5rem 1.25rem 3rem; }
h1 { font-size: 1.6rem; line-height: 1.3; margin: 0 0 .5rem; }
h2 { font-size: 1.3rem; line-height: 1.3; margin: 2rem 0 .75rem; padding-bottom: .25rem;
  border-bottom: 2px solid #3f51b5; }
h3 { font-size: 1.05rem; margin: 1.25rem 0 .4rem; }
p, li, dd, td, th { overflow-wrap: anywhere; }
code { font: .92em/1.4 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
  background: #f1f2f6; padding: 0 .2em; border-radius: 3px; }
pre { background: #f1f2f6; padding: .75rem; border-radius: 4px; overflow-x: auto; }
pre code { background: none; padding: 0; white-space: pre; }
.time { background: #fff6d5; border-left: 4px solid #e0a800; padding: .5rem .75rem; }
.brief { border-left: 4px solid #3f51b5; padding: .1rem .75rem; background: #f3f4fb; }
.answer { color: #1e6b34; margin-top: .15rem; }
.muted { color: #5c5f66; font-size: .92rem; }
.ok { color: #1e6b34; } .bad { color: #a4262c; } .warn { color: #8a5a00; }
.hint { color: #0b5c73; } .strong { font-weight: 600; }
ol, ul { padding-left: 1.6rem; } li { margin: .25rem 0; }
ul.lines { list-style: none; padding-left: 0; } ul.lines li { margin: .15rem 0; }
ul.checks { list-style: none; padding-left: .25rem; }
ul.checks li::before { content: ""; display: inline-block; width: .8em; height: .8em;
  margin-right: .5em; border: 1.5px solid #1b1b1f; border-radius: 2px; vertical-align: -.05em; }
dl.hints dt { font-weight: 600; color: #0b5c73; margin-top: .5rem; }
dl.hints dd { margin-left: 1.25rem; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; table-layout: fixed; }
th, td { border: 1px solid #c9ccd4; padding: .4rem .5rem; vertical-align: top; text-align: left;
  font-size: .92rem; }
th { background: #f1f2f6; }
td .own { color: #0b5c73; margin: .35rem 0 0; }
@media print {
  body { font-size: 11pt; }
  main { max-width: none; padding: 0; }
  section.level { break-before: page; }
  pre, pre code { white-space: pre-wrap; }
  li, tr, .time { break-inside: avoid; }
}
"""

STYLES = {"green": "ok", "red": "bad", "yellow": "warn", "dim": "muted", "bold": "strong",
          "cyan": "hint"}


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    # A link keeps its text and loses its address: the page fetches and points at nothing.
    for rule in ("link_open", "link_close"):
        md.add_render_rule(rule, lambda *args: "")
    return md


MD = _markdown()


def e(text: str) -> str:
    return html.escape(text, quote=True)


def markdown(text: str, lang: str) -> str:
    return MD.render(cjk.prose(text, lang))


def page(title: str, lang: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="{lang}">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            '<link rel="icon" href="data:,">\n'  # or the browser asks the server for one
            f"<title>{e(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
            f"{body}\n</main>\n</body>\n</html>\n")


def heading(label: str) -> str:
    return e(label.rstrip(":：").strip())


def script_page(script: Script) -> str:
    lang, out = script.lang, []
    title = say("script_title", lang, title=script.title)
    out.append(f"<header><h1>{e(title)}</h1><p>"
               + e(say("script_intro", lang, minutes=f"{script.minutes:g}",
                       levels=len(script.sheets), kata=script.kata)) + "</p></header>")
    for sheet in script.sheets:
        plan = sheet.plan
        out.append(f'<section class="level" id="level-{sheet.level}"><h2>'
                   + e(say("sheet", lang, n=sheet.level, total=len(script.sheets),
                           title=sheet.title)) + "</h2>")
        out.append('<p class="time">' + e(say(
            "time", lang, start=clock(plan.start * 60), end=clock(plan.end * 60),
            pointers=clock(plan.pointers * 60), followups=clock(plan.followups * 60))) + "</p>")
        out.append(f"<h3>{heading(say('read_out', lang))}</h3>")
        out.append(f'<div class="brief">{markdown(sheet.brief, lang)}</div>' if sheet.brief
                   else f'<p class="warn">{e(say("no_brief", lang))}</p>')
        out.append(f"<h3>{heading(say('answer_key', lang))}</h3>")
        out.append(f'<div class="prompt">{markdown(sheet.prompt, lang)}</div>')
        out.append(f"<h3>{heading(say('questions', lang))}</h3>")
        if sheet.questions:
            out.append('<ol class="questions">' + "".join(
                f'<li value="{q.number}"><p>{e(q.ask)} <code>{e(q.id)}</code></p>'
                f'<p class="answer">→ {e(q.answer)}</p></li>' for q in sheet.questions)
                + "</ol>")
        else:
            out.append(f'<p class="muted">{e(say("no_questions", lang))}</p>')
        if sheet.left_open:
            out.append(f"<h3>{heading(say('left_open', lang))}</h3>"
                       f"<p>{e(cjk.flat(sheet.left_open, lang))}</p>")
        if sheet.hints:
            out.append(f"<h3>{heading(say('hints', lang))}</h3>" + ladders(sheet.hints, lang))
        if sheet.mistakes:
            out.append(f"<h3>{heading(say('mistakes', lang))}</h3>"
                       + mistakes(sheet.mistakes, lang))
        out.append("</section>")
    out.append(f"<section><h2>{e(say('followups', lang))}</h2><ol>")
    for n, f in enumerate(script.followups, start=1):
        out.append(f"<li><p>{e(f.question)}</p><ul class=\"checks\">"
                   + "".join(f"<li>{n}.{m} {e(point)}</li>"
                             for m, point in enumerate(f.points, start=1)) + "</ul></li>")
    out.append("</ol></section>")
    out.append(f"<section><h2>{e(say('selfcheck', lang))}</h2><ul class=\"checks\">"
               + "".join(f"<li>{e(item)}</li>" for item in script.selfcheck) + "</ul></section>")
    if script.other_hints:
        out.append(f"<section><h2>{e(say('other_hints', lang))}</h2>"
                   + ladders(script.other_hints, lang) + "</section>")
    if script.other_mistakes:
        out.append(f"<section><h2>{e(say('other_mistakes', lang))}</h2>"
                   + mistakes(script.other_mistakes, lang) + "</section>")
    out.append(f"<section><h2>{e(say('rubric', lang))}</h2>" + rubric_table(script) + "</section>")
    return page(title, lang, "\n".join(out))


def labelled(label: str, text: str, lang: str) -> str:
    return e(say("labelled", lang, label=say(label, lang), text=text))


def ladders(found: list[HintLadder], lang: str) -> str:
    parts = []
    for ladder in found:
        titles = (f'<p class="muted">{labelled("used_by", "; ".join(ladder.titles), lang)}</p>'
                  if ladder.titles else "")
        parts.append(f"<dt>{e(ladder.category)}</dt><dd><ol>"
                     f"<li>{labelled('nudge', ladder.nudge, lang)}</li>"
                     f"<li>{labelled('pointer', ladder.pointer, lang)}</li></ol>{titles}</dd>")
    return '<dl class="hints">' + "".join(parts) + "</dl>"


def mistakes(found: list[Mistake], lang: str) -> str:
    items = []
    for m in found:
        planted = f" ({e(say('planted', lang))})" if m.planted else ""
        items.append(f"<li><p>{e(m.text)}{planted} <code>{e(m.name)}</code></p>"
                     f'<p class="muted">{labelled("caught_by", "; ".join(m.caught_by), lang)}'
                     "</p></li>")
    return "<ul>" + "".join(items) + "</ul>"


def rubric_table(script: Script) -> str:
    lang = script.lang
    head = "".join(f"<th>{level} {e(rubric.level_name(level, lang))}</th>"
                   for level in rubric.LEVELS)
    rows = []
    for d in script.rubric:
        cells = []
        for level, anchor in enumerate(d.anchors, start=1):
            own = (f'<p class="own">{labelled("this_kata", d.own[level - 1], lang)}</p>'
                   if d.own else "")
            cells.append(f"<td>{e(anchor)}{own}</td>")
        rows.append(f"<tr><th>{e(d.name)}</th>{''.join(cells)}</tr>")
    return f"<table><thead><tr><th></th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def report_page(report: Report) -> str:
    out = [f"<header><h1>{e(report.title)}</h1><p class=\"strong\">{e(report.subtitle)}</p>"
           "</header>"]
    for section in report.sections:
        title = f"<h2>{e(section.title)}</h2>" if section.title else ""
        lines = "".join(f'<li class="{STYLES.get(line.style, "")}">{e(line.text)}</li>'
                        for line in section.lines)
        out.append(f'<section>{title}<ul class="lines">{lines}</ul></section>')
    return page(report.title, report.lang, "\n".join(out))
