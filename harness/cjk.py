"""Chinese text: join lines wrapped inside a sentence, and wrap a paragraph by terminal cells.

Chinese has no spaces, so a line break inside a sentence must vanish instead of becoming a space
(Markdown and browsers both turn it into one), and a line may break between any two characters.
"""

from __future__ import annotations

import re

from rich.cells import cell_len

CJK = re.compile(r"[\u2e80-\u9fff\u3000-\u303f\uff00-\uffef]")
FULLWIDTH_PUNCT = re.compile(r"[\u3000-\u303f\uff00-\uffef]")
BLOCK_START = re.compile(r"([-*+] |\d+\. |[|#>]|!!!|\?\?\?|<!--)")


def join_lines(markdown: str) -> str:
    """Join the lines of a paragraph wrapped between two Chinese characters (or after full-width
    punctuation), outside code blocks and headings; other line breaks stay."""
    out: list[str] = []
    fence = None
    for line in markdown.split("\n"):
        stripped = line.strip()
        opener = re.match(r"(`{3,}|~{3,})", stripped)
        if fence:
            fence = None if stripped == fence else fence
        elif opener:
            fence = opener.group(1)
        elif out and stripped and out[-1].strip() and not out[-1].lstrip().startswith("#") and (
                (CJK.match(stripped) and CJK.match(out[-1][-1]))
                or (FULLWIDTH_PUNCT.match(out[-1][-1]) and not BLOCK_START.match(stripped))):
            out[-1] += stripped
            continue
        out.append(line)
    return "\n".join(out)


def flat(text: str, lang: str) -> str:
    """A wrapped paragraph on one line: Chinese lines join without a space."""
    return " ".join(prose(text, lang).split())


def prose(markdown: str, lang: str) -> str:
    """Markdown as it should reach a renderer in `lang`: Chinese wrapped lines joined."""
    return join_lines(markdown) if lang == "zh-TW" else markdown


# A line may break at a space, or beside a Chinese character or full-width mark; never inside a
# run of other text (a word, an identifier, inline code), never before a closing mark or after an
# opening one (kinsoku).
WIDE = "\u2e80-\u303f\u3400-\u9fff\uff00-\uffef"  # CJK marks, ideographs, full-width forms
TOKEN = re.compile(f"[{WIDE}]|[^\\s{WIDE}]+|\\s+")
CLOSING = set("，。、；：！？）」』》〉】,.;:!?)]}")
OPENING = set("（「『《〈【")


def tokens(text: str) -> list[str]:
    """The pieces of a text: a line may break only between two of them."""
    return TOKEN.findall(text)


def wrap(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` terminal cells (a Chinese character takes two)."""
    pieces = tokens(re.sub(r"[^\S\u00a0]+", " ", text).strip())
    return ["".join(pieces[i] for i in line).rstrip() for line in lines(pieces, width)]


def _glued(before: str, piece: str) -> bool:
    """Whether no line may break between two pieces."""
    if "\u00a0" in (before[-1], piece[0]):  # a no-break space
        return True
    if before.isspace() or piece.isspace():
        return False
    if piece[0] in CLOSING or before[-1] in OPENING:
        return True
    return not re.match(f"[{WIDE}]", before[-1]) and not re.match(f"[{WIDE}]", piece[0])


def lines(pieces: list[str], width: int) -> list[list[int]]:
    """The pieces' indices grouped into lines of at most `width` cells. Spaces at a break vanish;
    a run of glued pieces wider than a line stands alone, whole."""
    units: list[list[int]] = []
    for i, piece in enumerate(pieces):
        if units and _glued(pieces[i - 1], piece):
            units[-1].append(i)
        else:
            units.append([i])
    found: list[list[int]] = []
    line: list[int] = []
    cells = 0
    for unit in units:
        size = sum(cell_len(pieces[i]) for i in unit)
        blank = all(pieces[i].isspace() for i in unit)
        if cells + size > width and any(not pieces[i].isspace() for i in line):
            found.append(line)
            line, cells = [], 0
        if line or not blank:
            line += unit
            cells += size
    return [*found, line]
