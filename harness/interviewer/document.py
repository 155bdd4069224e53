"""The script and the report as one document: built once as blocks, printed on a terminal (prose
wraps by cells with its indent kept, code never wraps) and written as one self-contained,
printable HTML page: the styles inline, no script, no font, image or link to fetch. Every text
reaches the page through markdown-it, which escapes it and shows `code` as code."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from string import Template

from rich.console import Console

from harness import cjk, render
from harness.catalog import Kata
from harness.interviewer import say
from harness.interviewer.script import Script
from harness.mutants import Mutant
from harness.screen import Screen
from harness.session import rubric
from harness.session.clock import clock


@dataclass(frozen=True)
class Block:
    kind: str  # title, level (a sheet: a page of its own in print), section, text, markdown,
    #            write (room to write on paper), fold / endfold (what the page folds away)
    text: str
    style: str = ""  # a rich style: green, red, yellow, dim, bold, cyan
    indent: int = 0


@dataclass
class Document:
    lang: str
    title: str
    blocks: list[Block] = field(default_factory=list)

    def add(self, kind: str, text: str, style: str = "", indent: int = 0) -> None:
        self.blocks.append(Block(kind, text, style, indent))

    def say(self, key: str, style: str = "", indent: int = 0, **fields: object) -> None:
        self.add("text", say(key, self.lang, **fields), style, indent)


def script(s: Script) -> Document:
    kata, lang = s.kata, s.lang
    doc = Document(lang, say("script_title", lang, title=kata.title(lang)))
    doc.add("title", doc.title)
    doc.say("script_intro", minutes=f"{kata.spec.minutes:g}", levels=len(s.sheets), kata=kata.name)
    for sheet in s.sheets:
        level = sheet.level
        doc.add("level", say("sheet", lang, n=level.n, total=len(s.sheets),
                             title=level.title(lang)))
        doc.say("time", "bold", **{step: clock(minutes * 60)
                                   for step, minutes in asdict(sheet.plan).items()})
        doc.say("read_out", "bold")
        if level.brief:
            doc.add("markdown", level.brief(lang))
        else:
            doc.say("no_brief", "yellow")
        doc.say("answer_key", "bold")
        doc.add("markdown", level.prompt(lang))
        doc.say("questions", "bold")
        if not sheet.questions:
            doc.say("no_questions", "dim", indent=2)
        for q in sheet.questions:
            doc.add("text", f"{q.number}. {q.ask(lang)}  [{q.id}]", indent=2)
            doc.add("text", f"→ {q.answer(lang)}", "green", indent=5)
        if level.open:
            doc.say("left_open", "bold")
            doc.add("text", cjk.flat(level.open(lang), lang), indent=2)
        if sheet.hints:
            doc.say("hints", "bold")
        for category, titles in sheet.hints.items():
            _ladder(doc, kata, category, titles)
        if sheet.top:
            doc.say("top_mistakes", "bold")
        for mistake, n in sheet.top:
            _mistake(doc, mistake, say("ranked_first", lang, n=n))
        # Folded behind the top ones on the page; with no ranking yet, the list is the sheet's.
        fold = bool(sheet.top and sheet.mistakes)
        if sheet.mistakes:
            doc.add("fold" if fold else "text", say("mistakes", lang), "bold")
        for mistake in sheet.mistakes:
            _mistake(doc, mistake)
        if fold:
            doc.add("endfold", "")
    doc.add("section", say("followups", lang))
    for n, f in enumerate(s.followups, start=1):
        doc.add("text", f"{n}. {f.question(lang)}", "bold")
        for m, point in enumerate(f.points(lang), start=1):
            doc.add("text", f"[ ] {n}.{m} {point}", indent=3)
    doc.add("section", say("selfcheck", lang))
    for item in s.selfcheck:
        doc.add("text", f"[ ] {item}", indent=2)
    if s.other_hints:
        doc.add("section", say("other_hints", lang))
    for category in s.other_hints:
        _ladder(doc, kata, category, [])
    if s.other_mistakes:
        doc.add("section", say("other_mistakes", lang))
    for mistake in s.other_mistakes:
        _mistake(doc, mistake)
    doc.add("section", say("rubric", lang))
    for n, d in enumerate(rubric.dimensions(), start=1):
        doc.add("text", f"{n}. {d.name[lang]}  [{d.id}]", "bold")
        anchors(doc, d, rubric.kata_anchors(kata, d.id, lang))
        doc.add("write", say("write_here", lang))
    doc.add("text", say("overall", lang), "bold")
    anchors(doc, None)
    doc.add("write", say("write_here", lang))
    return doc


def anchors(doc: Document, d: rubric.Dimension | None, own: list[str] | None = None) -> None:
    """A dimension's anchors, the kata's `own` under each; with None, the overall's."""
    lang = doc.lang
    texts = d.anchors[lang] if d else rubric.overall_anchors(lang)
    for level, anchor in enumerate(texts, start=1):
        label = rubric.level_name(level, lang) if d else rubric.overall_name(level, lang)
        doc.say("anchor", level=level, label=label, text=anchor, indent=3)
        if own:
            doc.say("anchor_own", "cyan", text=own[level - 1], indent=5)


