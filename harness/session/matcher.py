"""Hear a candidate's free-text question: which of the kata's clarifying questions it means.

The matchable items are the questions of kata.toml (`id`, `level`, `ask`) and the points each
level's prompt leaves open. Each is known by several phrasings in both languages, kept on the
interviewer's side in `harness/suites/<kata>/interviewer.toml`:

    [phrasings.<question id>]        en = [...], zh-TW = [...]
    [open_points.<point id>]         level = N, point.en = "...", point.zh-TW = "...",
                                     en = [...], zh-TW = [...]

A question and every phrasing become bags of terms: English words lightly stemmed, identifiers
kept whole and split (`window_ms` is `window_ms`, `window` and `ms`; `latest(m)` is `latest()`
and `latest`; `QueueFullError` is also `queue`, `full` and `error`), Chinese as character pairs,
and the field's words in both languages mapped onto one vocabulary (the tables of matcher.toml,
beside this file), so that a Chinese question meets English phrasings too.
Terms are weighted by TF-IDF over the kata's items; an item scores the cosine of its best
phrasing, blended with that of all its phrasings together. Then a margin rule: a clear best
answers, a near tie asks back, a weak or absent one is NONE. Deterministic, local, no model.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections import Counter
from dataclasses import dataclass
from enum import Enum
from itertools import takewhile
from pathlib import Path

from harness.catalog import LANGS


class Outcome(Enum):
    ANSWER = "answer"      # a clear match with a question of a level open now: answer it
    ASK_BACK = "ask_back"  # a near tie: "did you mean 6 or 9?" with these questions only
    LATER = "later"        # it belongs to a later level: say which (if any), and count nothing
    OPEN = "open"          # a point the prompt leaves open: "your choice, say which"
    PICK = "pick"          # "3" or "#3": a question picked from the list by its number
    NONE = "none"          # nothing close, or a question the notes never answer


@dataclass(frozen=True)
class Match:
    """What a question was heard as.

    `ids`: ANSWER, LATER and PICK one question id; ASK_BACK the one to three question ids to
    offer, best first; OPEN one open point's id; NONE none. `level`: the level of the matched
    item (for LATER, the level at which to ask again; a LATER without ids or level is a
    look-ahead no later entry is close to). `lang`: the language the question was asked in, for
    the answer and the "heard" line, whatever the session's language.
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


# The margin rule, chosen by `tools/matcher_eval.py --choose` on the tuned sets as first heard
# (tests/matcher/README.md): the most right, less 5 per confident wrong or undeferred later-level
# question and 0.5 per right one heard through an ask-back; at most 2 % wrong.
FLOOR = 0.20       # below this, nothing is close: NONE
SURE = 0.90        # a best question below this is only offered back, never answered
SURE_ELSE = 0.35   # the same for an open point or a later level's item: saying "your choice" or
                   # "later" gives no rule away, so it may be said from a weaker, clear match
CUE_FLOOR = 0.30   # a look-ahead question with a later item scoring this much is put off
CUE_SURE = 0.60    # and the later item named from this; with none that close, it is put off
                   # unless its best (a question of an open level) scores this
ALONE = 0.60       # a best scoring ALONE * SURE answers (or is said) too when the runner-up
                   # scores under ALONE * MARGIN of it: it stands alone, if its phrasings know
KNOWN = 0.50       # this share of the question's weight (else it may be about something else)
MARGIN = 0.90      # a runner-up scoring at least this fraction of the best makes a near tie
OFFER = 0.30       # in a near tie, what scores at least this fraction of the best is offered
BAG_SHARE = 0.50   # an item's score: 1 - BAG_SHARE of its best phrasing, the rest of all of them
UNKNOWN = 0.8      # a query word no item knows weighs this fraction of the rarest known word
PREFIX = 6         # an English word longer than this is also known by its first PREFIX letters
LEVEL_BONUS = 0.30  # most questions are about the level just opened: its items weigh this more
OPEN_WEIGHT = 0.85  # an open point weighs less: where a question covers it too, the question wins
MAX_OFFERED = 3
# Words by which a candidate says the question looks ahead (see Matcher.match).
# "later" as in "a later request" or "10 ms later" is not one, nor a `Future`.
_LATER_CUE = re.compile(r"\b(later levels?|(?<!a )(?<!the )(?<!ms )later|next level|"
                        r"in the future|future levels?|levels? (?P<n>[2-9])|eventually|upcoming|"
                        r"at some point|coming|going to (need|have|get)|will there be|"
                        r"down the (line|road))\b"
                        r"|(之後|以後|後面)的? ?(關|level)|下一關|第 ?(?P<z>[2-9二三四]) ?關"
                        r"|(之後|以後|後面|將來)會|^之後|將來|未來")
