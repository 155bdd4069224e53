"""Match a learner's free-text question with the clarifying questions a kata's interviewer knows.

Words are compared loosely: in English a shared prefix covers plurals and tenses ("ties" meets
"tied"); Chinese is segmented into words by jieba, and two Chinese words meet when they share a
character that carries meaning ("同分" meets "分數", "類別" meets "類"). A question can also be
asked by its number in the list ("3" or "#3").
"""

from __future__ import annotations

import re

from harness.catalog import LANGS
from harness.cjk import segment

STOPWORDS = set("""a an the is are was be been do does did should would could can may might will
shall must i we you it its they my me our your of to in on at for with by from or and if so as
what when which who how why there this that these those happen happens any some about
into""".split())
# Function words and question words of Chinese: they say that something is asked, not what.
STOPWORDS_ZH = set("""的 了 是 嗎 呢 吧 啊 呀 要 會 我 你 他 她 它 我們 在 和 與 跟 或 還是 怎麼
怎樣 什麼 如何 時 時候 情況 話 可以 能 不能 能不能 請問 一下 這 那 這個 那個 有 就 都 也 該 應該
需要 麼 辦 怎麼辦 算 處理 如果 若 一個 一種 個""".split())
WEAK_CHARS = set("的是不一有")  # too common for a shared character to mean a shared word
THRESHOLD = 0.3  # Dice similarity below this is "not in the interviewer's notes"

_WORD = re.compile(r"[a-z0-9_]+|[\u3400-\u9fff]+")
_NUMBER = re.compile(r"#?\s*(\d+)")


def _cjk(word: str) -> bool:
    return "\u3400" <= word[0] <= "\u9fff"


def words(text: str) -> list[str]:
    """Content words of `text`; a run of Chinese characters is segmented into words."""
    found = []
    text = re.sub(r"['’]s\b", "", text.lower()).replace("scikit-learn", "sklearn")  # caller's
    for token in _WORD.findall(text):
        if _cjk(token):
            found += [w for w in segment(token) if w not in STOPWORDS_ZH]
        elif token not in STOPWORDS:
            found.append(token)
    return found


def _same(a: str, b: str) -> bool:
    if a == b:
        return True
    if _cjk(a) or _cjk(b):
        return _cjk(a) and _cjk(b) and bool((set(a) & set(b)) - WEAK_CHARS)
    common = len(next((a[:i] for i in range(min(len(a), len(b)), 0, -1) if a[:i] == b[:i]), ""))
    return common >= 3 and common >= min(len(a), len(b)) - 1


def similarity(asked: str, known: str) -> float:
    """Dice similarity of two questions' content words, with loose word equality."""
    a, b = words(asked), words(known)
    if not a or not b:
        return 0.0
    shared = sum(any(_same(x, y) for y in b) for x in a)
    return 2 * min(shared, len(b)) / (len(a) + len(b))


def match(asked: str, questions: list[dict], allowed: set[int] | None = None) -> int | None:
    """The index of the question that `asked` means, in any language, or None. Only the indices
    in `allowed` (default: all) can be meant: the questions of the levels open so far."""
    allowed = set(range(len(questions))) if allowed is None else allowed
    number = _NUMBER.fullmatch(asked.strip())
    if number:  # as numbered by `kata mock questions`, from 1
        n = int(number.group(1))
        return n - 1 if n - 1 in allowed else None
    best, index = 0.0, None
    for i, question in enumerate(questions):
        if i not in allowed:
            continue
        score = max(similarity(asked, question["ask"][lang]) for lang in LANGS)
        if score > best:
            best, index = score, i
    return index if best >= THRESHOLD else None
