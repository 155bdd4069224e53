"""Hear a candidate's free-text question: which of the kata's clarifying questions it means.

The matchable items are the questions of kata.toml (`id`, `level`, `ask`) and the points each
level's prompt leaves open. Each is known by several phrasings in both languages, kept on the
interviewer's side in `harness/suites/<kata>/interviewer.toml`:

    [phrasings.<question id>]        en = [...], zh-TW = [...]
    [open_points.<point id>]         level = N, point.en = "...", point.zh-TW = "...",
                                     en = [...], zh-TW = [...]

A question and every phrasing become bags of terms: English words lightly stemmed, identifiers
kept whole and split (`window_ms` is `window_ms`, `window` and `ms`; `latest(m)` is `latest()`
and `latest`), Chinese as character pairs, and the field's words in both languages mapped onto
one vocabulary (`SYNONYMS`, `ZH_TERMS`), so that a Chinese question meets English phrasings too.
Terms are weighted by TF-IDF over the kata's items; an item scores the cosine of its best
phrasing, blended with that of all its phrasings together. Then a margin rule: a clear best
answers, a near tie asks back, a weak or absent one is NONE. Deterministic, local, no model.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from enum import Enum

from harness.catalog import LANGS


class Outcome(Enum):
    ANSWER = "answer"      # a clear match with a question of a level open now: answer it
    ASK_BACK = "ask_back"  # a near tie: "did you mean 6 or 9?" with these questions only
    LATER = "later"        # it belongs to a later level: say which, and count nothing
    OPEN = "open"          # a point the prompt leaves open: "your choice, say which"
    PICK = "pick"          # "3" or "#3": a question picked from the list by its number
    NONE = "none"          # nothing close, or a question the notes never answer


@dataclass(frozen=True)
class Match:
    """What a question was heard as.

    `ids`: ANSWER, LATER and PICK one question id; ASK_BACK the one to three question ids to
    offer, best first; OPEN one open point's id; NONE none. `level`: the level of the matched
    item (for LATER, the level at which to ask again). `lang`: the language the question was
    asked in, for the answer and the "heard" line, whatever the session's language.
    """

    outcome: Outcome
    lang: str
    ids: tuple[str, ...] = ()
    level: int | None = None


@dataclass(frozen=True)
class Item:
    """A matchable item: a question of kata.toml or a point a level leaves open."""

    id: str
    level: int
    is_open_point: bool
    phrasings: tuple[str, ...]


# The margin rule, chosen on the evaluation set's tuning half (tools/matcher_eval.py): the most
# right, none wrong, and of those the fewest ask-backs.
FLOOR = 0.20       # below this, nothing is close: NONE
SURE = 0.60        # a best match below this is only offered back, never answered
MARGIN = 0.80      # a runner-up scoring at least this fraction of the best makes a near tie
OFFER = 0.40       # in a near tie, what scores at least this fraction of the best is offered
BAG_SHARE = 0.50   # an item's score: 1 - BAG_SHARE of its best phrasing, the rest of all of them
UNKNOWN = 0.8      # a query word no item knows weighs this fraction of the rarest known word
PREFIX = 6         # an English word longer than this is also known by its first PREFIX letters
LEVEL_BONUS = 0.30  # most questions are about the level just opened: its items weigh this more
OPEN_WEIGHT = 0.85  # an open point weighs less: where a question covers it too, the question wins
MAX_OFFERED = 3
# The candidate says the question looks ahead: a later level's item among the close ones wins.
_LATER_CUE = re.compile(r"\b(later|next level|future level|levels? [2-9]|eventually|upcoming|"
                        r"will there be|down the (line|road))\b"
                        r"|(之後|以後|後面)的?關|下一關|之後會|將來")

STOPWORDS = set("""a an the is are was were be been being do does did doing should would could
can may might will shall must i we you it its it's they them my me our your us of to in on at for
with by from or and if so as what when which who whom how why there this that these those happen
happens happened any some about into then than just also ok okay right correct assume assuming
question quick one ever still really need needs want wants get gets got way kind sort like mean
means say said wondering wonder hi hello please thanks thank let's let me here where""".split())