_NUMERALS = str.maketrans("二三四", "234")  # 第三關 is Level 3

# The words: stopwords, phrases, the field's synonyms in both languages, the asides.
WORDS = tomllib.loads((Path(__file__).parent / "matcher.toml").read_text(encoding="utf-8"))
STOPWORDS = set(WORDS["stopwords"].split())
ZH_FILLER = set(WORDS["zh_filler"])
# Questions no kata's notes answer (tooling, the signatures' own facts: WORDS["asides"]) are an
# item of their own, so that one of them is heard as NONE instead of as the nearest question.
ASIDE = "aside"

_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")
_CJK = re.compile(r"[\u3400-\u9fff]")
_CAMEL = re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b")
_TOKEN = re.compile(r"[a-z0-9_]+(?:\.[a-z0-9_]+)*(\()?")
_SENTENCE = re.compile(r"[^.?!;。？！；]+[.?!;。？！；]*|[.?!;。？！；]+")
_NUMBER = re.compile(r"#?\s*(\d+)")
_PHRASES = [tuple(pair) for pair in WORDS["phrases"]]


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
    for group in WORDS["synonyms"]:
        words = [stem(w) for w in group.split()]
        for w in words:
            table.setdefault(w, words[0])
    return table


CANON = _canon()
ZH_TERMS = {word: CANON.get(stem(english), stem(english))  # as the English side spells it
            for word, english in WORDS["zh_terms"].items()}


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
    text = _CAMEL.sub(lambda m: m.group(0) + " " + re.sub(r"(?<!^)([A-Z])", r" \1", m.group(0)),
                      text).lower()  # QueueFullError is also queue, full and error
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


def _texts(said: dict, phrasings: dict) -> tuple[str, ...]:
    """What the notes say (an ask, a point) and its phrasings, in every language."""
    return (*said.values(), *(t for lang in LANGS for t in phrasings.get(lang, [])))


