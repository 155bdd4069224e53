"""Chinese text: join lines wrapped inside a sentence, and split a sentence into words.

Chinese has no spaces, so a line break inside a sentence must vanish instead of becoming a space
(Markdown and browsers both turn it into one), and words come from a dictionary segmenter (jieba)
instead of whitespace.
"""

from __future__ import annotations

import logging
import re

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


def segment(text: str) -> list[str]:
    """The words of a run of Chinese characters, by jieba's dictionary."""
    import jieba  # imported here: loading its dictionary takes a second, and only Chinese needs it

    jieba.setLogLevel(logging.WARNING)  # no "Building prefix dict" chatter on the learner's screen
    return [w for w in jieba.lcut(text) if w.strip()]


def prose(markdown: str, lang: str) -> str:
    """Markdown as it should reach a renderer in `lang`: Chinese wrapped lines joined."""
    return join_lines(markdown) if lang == "zh-TW" else markdown