def _ladder(doc: Document, kata: Kata, category: str, titles: list[str]) -> None:
    doc.add("text", category, "cyan bold", indent=2)
    # no-break spaces: a Chinese line has no other place to wrap, so "2." stays with its text
    ladder = zip(("nudge", "pointer"), kata.spec.hints[category](doc.lang), strict=True)
    for n, (kind, text) in enumerate(ladder, start=1):
        doc.say("labelled", label=f"{n}.\u00a0{say(kind, doc.lang)}", text=text, indent=4)
    if titles:
        doc.say("labelled", "dim", label=say("used_by", doc.lang), text="; ".join(titles),
                indent=4)


def _mistake(doc: Document, mistake: Mutant, count: str = "") -> None:
    planted = f" ({say('planted', doc.lang)})" if mistake.planted else ""
    doc.add("text", f"· {mistake.mistake[doc.lang]}{planted}{count}  [{mistake.name}]", indent=2)
    doc.say("labelled", "dim", label=say("caught_by", doc.lang), text="; ".join(mistake.caught_by),
            indent=4)


def show(console: Console, doc: Document) -> None:
    screen = Screen(console, doc.lang, "interviewer", wrap=True)
    for b in doc.blocks:
        if b.kind in ("title", "level", "section"):
            screen.rule(b.text)
        elif b.kind == "markdown":
            screen.markdown(b.text)
        elif b.kind == "write":
            screen.text(f"{b.text} {'_' * 40}", "dim", 3)
        elif b.kind != "endfold":  # a fold's title is text on the terminal: nothing folds
            screen.text(b.text, b.style, b.indent)


# The page's frame and styles; its icon is empty, or the browser asks the server for one.
PAGE = Template(Path(__file__).with_name("page.html").read_text(encoding="utf-8"))
TAGS = {"title": "h1", "level": "h2", "section": "h2"}


def page(doc: Document) -> str:
    """The document as one HTML page; markdown-it escapes every text."""
    body, open_section = [], False
    for b in doc.blocks:
        text = render.MD.renderInline(b.text)
        if b.kind in ("level", "section"):
            body += ["</section>" if open_section else "", f'<section class="{b.kind}">']
            open_section = True
        if b.kind in TAGS:
            body.append(f"<{TAGS[b.kind]}>{text}</{TAGS[b.kind]}>")
        elif b.kind == "markdown":
            body.append(f'<div class="markdown">{render.html(b.text, doc.lang)}</div>')
        elif b.kind == "write":
            body.append(f'<div class="write">{text}</div>')
        elif b.kind == "fold":
            body.append(f'<details><summary class="{b.style}">{text}</summary>')
        elif b.kind == "endfold":
            body.append("</details>")
        else:
            style = f' style="margin-left: {b.indent / 2:g}em"' if b.indent else ""
            body.append(f'<p class="{b.style}"{style}>{text}</p>')
    body.append("</section>" if open_section else "")
    return PAGE.substitute(lang=doc.lang, title=render.MD.renderInline(doc.title),
                           body="\n".join(filter(None, body)))