# The field's words: every word of a group (a line and its indented continuation) stands for the
# group's first word. They are stemmed as the text is.
SYNONYMS = """
error raise raises raised throw throws thrown exception valueerror typeerror reject rejected
  invalid illegal bad wrong malformed
duplicate duplicated dup dupe twice reuse reused reusing again repeated repeat
late overdue violation violations violate miss missed misses breach lateness tardy
evict eviction evicted evicts
free freed release released releases deallocate dealloc
queue queued queues queueing queuing enqueue enqueued backlog pending waiting
send sent dispatch dispatched dispatches leave leaves fire fires flush emit go goes
deadline deadlines due
timer timeout alarm
batch batches batched batching
request requests req reqs
now time timestamp clock t
empty nothing zero-length
order ordering ordered sort sorted sorting fifo
tie ties tied tiebreak tie-break tiebreaker draw equal same-score
weight weights weighted
tenant tenants customer customers user users client clients
capacity slot slots seat seats room
count counts number counter tally
negative below-zero minus
nan not-a-number
infinite inf infinity
bool boolean true false
numpy np ndarray
float floats floating
int integer integers ints
return returns returned give gives output outputs yield yields
block blocks page pages
token tokens
prompt prompts
sequence sequences seq seqs
cache cached caching
hash hashes hashing hashed key keys
copy copies copied cow copy-on-write
fork forks forked forking clone branch
share shared sharing
window windows sliding
probability probabilities probs prob distribution
temperature temp
sample samples sampling sampled draw draws drawn
generator generators rng rngs seed random
reject rejection rejected
accept accepted acceptance accepts
draft drafts drafted
replica replicas instance instances pod pods server servers worker workers
scale scaling scaled autoscale autoscaler
start starts starting startup boot boots booting cold
ready
panic panicking
validate validation validates check checks checked checking verify
allowed allow ok accepted fine legal permitted
"""

# Chinese words of the field, onto the same vocabulary (found as substrings of the text).
ZH_TERMS = {
    "錯誤": "error", "例外": "error", "丟出": "error", "拋出": "error", "報錯": "error",
    "無效": "error", "不合法": "error", "非法": "error", "拒絕": "error",
    "重複": "duplicate", "兩次": "duplicate", "重用": "duplicate", "再用": "duplicate",
    "遲到": "late", "違約": "late", "逾時": "late", "超時": "late", "趕不上": "late",
    "驅逐": "evict", "淘汰": "evict", "釋放": "free", "歸還": "free",
    "佇列": "queue", "排隊": "queue", "等待": "queue", "隊列": "queue",
    "送出": "send", "出發": "send", "派送": "send", "發送": "send",
    "截止": "deadline", "期限": "deadline", "計時器": "timer", "時鐘": "now",
    "批次": "batch", "請求": "request", "順序": "order", "排序": "order", "先進先出": "order",
    "平手": "tie", "同分": "tie", "相同": "tie", "權重": "weight", "租戶": "tenant",
    "容量": "capacity", "名額": "capacity", "計數": "count", "數量": "count", "個數": "count",
    "負數": "negative", "負的": "negative", "布林": "bool", "浮點": "float", "整數": "int",
    "回傳": "return", "傳回": "return", "區塊": "block", "記憶體": "memory",
    "序列": "sequence", "快取": "cache", "雜湊": "hash", "複製": "copy", "共用": "share",
    "共享": "share", "視窗": "window", "窗口": "window", "機率": "probability",
    "溫度": "temperature", "抽樣": "sample", "取樣": "sample", "採樣": "sample",
    "亂數": "generator", "產生器": "generator", "接受": "accept", "草稿": "draft",
    "副本": "replica", "擴展": "scale", "縮減": "scale", "擴縮": "scale", "啟動": "start",
    "冷啟動": "start", "就緒": "ready", "恐慌": "panic", "驗證": "validate", "檢查": "validate",
    "允許": "allowed", "空的": "empty", "為空": "empty", "執行中": "inflight",
}
ZH_FILLER = set("的了嗎呢吧啊呀嘛喔哦是")  # a character pair holding one of these says little

# Questions no kata's notes answer (tooling, the signatures' own facts): an item of their own, so
# that one of them is heard as NONE instead of as the nearest question.
ASIDES = {
    "en": ["can I use numpy or scipy or pandas or polars or another library?",
           "is a third-party package allowed, or the standard library only?",
           "what should the exception class subclass, which builtin exception does it extend?",
           "which base class does the custom error inherit from?",
           "is it a method or a property?",
           "what is the signature, the argument names and their order?",
           "what type is the argument, a dict or a list or a str, any hashable?",
           "is it an argument of the constructor or of the method?",
           "what are the output column names, and in which order does the tuple come?",
           "what does the name stand for, what is it in the signature?",
           "which Python version, can I use type hints, can I add helper functions?",
           "how fast does it need to be in production, what speedup do we get?"],
    "zh-TW": ["可以用 numpy、scipy 或其他套件嗎？", "只能用標準函式庫嗎？",
              "這個例外要繼承哪個 exception？", "自訂的例外類別要繼承什麼？",
              "這是方法還是 property？",
              "函式簽名和參數順序是什麼？",
              "參數的型別是 dict 還是 list？", "這是建構子的參數還是方法的參數？",
              "輸出欄位的名稱是什麼？回傳的 tuple 順序是什麼？",
              "可以加 helper 函式嗎？用哪個 Python 版本？"],
}
ASIDE = "aside"

