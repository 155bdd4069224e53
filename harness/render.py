"""Prompts on a terminal: prose wraps to the width, code never wraps and is never cropped.

A wrapped signature reads as two lines of code (`-> tuple[int, int] | None:` then `...`), so a
fenced block goes out whole: on a narrow terminal it runs past the edge, as `cat` shows it, and
piped it is written byte for byte.
"""

from __future__ import annotations

import re
import textwrap

from rich.console import Console
from rich.markdown import Markdown
from rich.syntax import Syntax

from harness import cjk

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)\s*$")


def blocks(markdown: str) -> list[tuple[str, str, str]]:
    """(kind, lexer, text) in order: ("prose", "", text) or ("code", lexer, dedented code)."""
    out: list[tuple[str, str, str]] = []
    prose: list[str] = []
    lines = iter(markdown.split("\n"))
    for line in lines:
        opener = FENCE.match(line)
        if not opener:
            prose.append(line)
            continue
        indent, fence, lexer = opener.groups()
        code = []
        for inner in lines:
            if inner.strip() == fence:
                break
            code.append(inner[len(indent):] if inner.startswith(indent) else inner)
        if "".join(prose).strip():
            out.append(("prose", "", "\n".join(prose)))
        prose = []
        out.append(("code", lexer or "text", textwrap.dedent("\n".join(code))))
    if "".join(prose).strip():
        out.append(("prose", "", "\n".join(prose)))
    return out


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


def print_markdown(console: Console, markdown: str, lang: str) -> None:
    """A prompt, a hint or a follow-up: prose through rich's Markdown, code blocks whole."""
    for n, (kind, lexer, text) in enumerate(blocks(cjk.prose(markdown, lang))):
        if n:
            console.line()  # rich's Markdown puts no blank line after its last paragraph
        if kind == "code":
            print_code(console, text + "\n", lexer)
        else:
            console.print(Markdown(text))
