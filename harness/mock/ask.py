"""Match a learner's free-text question with the clarifying questions a kata's interviewer knows.

Words are compared loosely (a shared prefix covers plurals and tenses: "ties" meets "tied"), and
Chinese text, which has no spaces, is compared by pairs of characters.
"""

from __future__ import annotations

import re

from harness.catalog import LANGS

STOPWORDS = set("""a an the is are was be been do does did should would could can may might will
shall must i we you it its they my me our your of to in on at for with by from or and if so as
what when which who how why there this that these those happen happens any some about""".split())
THRESHOLD = 0.3  # Dice similarity below this is "not in the interviewer's notes"

_WORD = re.compile(r"[a-z0-9_]+|[\u3400-\u9fff]+")


def words(text: str) -> list[str]:
    """Content words of `text`; a run of CJK characters becomes its overlapping character pairs."""
    found = []
    for token in _WORD.findall(text.lower()):
        if "\u3400" <= token[0] <= "\u9fff":
            found += [token[i:i + 2] for i in range(max(1, len(token) - 1))]
        elif token not in STOPWORDS:
            found.append(token)
    return found


def _same(a: str, b: str) -> bool:
    if a == b:
        return True
    common = len(next((a[:i] for i in range(min(len(a), len(b)), 0, -1) if a[:i] == b[:i]), ""))
    return common >= 3 and common >= min(len(a), len(b)) - 1


def similarity(asked: str, known: str) -> float:
    """Dice similarity of two questions' content words, with loose word equality."""
    a, b = words(asked), words(known)
    if not a or not b:
        return 0.0
    shared = sum(any(_same(x, y) for y in b) for x in a)
    return 2 * min(shared, len(b)) / (len(a) + len(b))


def match(asked: str, questions: list[dict]) -> int | None:
    """The index of the question that `asked` means, in any language, or None."""
    best, index = 0.0, None
    for i, question in enumerate(questions):
        score = max(similarity(asked, question["ask"][lang]) for lang in LANGS)
        if score > best:
            best, index = score, i
    return index if best >= THRESHOLD else None
