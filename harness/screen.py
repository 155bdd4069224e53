"""The one way `kata` prints: catalogue text in a language, plain text never read as markup,
rules, Markdown prompts and code (harness.render). Plain text when not a terminal."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from harness import render
from harness.words import say


class Screen:
    """`section`: the catalogue section `say` keys are in. `wrap`: long lines wrap to the width,
    by cells and never inside a word (harness.cjk), else they run on as one line each, as `cat`
    shows them."""

    def __init__(self, console: Console, lang: str, section: str = "", wrap: bool = False) -> None:
        self.console, self.lang, self.section, self.wrap = console, lang, section, wrap

    def words(self, key: str, **fields: object) -> str:
        return say(f"{self.section}.{key}" if self.section else key, self.lang, **fields)

    def say(self, key: str, style: str | None = None, indent: int = 0, **fields: object) -> None:
        self.text(self.words(key, **fields), style, indent)

    def text(self, text: str, style: str | None = None, indent: int = 0) -> None:
        """Text, not markup: titles and hints hold brackets."""
        if not self.wrap:
            self.console.print(" " * indent + text, style=style, markup=False, highlight=False,
                               soft_wrap=True)
            return
        for line in render.wrap([(text, style or "", False)], self.console.width - indent):
            self.console.print(Text(" " * indent) + line, soft_wrap=True)

    def rule(self, title: str) -> None:
        """A rule with the title in it; a title too long for that (rich would cut it with "…")
        goes below a bare rule, wrapped."""
        if cell_len(title) + 4 <= self.console.width:  # a space and a rule's end on each side
            self.console.rule(Text(title, style="bold"))
            return
        self.console.rule()
        for line in render.wrap([(title, "bold", False)], self.console.width):
            self.console.print(line, soft_wrap=True)

    def markdown(self, markdown: str) -> None:
        render.print_markdown(self.console, markdown, self.lang)

    def code(self, code: str, lexer: str) -> None:
        render.print_code(self.console, code, lexer)
