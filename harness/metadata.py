"""A kata's metadata, read as one from its two files (their format: CONTRIBUTING.md, "`kata.toml`
and `interviewer.toml`"): `katas/<kata>/kata.toml`, what a candidate may read, and
`harness/suites/<kata>/interviewer.toml`, what they must earn.

`load` merges them into one dict, each question with its `answer`, for every reader (the docs
hooks, the meta-tests); `problems` says what a complete one lacks; `parse` turns a complete one
into the typed `Spec` that the commands and screens read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from harness import tomlfile
from harness.lang import LANGS

HIDDEN = ("hints", "followups", "selfcheck", "rubric")  # interviewer.toml's tables, and `answers`
ID = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


def load(candidate: Path, hidden: Path) -> dict:
    """kata.toml with interviewer.toml folded in (none yet: nothing to fold, and problems() says
    what is missing); ValueError names a text found in both."""
    meta = tomlfile.read(candidate)
    secret = tomlfile.read(hidden) if hidden.is_file() else {}
    doubled = [key for key in HIDDEN if key in meta] + [
        f"questions[{i}].answer" for i, q in enumerate(meta.get("questions", [])) if "answer" in q]
    if doubled:
        raise ValueError(f"{candidate} holds interviewer-only text that belongs in {hidden}: "
                         f"{', '.join(doubled)}")
    answers = secret.pop("answers", {})  # tomlfile.read gives a fresh copy
    questions = [{"rules": [], **q} for q in meta.get("questions", [])]
    for q in questions:
        if q.get("id") in answers:
            q["answer"] = answers[q["id"]]
    merged = {**meta, **secret, "questions": questions}
    stray = sorted(set(answers) - {q.get("id") for q in questions})
    if stray:
        merged["stray_answers"] = stray  # reported by problems()
    return merged


def question_level(question: dict) -> int:
    """The level a question belongs to; problems() reports one without a level."""
    level = question.get("level")
    return level if isinstance(level, int) else 1


def bilingual(where: str, value: object, kind: type) -> list[str]:
    """What keeps `value` from being a non-empty `kind` in each language."""
    if not isinstance(value, dict):
        return [f"{where} must be a table with {' and '.join(LANGS)}"]
    return [f"{where}.{lang} is missing or empty" for lang in LANGS
            if not isinstance(value.get(lang), kind) or not value.get(lang)]


def problems(meta: dict, hint_categories: set[str] = frozenset()) -> list[str]:
    """Everything missing or malformed in one kata's metadata (empty when complete): what the CLI
    and the mock need (tests/test_katas.py checks what a live interview needs on top)."""
    found = [f"{key} must be a {kind.__name__}" for key, kind in (("module", str), ("minutes", int))
             if not isinstance(meta.get(key), kind)]
    found += bilingual("title", meta.get("title"), str)
    found += bilingual("summary", meta.get("summary"), str)
    for section, keys in (("levels", ("title", "prompt")), ("questions", ("ask", "answer")),
                          ("followups", ("question", "points"))):
        entries = meta.get(section, [])
        if not entries:
            found.append(f"[[{section}]] needs at least 1 entry")
        for i, entry in enumerate(entries):
            for key in keys:
                kind = list if key == "points" else str
                found += bilingual(f"{section}[{i}].{key}", entry.get(key), kind)
    found += _questions(meta)
    found += bilingual("selfcheck", meta.get("selfcheck"), list)
    hints = meta.get("hints", {})
    found += [f"[hints.{category}] is used by a hidden test but missing"
              for category in sorted(hint_categories - set(hints))]
    for category, texts in hints.items():
        found += bilingual(f"hints.{category}", texts, list)
        found += [f"hints.{category}.{lang} needs exactly two hints: a nudge, a pointer"
                  for lang in LANGS if len(texts.get(lang, [])) != 2]
    for dimension, anchors in meta.get("rubric", {}).items():
        found += bilingual(f"rubric.{dimension}", anchors, list)
        if any(len(anchors.get(lang, [])) != 4 for lang in LANGS):
            found.append(f"rubric.{dimension} needs four anchors per language, levels 1 to 4")
    return found


def _questions(meta: dict) -> list[str]:
    found, seen = [], set()
    levels = len(meta.get("levels", []))
    for i, q in enumerate(meta.get("questions", [])):
        qid = q.get("id")
        if not isinstance(qid, str) or not ID.fullmatch(qid):
            found.append(f"questions[{i}].id must look like some-question, got {qid!r}")
        elif qid in seen:
            found.append(f"questions[{i}].id {qid!r} is used twice")
        seen.add(qid)
        level = q.get("level")
        if level is not None and (not isinstance(level, int) or not 1 <= level <= levels):
            found.append(f"questions[{i}].level must be a level from 1 to {levels}, got {level!r}")
    return found + [f"[answers.{qid}] answers no question of kata.toml"
                    for qid in meta.get("stray_answers", [])]


T = TypeVar("T")


@dataclass(frozen=True)
class Text(Generic[T]):
    """One text in both languages; `text(lang)` is the one to show."""
    en: T
    zh: T

    def __call__(self, lang: str) -> T:
        return self.zh if lang == "zh-TW" else self.en

    @classmethod
    def of(cls, value: dict | None, empty: object = "") -> Text | None:
        if not isinstance(value, dict):
            return None
        return cls(value.get("en", empty), value.get("zh-TW", empty))


@dataclass(frozen=True)
class Level:
    n: int
    title: Text[str]
    prompt: Text[str]
    brief: Text[str] | None  # the question as an interviewer says it
    open: Text[str] | None  # what the prompt leaves open on purpose


@dataclass(frozen=True)
class Question:
    number: int  # from 1, as `kata mock questions` and the script number them
    id: str
    level: int
    ask: Text[str]
    answer: Text[str]


@dataclass(frozen=True)
class Followup:
    question: Text[str]
    points: Text[list[str]]


@dataclass(frozen=True)
class Spec:
    module: str
    minutes: int
    title: Text[str]
    levels: tuple[Level, ...]
    questions: tuple[Question, ...]
    followups: tuple[Followup, ...]
    hints: dict[str, Text[list[str]]]  # nudge, pointer
    selfcheck: Text[list[str]]
    rubric: dict[str, Text[list[str]]]  # own anchors, levels 1-4


def parse(meta: dict) -> Spec:
    """The typed metadata of a kata; `problems` says what a malformed one lacks."""
    levels = tuple(Level(n, Text.of(lv["title"]), Text.of(lv["prompt"]), Text.of(lv.get("brief")),
                         Text.of(lv.get("open")))
                   for n, lv in enumerate(meta["levels"], start=1))
    questions = tuple(Question(n, q.get("id", ""), question_level(q),
                               Text.of(q["ask"]), Text.of(q.get("answer", {})))
                      for n, q in enumerate(meta.get("questions", []), start=1))
    followups = tuple(Followup(Text.of(f["question"]), Text.of(f["points"], []))
                      for f in meta.get("followups", []))
    hints, rubric = ({key: Text.of(value, []) for key, value in meta.get(table, {}).items()}
                     for table in ("hints", "rubric"))
    return Spec(meta["module"], meta["minutes"], Text.of(meta["title"]), levels, questions,
                followups, hints, Text.of(meta.get("selfcheck"), []) or Text([], []), rubric)
