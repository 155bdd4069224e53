"""Traditional Chinese copywriting: the house style of every zh-TW text a learner reads.

    python tools/zh_lint.py          # list what is off, file by file, and a count per kind
    python tools/zh_lint.py --fix    # rewrite what it can (English and code are never touched)

The rules, outside code (fenced blocks, `spans`, $math$), links' targets and HTML comments. Each
has a kind, the name the report gives it:
- `mark`: punctuation beside Chinese is full width: ，；：！？, also when the mark ends a line
  and the Chinese goes on on the next one;
- `bracket`: brackets beside Chinese are full width, so "value(KV)存在" reads "value（KV）存在"
  (autocorrect would space half-width brackets instead), also when "(" and ")" sit on two lines;
- `formula`: a math function's brackets are half width, "max(a, b)" and never "max（a，b）";
- `sentence-end`: a half-width "." or "?" does not end a Chinese sentence ("bonus token." after
  Chinese on its line, or on the line before, reads "bonus token。");
- `space-after-mark`: no space after a full-width mark, nor after the bold or italic it closes:
  "**挑選。** 下一句" reads "**挑選**。下一句" (the mark moves out: CommonMark closes no bold
  between "。" and a Chinese character);
- `space`: no space between two Chinese characters or full-width marks: a bold word that lost its
  `**` in translation leaves "正在被 拜訪";
- `autocorrect` (autocorrect-py): Chinese is spaced from Latin letters and digits, "是 1 個 block";
- `simplified`: no Simplified-only character (OpenCC's tw2s table keeps it, its s2tw table
  changes it);
- `term`: no word the glossary (docs/glossary.toml) rules out: one zh-TW term per idea;
- `code-comment`: a comment in a code block of a zh-TW text is Chinese (an English one is left
  over from the translation).
The last three are reported, not fixed: the right word depends on the sentence.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import tokenize
import tomllib
from collections import Counter
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "docs" / "glossary.toml"
# Where zh-TW text lives, as globs under the repository: add a file or a pattern here and both the
# command and tests/test_zh_typography.py check it.
SOURCES = ["katas/*/kata.toml", "harness/suites/*/*.toml", "harness/session/*.toml",
           "harness/words.toml", "docs/**/*.zh-TW.md", "harness/bench.zh-TW.toml"]

HAN = r"\u3400-\u9fff"
WIDE = r"\u3000-\u303f\uff00-\uffef"  # full-width marks: 。，、；：（）「」
CJK = f"[{HAN}{WIDE}]"
# Kept as they are: code, math, link targets, HTML comments, URLs, an admonition's marker and
# type (its title is prose) and attribute lists. Fences, $$ blocks and comments span lines; a code
# span, two at most (a prompt wraps one as it wraps prose).
SKIP = re.compile(r"```.*?```|~~~.*?~~~|\$\$.*?\$\$|<!--.*?-->"
                  r"|`[^`\n]*(?:\n[^`\n]*)?`|\$[^$\n]+\$|\]\([^)\n]*\)|https?://\S+"
                  r"|^[ \t]*(?:!!!|\?\?\?\+?)[ \t]*[\w -]*|\{[^}\n]*\}", re.S | re.M)
FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n(.*?)^[ \t]*\1", re.S | re.M)
BOTH_STANDARDS = set("台占准划凶后里干范系只面发污")
PLACEHOLDER = 0xE000  # Unicode's private use area: never in our text
HALF = {",": "，", ";": "；", ":": "：", "!": "！", "?": "？"}
MATH_FUNCTIONS = r"\b(?:max|min|sum|exp|log|sqrt|argmax|argmin|softmax|ceil|floor)"
AUTOCORRECT = {"rules": {"space-word": 1, "space-punctuation": 1, "space-backticks": 1,
                         "space-bracket": 0, "space-dash": 0, "fullwidth": 0,
                         "no-space-fullwidth": 1, "halfwidth-word": 1,
                         "halfwidth-punctuation": 0, "spellcheck": 0}}
# halfwidth-punctuation is off: it reads a wrapped line with no Chinese on it ("greedy token。") as
# English and turns its mark half width, the very thing `sentence-end` forbids.


class Finding(NamedTuple):
    """One thing off: its kind (a rule's name), the file and line, what it reads."""

    kind: str
    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: [{self.kind}] {self.what}"


@cache
def _autocorrect():
    import autocorrect_py

    autocorrect_py.load_config(json.dumps(AUTOCORRECT))
    return autocorrect_py


@cache
def _opencc(config: str):
    import opencc

    return opencc.OpenCC(config)


def _bracket(text: str) -> str:
    """Wide when a Chinese character is inside, just before or just after: "value(KV)存在" is
    prose, "P(s+ = s-)。" math (a full-width mark beside it is not enough), and so is a math
    function's call. "(" and ")" may sit on two lines of one paragraph."""
    def widen(m: re.Match) -> str:
        whole, inner = m.group(0), m.group(1)
        if re.search(MATH_FUNCTIONS + r" ?$", m.string[max(0, m.start() - 8):m.start()]):
            return whole
        before = "" if whole.startswith(" ") else m.string[m.start() - 1:m.start()]
        after = "" if whole.endswith(" ") else m.string[m.end():m.end() + 1]
        han = f"[{HAN}]"
        if re.search(CJK, inner) or re.fullmatch(han, before) or re.fullmatch(han, after):
            return f"（{inner.strip(' ')}）"
        return whole

    # Across lines only inside one paragraph of one string: no quote, no interval's bracket.
    return re.sub(r' ?\(([^()\n]*|[^()\n"\[\]]*\n[^()\n"\[\]]*)\) ?', widen, text)


def _formula(text: str) -> str:
    """A math function's brackets are the formula's: half width."""
    return re.sub(MATH_FUNCTIONS + r"（([^（）\n]*)）", lambda m: m.group(0)[:-len(m.group(1)) - 2]
                  + f"({m.group(1)})", text)


def _mark(text: str) -> str:
    """A half-width mark that touches Chinese on either side (spaces between ignored) turns
    wide, and so does one that ends a line whose next line starts with Chinese, or that sits
    between two words on a Chinese line with no space after it."""
    text = re.sub(f"(?<={CJK}) *([,;:!?]) *|(?<! ) *([,;:!?]) *(?={CJK})",
                  lambda m: HALF[m.group(1) or m.group(2)], text)
    text = re.sub(f"(?<=\\S)([,;:])[ \t]*(?=\n[ \t]*[{HAN}])", lambda m: HALF[m.group(1)], text)
    # Between two words with no space after it, on a Chinese line: "FINISHED,`has_unfinished()`",
    # "deque:submit", "µs,10" (an English mark is followed by a space; "1,000" is a number;
    # "[:k]", "(n,)" are code).
    between_words = re.compile("(?<=[^\\s\\d\\[])([,;:?])(?=[^\\s/\\])])")
    return re.sub(f"(?m)^(?=[^\\n]*[{HAN}])[^\\n]*", lambda line: between_words.sub(
        lambda m: HALF[m.group(1)], line.group()), text)


def _sentence_end(text: str) -> str:
    """".", "?" or "!" after a word, at the end of a line (or of a TOML string) or before Chinese,
    ends a Chinese sentence when Chinese comes before it on its line, or the line before ends in
    Chinese."""
    def widen(m: re.Match) -> str:
        line_start = m.string.rfind("\n", 0, m.start()) + 1
        before = m.string[line_start:m.start()]
        previous = m.string[:max(line_start - 1, 0)].rsplit("\n", 1)[-1].rstrip()
        chinese = re.search(f"[{HAN}]", before) or (
            not before.lstrip().startswith(("-", "|", "#")) and re.search(f"{CJK}$", previous)
            and not re.search("[A-Za-z]", previous[-12:]))
        abbreviation = re.search(r"\b(?:vs|e\.g|i\.e|etc|cf)$", before)
        return {".": "。", "?": "？", "!": "！"}[m.group(1)] if chinese and not abbreviation \
            else m.group(1)

    end = f"(?=[\"\x27]?[,\\]]?[ \t]*(?:\n|$)|[ \t]*[{HAN}])"  # a TOML string may close first
    return re.sub(f"(?<=[^\\s\\d.?!(\\[])([.?!]){end}", widen, text)


def _space_after_mark(text: str) -> str:
    """No space after a full-width mark; a mark that closes a bold or italic lead-in moves out of
    it ("**挑選。** 下" reads "**挑選**。下")."""
    text = re.sub(r"([。！？；：，])(\*{1,2})[ \t]+(?=\S)", r"\2\1", text)
    return re.sub(r"([。！？；：，、）」』])[ \t]+(?=[^\s|])", r"\1", text)


def _space(text: str) -> str:
    return re.sub(f"(?<={CJK}) +(?={CJK})", "", text)


def _spacing(text: str) -> str:
    return _autocorrect().format(text)


# In order: brackets first (a mark after a bracket turned wide touches a wide character), spacing
# last.
RULES: dict[str, Callable[[str], str]] = {
    "formula": _formula, "bracket": _bracket, "mark": _mark, "sentence-end": _sentence_end,
    "space-after-mark": _space_after_mark, "space": _space, "autocorrect": _spacing}


def _held(text: str, rules: list[Callable[[str], str]]) -> str:
    """`text` with `rules` applied. What SKIP matches is kept byte for byte: it stands in as one
    private-use character while the rules run, so they still see the prose on both sides."""
    kept: list[str] = []

    def hold(m: re.Match) -> str:
        kept.append(m.group())
        return chr(PLACEHOLDER + len(kept) - 1)

    held = SKIP.sub(hold, FENCE.sub(lambda m: _comments(m, rules), text))
    for rule in rules:
        held = rule(held)
    return re.sub("[\ue000-\uf8ff]", lambda m: kept[ord(m.group()) - PLACEHOLDER], held)


def _comments(block: re.Match, rules: list[Callable[[str], str]]) -> str:
    """A code block with its Chinese comments in house style (a diagram's labels are left to
    review: their marks are its syntax)."""
    if block.group(0).lstrip().startswith(("```mermaid", "~~~mermaid")):
        return block.group(0)
    return re.sub(f"(?m)(?<=#)([^\\n]*[{HAN}][^\\n]*)$", lambda m: _held(m.group(1), rules),
                  block.group(0))


def fix(text: str) -> str:
    """`text` in house style."""
    return _held(text, list(RULES.values()))


def simplified(text: str) -> list[str]:
    """The Simplified-only characters of `text`, outside code: OpenCC's s2tw table changes them
    and its tw2s table keeps them. Characters that are Traditional too, with a meaning of their
    own (台 and 臺, 占 and 佔), only context can settle: BOTH_STANDARDS leaves them to review."""
    to_traditional, to_simplified = _opencc("s2tw"), _opencc("tw2s")
    prose = SKIP.sub(" ", text)
    return sorted({c for c in re.findall(f"[{HAN}]", prose) if c not in BOTH_STANDARDS
                   and to_simplified.convert(c) == c != to_traditional.convert(c)})


@cache
def glossary() -> list[dict]:
    """The project's terms: `en`, the one `zh-TW` term, and the words (`not`) that must not
    appear in its place."""
    return tomllib.loads(GLOSSARY.read_text(encoding="utf-8"))["terms"]


def off_terms(text: str) -> list[str]:
    """Each word of `text`, outside code, that the glossary rules out, with the term to use."""
    prose = SKIP.sub(" ", text)
    return [f"{m.group()!r} → {term['zh-TW']} ({term['en']})" for term in glossary()
            for pattern in term["not"] for m in re.finditer(pattern, prose)]


def english_comments(text: str) -> list[str]:
    """Comments in `text`'s code blocks that are English: no Chinese, and two words or more that
    are not names the block's code uses ("# (tenant, request_id)" only names things)."""
    found = []
    for block in FENCE.finditer(text):
        code = block.group(2)
        names = set(re.findall(r"\w+", re.sub(r"#[^\n]*", "", code)))
        for comment in re.findall(r"(?:^|\s)(#(?!!)[^\n]*)", code):
            words = [w for w in re.findall(r"(?<![\w.])[a-z]{2,}(?![\w(])", comment)
                     if w not in names]
            if not re.search(f"[{HAN}]", comment) and len(words) > 1:
                found.append(comment.strip())
    return found


def sources() -> list[Path]:
    """Every file SOURCES names."""
    return sorted({path for pattern in SOURCES for path in ROOT.glob(pattern)})


def zh_texts(path: Path) -> list[str]:
    """The zh-TW texts of a file: a TOML file's `zh-TW` values, a Python file's string literals
    that hold Chinese, a page's whole text."""
    raw = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        doc = tomllib.loads(raw)
        doc.pop("phrasings", None)  # a candidate's own words, for the matcher: not ours to rule
        for point in doc.get("open_points", {}).values():
            point.pop("zh-TW", None)  # its phrasings; its `point` is ours
        return list(_chinese_values(doc))
    if path.suffix == ".py":
        tokens = tokenize.generate_tokens(io.StringIO(raw).readline)
        return [t.string for t in tokens
                if t.type == tokenize.STRING and re.search(f"[{HAN}]", t.string)]
    return [raw]


def _chinese_values(value: object, zh: bool = False):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _chinese_values(item, zh or key == "zh-TW")
    elif isinstance(value, list):
        for item in value:
            yield from _chinese_values(item, zh)
    elif isinstance(value, str) and zh:
        yield value


def fixed(path: Path, rules: list[Callable[[str], str]] | None = None) -> str:
    """The file in house style (under `rules`, all of them by default). Python: only its string
    literals that hold Chinese."""
    rules = list(RULES.values()) if rules is None else rules
    raw = path.read_text(encoding="utf-8")
    if path.name == "words.toml":  # the catalogue: one text a line, fixed where it holds Chinese
        return "".join(_held(line, rules) if re.search(f"[{HAN}]", line) else line
                       for line in raw.splitlines(keepends=True))
    if path.suffix != ".py":  # the rules fire beside Chinese only: TOML keys, English untouched
        new = _held(raw, rules)
        if path.suffix == ".toml":
            assert _english(tomllib.loads(raw)) == _english(tomllib.loads(new)), \
                f"{path}: an English text would change"
        return new
    lines = raw.splitlines(keepends=True)
    tokens = tokenize.generate_tokens(io.StringIO(raw).readline)
    for tok in reversed([t for t in tokens if t.type == tokenize.STRING]):
        if re.search(f"[{HAN}]", tok.string) and tok.start[0] == tok.end[0]:
            row, line = tok.start[0] - 1, lines[tok.start[0] - 1]
            lines[row] = line[:tok.start[1]] + _held(tok.string, rules) + line[tok.end[1]:]
    return "".join(lines)


def findings(path: Path) -> list[Finding]:
    """Each line a rule would change (under the first rule's kind), each Simplified-only character,
    each word the glossary rules out and each English comment in a zh-TW code block."""
    raw = path.read_text(encoding="utf-8")
    where = str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    found, seen = [], set()
    for kind, rule in RULES.items():  # a line under the first rule that changes it
        for n, (old, new) in enumerate(zip(raw.splitlines(), fixed(path, [rule]).splitlines(),
                                           strict=True), start=1):
            if old != new and n not in seen:
                seen.add(n)
                found.append(Finding(kind, f"{where}:{n}",
                                     f"{old.strip()[:70]!r} → {new.strip()[:70]!r}"))
    if not found and fixed(path) != raw:  # the rules together, where none alone changes a line
        found.append(Finding("style", where, "run --fix"))
    chars = simplified(raw)
    if chars:
        found.append(Finding("simplified", where, " ".join(chars)))
    texts = zh_texts(path)
    found += [Finding("term", where, word) for text in texts for word in off_terms(text)]
    found += [Finding("code-comment", where, repr(comment))
              for text in texts for comment in english_comments(text)]
    return found


def problems(path: Path) -> list[str]:
    """The findings of `path`, as lines to print."""
    return [str(f) for f in findings(path)]


def rewrite(path: Path) -> bool:
    """Fix `path` in place; True if anything changed."""
    new = fixed(path)
    if new != path.read_text(encoding="utf-8"):
        path.write_text(new, encoding="utf-8")
        return True
    return False


def _english(value: object) -> object:
    if isinstance(value, dict):
        return {k: _english(v) for k, v in value.items() if k != "zh-TW"}
    if isinstance(value, list):
        return [_english(v) for v in value]
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fix", action="store_true", help="rewrite the files in place")
    args = parser.parse_args(argv)
    if args.fix:
        for path in sources():
            if rewrite(path):
                print(f"fixed {path.relative_to(ROOT)}")
    found = [f for path in sources() for f in findings(path)]
    print("\n".join(map(str, found)) or "zh-TW text: clean")
    if found:
        counts = Counter(f.kind for f in found)
        print("\n" + ", ".join(f"{kind}: {n}" for kind, n in sorted(counts.items())))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