def items(meta: dict) -> list[Item]:
    """The matchable items of a kata's metadata (kata.toml with interviewer.toml folded in)."""
    phrasings = meta.get("phrasings", {})
    return ([Item(q["id"], q.get("level", 1), False, _texts(q["ask"], phrasings.get(q["id"], {})))
             for q in meta.get("questions", [])]
            + [Item(pid, point["level"], True, _texts(point["point"], point))
               for pid, point in meta.get("open_points", {}).items()]
            + [Item(ASIDE, 0, False, _texts({}, WORDS["asides"]))])


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
        self.idf = {t: math.log(1 + len(self.items) / k) for t, k in df.items()}
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
            if item.level in (level, 0):  # an aside (level 0) is about every level
                score *= 1 + LEVEL_BONUS
            scored.append((score * OPEN_WEIGHT if item.is_open_point else score, item))
        return sorted(scored, key=lambda pair: -pair[0])

    def match(self, asked: str, level: int) -> Match:
        """What `asked` means when levels 1 to `level` are open.

        A number ("3", "#3") picks the question of that number in kata.toml's order (as
        `kata mock questions` lists them) when its level is open (PICK), else NONE. Otherwise:
        an aside (tooling, the signature) at the top from FLOOR is NONE. A question that looks ahead
        ("later", 「之後會」) is put off (LATER): to the level of the best later item among the
        close ones, or for the sentence that looks ahead, when it scores CUE_SURE; without a level
        when it scores CUE_FLOOR or nothing scores CUE_SURE, as an interviewer says nothing of a
        level before it opens. Else below FLOOR is NONE; a clear best (no runner-up within
        MARGIN, or one that stands ALONE and knows KNOWN of the question) answers from SURE, or
        says OPEN or LATER from SURE_ELSE; a later item above SURE atop a near tie is LATER; a
        near tie offers the open levels' questions among the close ones back (ASK_BACK), unless
        an aside is one of the two best.
        """
        lang = language(asked)
        if number := _NUMBER.fullmatch(asked.strip()):
            n = int(number.group(1))
            if 1 <= n <= len(self.numbered) and self.levels[self.numbered[n - 1]] <= level:
                qid = self.numbered[n - 1]
                return Match(Outcome.PICK, lang, (qid,), self.levels[qid])
            return Match(Outcome.NONE, lang)
        return self.decide(asked, level, self.scores(asked, level))

    def looks_ahead(self, asked: str, level: int) -> re.Match | None:
        """The first words by which `asked` looks past `level`: never at the last level, and
        "level 2" only while Level 2 is to come ("back to level 2" at Level 3 looks back)."""
        cues = (c for c in _LATER_CUE.finditer(asked.lower())
                if int((c.group("n") or c.group("z") or "9").translate(_NUMERALS)) > level)
        return next(cues, None) if any(item.level > level for item in self.items) else None

    def decide(self, asked: str, level: int, scored: list[tuple[float, Item]]) -> Match:
        """The margin rule of match() on the items as scores() ranks them."""
        lang = language(asked)
        (top_score, top), runner_up = scored[0], scored[1][0]
        cue = self.looks_ahead(asked, level)
        if (top_score < FLOOR and not cue) or (top.id == ASIDE and top_score >= FLOOR):
            return Match(Outcome.NONE, lang)
        close = list(takewhile(lambda pair: pair[0] >= OFFER * top_score, scored))
        later = [(score, item) for score, item in close if item.level > level]
        if cue:
            # and the best later item for the sentence that looks ahead, and for the rest
            ahead = later[:1]
            said = next((m.group(0) for m in _SENTENCE.finditer(asked) if m.end() > cue.start()),
                        asked)
            for part in (said, asked.replace(said, " ")):
                if part.strip() and part != asked:
                    ahead += [pair for pair in self.scores(part, level)
                              if pair[1].level > level][:1]
            score, item = max(ahead, key=lambda pair: pair[0], default=(0.0, top))
            if score >= CUE_SURE:
                return Match(Outcome.LATER, lang, (item.id,), item.level)
            if score >= CUE_FLOOR or top_score < CUE_SURE:  # no later entry surely settles it
                return Match(Outcome.LATER, lang)
        asks_now = top.level <= level and not top.is_open_point
        clear = (top_score >= (SURE if asks_now else SURE_ELSE) and runner_up < MARGIN * top_score
                 or top_score >= ALONE * SURE and runner_up < ALONE * MARGIN * top_score
                 and self.known(asked, top) >= KNOWN)
        if clear:
            if top.level > level:
                return Match(Outcome.LATER, lang, (top.id,), top.level)
            kind = Outcome.OPEN if top.is_open_point else Outcome.ANSWER
            return Match(kind, lang, (top.id,), top.level)
        if top_score < SURE and any(item.id == ASIDE for _, item in close[:2]):
            return Match(Outcome.NONE, lang)
        if top_score >= SURE and top.level > level:
            return Match(Outcome.LATER, lang, (top.id,), top.level)
        offered = tuple(item.id for _, item in close
                        if item.level <= level and not item.is_open_point and item.id != ASIDE)
        if not offered:
            return Match(Outcome.NONE, lang)
        return Match(Outcome.ASK_BACK, lang, offered[:MAX_OFFERED])

    def known(self, asked: str, item: Item) -> float:
        """The share of `asked`'s weight (its terms' squares) that `item`'s phrasings know."""
        query = _vector(Counter(terms(asked)), self.idf, self.unknown)
        return sum(w * w for t, w in query.items() if t in self.wholes[self.items.index(item)])

    def point(self, point_id: str, lang: str) -> str:
        """The text of an open point (an OPEN match's id) in `lang`, for "your choice: ..."."""
        return self.points[point_id][lang]