_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")
_CJK = re.compile(r"[\u3400-\u9fff]")
_TOKEN = re.compile(r"[a-z0-9_]+(?:\.[a-z0-9_]+)*(\()?")
_NUMBER = re.compile(r"#?\s*(\d+)")
_PHRASES = (("in flight", "inflight"), ("in-flight", "inflight"), ("same id", "duplicate id"),
            ("already used", "duplicate"), ("goes back", "backwards"), ("go back", "backwards"),
            ("scikit-learn", "sklearn"), ("least recently used", "lru"),
            ("top-k", "top_k"), ("top-p", "top_p"), ("min-p", "min_p"))


def stem(word: str) -> str:
    """A light English stemmer: enough that plurals, tenses and -ion forms meet."""
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ion", ""), ("ed", ""),
                         ("es", ""), ("s", ""), ("ly", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)] + keep
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def _canon() -> dict[str, str]:
    table: dict[str, str] = {}
    for group in re.split(r"\n(?! )", SYNONYMS.strip()):
        words = [stem(w) for w in group.split()]
        for w in words:
            table.setdefault(w, words[0])
    return table


CANON = _canon()


def language(text: str) -> str:
    """zh-TW when the text holds Chinese (two characters or more), else en."""
    return "zh-TW" if len(_CJK.findall(text)) >= 2 else "en"


def _english(text: str) -> list[str]:
    terms = []
    for match in _TOKEN.finditer(text):
        token, call = match.group(0).rstrip("("), match.group(1)
        parts = [p for p in re.split(r"[._]", token) if p]
        if call:
            terms.append(token + "()")
        if len(parts) > 1 or any(c.isdigit() for c in token) and not token.isdigit():
            terms.append(token)  # an identifier, whole
        for part in parts:
            if part in STOPWORDS:
                continue
            word = stem(part) if not part.isdigit() else part
            terms.append(CANON.get(word, word))
            if len(part) > PREFIX and word not in CANON:  # a typo or a rarer form still meets
                terms.append(part[:PREFIX] + "~")
    return terms


def _chinese(run: str) -> list[str]:
    pairs = [run[i:i + 2] for i in range(len(run) - 1)] if len(run) > 1 else [run]
    return [p for p in pairs if not set(p) & ZH_FILLER]


def terms(text: str) -> list[str]:
    """The terms of a text: English words and identifiers, Chinese character pairs, and the
    field's vocabulary that either language names."""
    text = text.lower()
    for phrase, replacement in _PHRASES:
        text = text.replace(phrase, replacement)
    found = [canon for word, canon in ZH_TERMS.items() if word in text]
    for run in _CJK_RUN.findall(text):
        found += _chinese(run)
    return found + _english(_CJK_RUN.sub(" ", text))


def _vector(bag: Counter, idf: dict[str, float], unknown: float) -> dict[str, float]:
    vec = {t: (1 + math.log(n)) * idf.get(t, unknown) for t, n in bag.items()}
    norm = math.sqrt(sum(w * w for w in vec.values())) or 1.0
    return {t: w / norm for t, w in vec.items()}


def _cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(w * b.get(t, 0.0) for t, w in a.items())


def items(meta: dict) -> list[Item]:
    """The matchable items of a kata's metadata (kata.toml with interviewer.toml folded in)."""
    phrasings = meta.get("phrasings", {})
    found = []
    for q in meta.get("questions", []):
        extra = phrasings.get(q["id"], {})
        texts = [q["ask"][lang] for lang in LANGS] + [t for lang in LANGS
                                                      for t in extra.get(lang, [])]
        found.append(Item(q["id"], q.get("level", 1), False, tuple(texts)))
    for pid, point in meta.get("open_points", {}).items():
        texts = [point["point"][lang] for lang in LANGS] + [t for lang in LANGS
                                                            for t in point.get(lang, [])]
        found.append(Item(pid, point["level"], True, tuple(texts)))
    found.append(Item(ASIDE, 1, False, tuple(t for lang in LANGS for t in ASIDES[lang])))
    return found


