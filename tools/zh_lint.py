"""Traditional Chinese copywriting: the house style of every zh-TW text a learner reads.

    python tools/zh_lint.py          # list what is off, file by file
    python tools/zh_lint.py --fix    # rewrite it in place (English and code are never touched)

The rules, outside code (fenced blocks, `spans`), links' targets and HTML comments:
- autocorrect (autocorrect-py) spaces Chinese from Latin letters and digits: "是 1 個 block";
- punctuation beside Chinese is full width: ，；：！？ and （）, so "value(KV)存在" reads
  "value（KV）存在" (autocorrect would space half-width brackets instead);
- no space between two Chinese characters or full-width marks: a bold word that lost its `**`
  in translation leaves "正在被 拜訪";
- no Simplified-only character: OpenCC's tw2s table keeps it, its s2tw table changes it.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import tokenize
import tomllib
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HAN = r"\u3400-\u9fff"
WIDE = r"\u3000-\u303f\uff00-\uffef"  # full-width marks: 。，、；：（）「」
CJK = f"[{HAN}{WIDE}]"
# Kept as they are: code, link targets, HTML comments, URLs, admonition and attribute lines.
SKIP = re.compile(r"```.*?```|~~~.*?~~~|`[^`\n]*`|\]\([^)\n]*\)|<!--.*?-->|https?://\S+"
                  r"|^\s*(?:!!!|\?\?\?).*$|\{[^}\n]*\}", re.S | re.M)
BOTH_STANDARDS = set("台占准划凶后里干范系只面发污")
PLACEHOLDER = 0xE000  # Unicode's private use area: never in our text
HALF = {",": "，", ";": "；", ":": "：", "!": "！", "?": "？"}
AUTOCORRECT = {"rules": {"space-word": 1, "space-punctuation": 1, "space-backticks": 1,
                         "space-bracket": 0, "space-dash": 0, "fullwidth": 0,
                         "no-space-fullwidth": 1, "halfwidth-word": 1,
                         "halfwidth-punctuation": 1, "spellcheck": 0}}


@cache
def _autocorrect():
    import autocorrect_py

    autocorrect_py.load_config(json.dumps(AUTOCORRECT))
    return autocorrect_py


@cache
def _opencc(config: str):
    import opencc

    return opencc.OpenCC(config)


def _prose(text: str) -> str:
    """Prose with code held out as placeholders, in house style. Brackets come first: a mark
    after a bracket turned wide touches a wide character."""
    text = re.sub(r" ?\(([^()\n]*)\) ?", _bracket, text)
    # A half-width mark that touches Chinese on either side (spaces between ignored) turns wide.
    text = re.sub(f"(?<={CJK}) *([,;:!?]) *|(?<! ) *([,;:!?]) *(?={CJK})",
                  lambda m: HALF[m.group(1) or m.group(2)], text)
    text = re.sub(f"(?<={CJK}) +(?={CJK})", "", text)
    return _autocorrect().format(text)


def _bracket(m: re.Match) -> str:
    """Wide when a Chinese character is inside, just before or just after: "value(KV)存在" is
    prose, "P(s+ = s-)。" math (a full-width mark beside it is not enough)."""
    whole, inner = m.group(0), m.group(1)
    before = "" if whole.startswith(" ") else m.string[m.start() - 1:m.start()]
    after = "" if whole.endswith(" ") else m.string[m.end():m.end() + 1]
    han = f"[{HAN}]"
    if re.search(han, inner) or re.fullmatch(han, before) or re.fullmatch(han, after):
        return f"（{inner.strip()}）"
    return whole


def fix(text: str) -> str:
    """`text` in house style. What SKIP matches is kept byte for byte: it stands in as one
    private-use character while the rules run, so they still see the prose on both sides."""
    kept: list[str] = []

    def hold(m: re.Match) -> str:
        kept.append(m.group())
        return chr(PLACEHOLDER + len(kept) - 1)

    held = _prose(SKIP.sub(hold, text))
    return re.sub("[\ue000-\uf8ff]", lambda m: kept[ord(m.group()) - PLACEHOLDER], held)


def simplified(text: str) -> list[str]:
    """The Simplified-only characters of `text`, outside code: OpenCC's s2tw table changes them
    and its tw2s table keeps them. Characters that are Traditional too, with a meaning of their
    own (台 and 臺, 占 and 佔), only context can settle: BOTH_STANDARDS leaves them to review."""
    to_traditional, to_simplified = _opencc("s2tw"), _opencc("tw2s")
    prose = SKIP.sub(" ", text)
    return sorted({c for c in re.findall(f"[{HAN}]", prose) if c not in BOTH_STANDARDS
                   and to_simplified.convert(c) == c != to_traditional.convert(c)})


def sources() -> list[Path]:
    """Where zh-TW text lives: kata metadata (both sides), mutants, the rubric, the catalogue of
    every word the tool says, the docs."""
    return sorted([*ROOT.glob("katas/*/kata.toml"), *ROOT.glob("harness/suites/*/*.toml"),
                   *ROOT.glob("harness/session/*.toml"), ROOT / "harness" / "words.toml",
                   *ROOT.glob("docs/**/*.zh-TW.md")])


def fixed(path: Path) -> str:
    """The file in house style. Python: only its string literals that hold Chinese."""
    raw = path.read_text(encoding="utf-8")
    if path.name == "words.toml":  # the catalogue: one text a line, fixed where it holds Chinese
        return "".join(fix(line) if re.search(f"[{HAN}]", line) else line
                       for line in raw.splitlines(keepends=True))
    if path.suffix != ".py":  # the rules fire beside Chinese only: TOML keys, English untouched
        new = fix(raw)
        if path.suffix == ".toml":
            assert _english(tomllib.loads(raw)) == _english(tomllib.loads(new)), \
                f"{path}: an English text would change"
        return new
    lines = raw.splitlines(keepends=True)
    tokens = tokenize.generate_tokens(io.StringIO(raw).readline)
    for tok in reversed([t for t in tokens if t.type == tokenize.STRING]):
        if re.search(f"[{HAN}]", tok.string) and tok.start[0] == tok.end[0]:
            row, line = tok.start[0] - 1, lines[tok.start[0] - 1]
            lines[row] = line[:tok.start[1]] + fix(tok.string) + line[tok.end[1]:]
    return "".join(lines)


def problems(path: Path) -> list[str]:
    """Each line the fixer would change, and each Simplified-only character."""
    raw, where = path.read_text(encoding="utf-8"), path.relative_to(ROOT)
    found = [f"{where}: {old.strip()[:70]!r} → {new.strip()[:70]!r}"
             for old, new in zip(raw.splitlines(), fixed(path).splitlines(), strict=True)
             if old != new]
    chars = simplified(raw)
    return found + ([f"{where}: Simplified {' '.join(chars)}"] if chars else [])


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
    found = [p for path in sources() for p in problems(path)]
    print("\n".join(found) or "zh-TW text: clean")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
