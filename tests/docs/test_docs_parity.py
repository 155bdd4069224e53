"""Every page exists in English and Traditional Chinese with the same shape.

Same shape: the same headings (levels, in order), the same code blocks up to what a reader reads
in them (comments, quoted strings and `--lang`'s value are in the page's language; Mermaid diagrams
are translated, so for them only the number and the diagram type must match), the same markers the
docs hook fills, the same admonitions, tables with the same number of rows, and the same links.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .conftest import DOCS, ROOT, source_pages, translated

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w-]*)")
HEADING = re.compile(r"^(#{1,6})\s+\S")
ADMONITION = re.compile(r"^\s*(\?\?\?\+?|!!!)\s+(\w+)")
MARKER = re.compile(r"^<!-- .+ -->$")
LINK = re.compile(r"\]\(([^)\s]+)")
FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)  # a Mermaid diagram's own config


@dataclass
class Shape:
    headings: list[int] = field(default_factory=list)
    code: list[tuple[str, str]] = field(default_factory=list)
    diagrams: list[str] = field(default_factory=list)
    markers: list[str] = field(default_factory=list)
    admonitions: list[str] = field(default_factory=list)
    tables: list[int] = field(default_factory=list)
    links: list[str] = field(default_factory=list)


def _code(text: str) -> str:
    """A code block less what is said in the page's language."""
    text = re.sub(r"--lang \S+", "--lang", text)
    text = re.sub(r'"[^"\n]*"', '""', text)
    return re.sub(r"[ \t]*#[^\n]*", "", text)


def shape(path: Path) -> Shape:
    result = Shape()
    fence = None  # (marker, language, indent, lines) while inside a fenced block
    table_rows = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if fence is not None:
            marker, lang, indent, body = fence
            if line.strip().startswith(marker) and not line.strip().strip(marker[0]):
                text = "\n".join(body)
                if lang == "mermaid":  # the type, after the front matter (which must match too)
                    config = FRONT_MATTER.match(text)
                    rest = text[config.end():] if config else text
                    kind = rest.split(None, 1)[0] if rest.strip() else ""
                    result.diagrams.append(config.group(0) + kind if config else kind)
                else:
                    result.code.append((lang, _code(text)))
                fence = None
            else:
                body.append(line[indent:] if line[:indent].strip() == "" else line)
            continue
        if m := FENCE.match(line):
            fence = (m.group(2), m.group(3), len(m.group(1)), [])
            continue
        result.links += LINK.findall(re.sub(r"`[^`]*`", "", line))
        if line.startswith("|"):
            table_rows += 1
            continue
        if table_rows:
            result.tables.append(table_rows)
            table_rows = 0
        if m := HEADING.match(line):
            result.headings.append(len(m.group(1)))
        if MARKER.match(line):
            result.markers.append(line)
        if m := ADMONITION.match(line):
            result.admonitions.append(m.group(2))
    assert fence is None, f"{path}: a code block is never closed"
    if table_rows:
        result.tables.append(table_rows)
    return result


PAGES = source_pages()


def test_there_are_pages():
    assert Path("index.md") in PAGES and Path("benchmarks.md") in PAGES


def test_every_page_exists_in_both_languages():
    english = {p for p in PAGES}
    chinese = {p.with_name(p.name.removesuffix(".zh-TW.md") + ".md")
               for p in (q.relative_to(DOCS) for q in DOCS.rglob("*.zh-TW.md"))
               if p.parts[0] != "benchmarks"}
    assert sorted(english - chinese) == [], "pages without a Traditional Chinese version"
    assert sorted(chinese - english) == [], "Traditional Chinese pages without an English version"


def test_every_kata_has_a_page_in_both_languages():
    """The nav lists every kata by itself (the docs hook); a kata only needs its two pages."""
    katas = sorted(p.parent.name for p in (ROOT / "katas").glob("*/kata.toml"))
    assert katas, "no katas found"
    for name in katas:
        assert (DOCS / "katas" / f"{name}.md").is_file(), f"no docs page for kata {name}"
        assert (DOCS / "katas" / f"{name}.zh-TW.md").is_file(), f"no zh-TW docs page for {name}"


def test_kata_pages_leave_their_title_to_kata_toml():
    for page in PAGES:
        if page.parent.name == "katas":
            for path in (DOCS / page, DOCS / translated(page)):
                first = path.read_text(encoding="utf-8").lstrip().splitlines()[0]
                assert not first.startswith("# "), f"{path.name}: the H1 comes from kata.toml"


def test_every_kata_page_reads_its_metadata():
    for page in PAGES:
        if page.parent.name == "katas":
            text = (DOCS / page).read_text(encoding="utf-8")
            for section in ("levels", "questions", "followups", "selfcheck"):
                assert f"<!-- kata:{section} {page.stem} -->" in text, (page, section)


@pytest.mark.parametrize("page", PAGES, ids=[p.as_posix() for p in PAGES])
def test_same_shape_in_both_languages(page: Path):
    en, zh = shape(DOCS / page), shape(DOCS / translated(page))
    assert zh.headings == en.headings, "heading levels differ"
    assert zh.code == en.code, "code blocks differ"
    assert zh.diagrams == en.diagrams, "Mermaid diagrams differ in number or type"
    assert zh.markers == en.markers, "docs-hook markers differ"
    assert zh.admonitions == en.admonitions, "admonitions differ"
    assert zh.tables == en.tables, "tables differ in number of rows"
    assert zh.links == en.links, "links differ"



@pytest.mark.parametrize("page", [Path("index.md"), translated(Path("index.md"))])
def test_the_home_page_says_how_to_reach_the_installed_commands(page):
    """`kata` lives in .venv/bin: a bare `kata list` in a fresh terminal is "command not found"."""
    text = (DOCS / page).read_text(encoding="utf-8")
    first = text.index("kata list")
    assert "source .venv/bin/activate" in text[:first + 1] or ".venv/bin/kata" in text[:first + 1]
    assert ".venv/bin/kata" in text and "source .venv/bin/activate" in text