class Matcher:
    """The questions and open points of one kata, indexed for matching."""

    def __init__(self, meta: dict):
        self.items = items(meta)
        self.numbered = [q["id"] for q in meta.get("questions", [])]  # as `kata mock questions`
        self.levels = {q["id"]: q.get("level", 1) for q in meta.get("questions", [])}
        self.points = {pid: p["point"] for pid, p in meta.get("open_points", {}).items()}
        bags = [[Counter(terms(text)) for text in item.phrasings] for item in self.items]
        whole = [sum(item_bags, Counter()) for item_bags in bags]
        df = Counter(t for bag in whole for t in bag)
        n = len(self.items)
        self.idf = {t: math.log(1 + n / k) for t, k in df.items()}
        self.unknown = UNKNOWN * max(self.idf.values(), default=1.0)
        self.vectors = [[_vector(b, self.idf, self.unknown) for b in item_bags]
                        for item_bags in bags]
        self.wholes = [_vector(b, self.idf, self.unknown) for b in whole]

    def scores(self, asked: str, level: int) -> list[tuple[float, Item]]:
        """Every item with its score for `asked` at `level`, best first (ties by file order)."""
        query = _vector(Counter(terms(asked)), self.idf, self.unknown)
        scored = []
        for item, vectors, whole in zip(self.items, self.vectors, self.wholes, strict=True):
            best = max(_cosine(query, v) for v in vectors)
            score = (1 - BAG_SHARE) * best + BAG_SHARE * _cosine(query, whole)
            if item.level == level:
                score *= 1 + LEVEL_BONUS
            scored.append((score * OPEN_WEIGHT if item.is_open_point else score, item))
        return sorted(scored, key=lambda pair: -pair[0])

    def match(self, asked: str, level: int) -> Match:
        """What `asked` means when levels 1 to `level` are open.

        A number ("3", "#3") picks the question of that number in kata.toml's order (as
        `kata mock questions` lists them) when its level is open (PICK), else NONE. Otherwise
        the best item decides only when it is clear, above SURE with no runner-up within MARGIN
        of it: a question of an open level is ANSWER, an open point OPEN, either of a later
        level LATER. A later item above SURE at the top of a near tie is LATER too, and so is a
        later item among the close ones when the candidate says the question looks ahead
        ("later", "next level", 「下一關」): what a later level settles is never offered as open
        or answered by an earlier level's question. A near tie or a weak best offers
        the open levels' questions among the close ones back (ASK_BACK), best first. Nothing
        above FLOOR, an aside (tooling, the signature) at the top, or nothing to offer is NONE.
        """
        lang = language(asked)
        number = _NUMBER.fullmatch(asked.strip())
        if number:
            n = int(number.group(1))
            if 1 <= n <= len(self.numbered) and self.levels[self.numbered[n - 1]] <= level:
                qid = self.numbered[n - 1]
                return Match(Outcome.PICK, lang, (qid,), self.levels[qid])
            return Match(Outcome.NONE, lang)
        scored = self.scores(asked, level)
        (top_score, top), runner_up = scored[0], scored[1][0]
        if top_score < FLOOR or top.id == ASIDE:
            return Match(Outcome.NONE, lang)
        if top_score >= SURE and runner_up < MARGIN * top_score:
            if top.level > level:
                return Match(Outcome.LATER, lang, (top.id,), top.level)
            kind = Outcome.OPEN if top.is_open_point else Outcome.ANSWER
            return Match(kind, lang, (top.id,), top.level)
        close = [item for score, item in scored if score >= OFFER * top_score]
        if top_score < SURE and any(item.id == ASIDE for item in close[:2]):
            return Match(Outcome.NONE, lang)
        later = [item for item in close if item.level > level]
        ahead = _LATER_CUE.search(asked.lower()) is not None
        if later and (ahead or top_score >= SURE and top in later):
            return Match(Outcome.LATER, lang, (later[0].id,), later[0].level)
        offered = tuple(i.id for i in close
                        if i.level <= level and not i.is_open_point and i.id != ASIDE)
        if not offered:
            return Match(Outcome.NONE, lang)
        return Match(Outcome.ASK_BACK, lang, offered[:MAX_OFFERED])

    def point(self, point_id: str, lang: str) -> str:
        """The text of an open point (an OPEN match's id) in `lang`, for "your choice: ..."."""
        return self.points[point_id][lang]
