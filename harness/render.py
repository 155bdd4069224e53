"""Markdown (prompts, hints, the interviewer's script and report) on a terminal, and as HTML.

On a terminal prose wraps by cells: between two Chinese characters or at a space, never inside a
word, an identifier or inline code, and never with a closing mark at a line's start (rich's own
Markdown folds a Chinese sentence anywhere, splitting `Batch` into `Ba` and `tch`). Code never
wraps and is never cropped: a wrapped signature reads as two lines of code, so a fenced block
goes out whole, running past the edge of a narrow terminal as `cat` shows it, and piped it is
written byte for byte. The HTML is markdown-it's, which escapes every text itself.
"""

from __future__ import annotations

import textwrap

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich import box
from rich.console import Console
from rich.syntax import Syntax
from rich.table import Column, Table
from rich.text import Text

from harness import cjk

MD = MarkdownIt("commonmark", {"html": False}).enable("table")
# A link keeps its text and loses its address: a page fetches and points at nothing.
for _rule in ("link_open", "link_close"):
    MD.add_render_rule(_rule, lambda *args: "")
STYLES = {"strong": "bold", "em": "italic"}
CODE = "bold cyan"
Span = tuple[str, str, bool]  # text, style, whole (inline code: never broken)


def print_code(console: Console, code: str, lexer: str) -> None:
    """Code whole: never wrapped or cropped, highlighted on a terminal, byte for byte when piped."""
    if not console.is_terminal:
        console.file.write(code)
        return
    # Highlighted text, not a Syntax panel: a panel pads every line to one width, and soft_wrap
    # neither wraps nor crops, so lines wider than the terminal run on, as `cat` shows them.
    text = Syntax(code, lexer, background_color="default").highlight(code)
    text.rstrip()
    console.print(text, soft_wrap=True)


def fits(console: Console, table: Table, width: int) -> bool:
    """Whether the table's natural width fits: rich would otherwise cut its cells to "…"."""
    return console.measure(table, options=console.options.update_width(10_000)).maximum <= width


def spans(inline: Token) -> list[Span]:
    """An inline token's text, each run with its style."""
    out: list[Span] = []
    styles: list[str] = []
    for t in inline.children or []:
        kind = t.type.rsplit("_", 1)[0]
        if t.type.endswith("_open") and kind in STYLES:
            styles.append(STYLES[kind])
        elif t.type.endswith("_close") and kind in STYLES:
            styles.pop()
        elif t.type == "code_inline":
            out.append((t.content, " ".join([*styles, CODE]), True))
        elif t.type in ("softbreak", "hardbreak"):
            out.append((" ", "", False))
        elif t.type in ("text", "html_inline"):
            out.append((t.content, " ".join(styles), False))
    return out


def wrap(runs: list[Span], width: int) -> list[Text]:
    """Styled runs as lines of at most `width` cells (a piece wider than that stands whole)."""
    pieces: list[tuple[str, str]] = []
    for text, style, whole in runs:
        pieces += [(text, style)] if whole else [(p, style) for p in cjk.tokens(text)]
    out = []
    for line in cjk.lines([p for p, _ in pieces], max(width, 1)):
        text = Text()
        for i in line:
            text.append(pieces[i][0], pieces[i][1] or None)
        text.rstrip()
        out.append(text)
    return out


class Printer:
    """Walks markdown-it's tokens; lists indent their items and hang their lines."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.lists: list[list] = []  # [marker kind, next number] per open list
        self.marker = ""  # the marker the next paragraph of a list item starts with
        self.fresh = False  # a list just opened: its first item is a block of its own
        self.started = False  # something was printed: blocks after it get a blank line

    @property
    def indent(self) -> int:
        return sum(3 if kind == "•" else len(str(n - 1)) + 3 for kind, n in self.lists)

    def gap(self, tight: bool = False) -> None:
        if self.started and not tight:
            self.console.line()
        self.started = True

    def paragraph(self, runs: list[Span], tight: bool = False) -> None:
        self.gap((tight or bool(self.marker)) and not self.fresh)
        self.fresh = False
        indent, marker = self.indent, self.marker
        first = " " * (indent - len(marker)) + marker
        for n, line in enumerate(wrap(runs, self.console.width - indent)):
            self.console.print(Text(first if n == 0 else " " * indent) + line, soft_wrap=True)
        self.marker = ""

    def table(self, rows: list[list[list[Span]]]) -> None:
        """A table that fits as a table; else one `header: cell` paragraph per cell."""
        self.gap()
        cells = [[Text.assemble(*((t, s or None) for t, s, _ in cell)) for cell in row]
                 for row in rows]
        shown = Table(*(Column(header=h) for h in cells[0]), box=box.SIMPLE_HEAD, show_edge=False)
        for row in cells[1:]:
            shown.add_row(*row)
        if fits(self.console, shown, self.console.width - self.indent):
            self.console.print(shown)
            return
        for row in rows[1:]:
            for n, (head, cell) in enumerate(zip(rows[0], row, strict=True)):
                self.paragraph([*head, (": ", "", False), *cell], tight=n > 0)

    def print(self, tokens: list[Token]) -> None:
        rows: list[list[list[Span]]] = []
        for n, t in enumerate(tokens):
            if t.type in ("bullet_list_open", "ordered_list_open"):
                self.fresh = not self.lists
                self.lists.append(["•" if t.type.startswith("bullet") else ".",
                                   int(t.attrs.get("start", 1))])
            elif t.type.endswith("_list_close"):
                self.lists.pop()
            elif t.type == "list_item_open":
                kind, number = self.lists[-1]
                self.marker = " • " if kind == "•" else f" {number}. "
                self.lists[-1][1] += 1
            elif t.type == "inline" and tokens[n - 1].type == "paragraph_open":
                self.paragraph(spans(t), tight=tokens[n - 1].hidden)
            elif t.type == "inline" and tokens[n - 1].type == "heading_open":
                self.paragraph([(x, f"{s} bold".strip(), w) for x, s, w in spans(t)])
            elif t.type == "tr_open":
                rows.append([])
            elif t.type == "inline" and tokens[n - 1].type in ("th_open", "td_open"):
                rows[-1].append(spans(t))
            elif t.type == "table_close":
                self.table(rows)
                rows = []
            elif t.type in ("fence", "code_block"):
                self.gap()
                print_code(self.console, textwrap.dedent(t.content), t.info.strip() or "text")
            elif t.type == "hr":
                self.gap()
                self.console.rule()


def print_markdown(console: Console, markdown: str, lang: str) -> None:
    """A prompt, a hint or a follow-up, in `lang`: Chinese lines joined, prose wrapped by cells."""
    Printer(console).print(MD.parse(cjk.prose(markdown, lang)))


def html(markdown: str, lang: str) -> str:
    """The same Markdown as HTML, every text escaped."""
    return MD.render(cjk.prose(markdown, lang))
