"""Score a question matcher on the evaluation set in tests/matcher/ (see its README.md).

    python tools/matcher_eval.py                 # the matcher of harness/session/matcher.py
    python tools/matcher_eval.py --before        # today's word-overlap matcher (harness/mock/ask)
    python tools/matcher_eval.py --show          # also every tuning question not right
    python tools/matcher_eval.py --time          # also how long indexing and matching take
    python tools/matcher_eval.py --loo           # leave-one-phrasing-out, for every kata
    python tools/matcher_eval.py --cross         # the margin rule tuned on half the katas

Each question is right, asked back (an offer that misses the right entry), wrong (a confident
answer, deferral or "your choice" that is not right) or no answer, per kata and per split: tuned
(the first set's held_out = false), held out (its held_out = true), and one split per subfolder
of tests/matcher/ (see tests/matcher/README.md). --show never lists a question of an untuned
split, so that they stay unseen.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness import catalog  # noqa: E402
from harness.session import matcher as matcher_module  # noqa: E402
from harness.session.matcher import ASIDE, Match, Matcher, Outcome, _vector, terms  # noqa: E402

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


def _folder_split(folder: Path) -> tuple[str, bool]:
    """(the split's name, whether it is tuned) of a subfolder of tests/matcher/."""
    settings = folder / "split.toml"
    found = tomllib.loads(settings.read_text(encoding="utf-8")) if settings.exists() else {}
    return found.get("name", folder.name), bool(found.get("tuned", False))


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
                name, tuned = (HELD_OUT, False) if q["held_out"] else (TUNED, True)
            else:
                name, tuned = split
            found.append(Case(path.stem, q["text"], q["level"], tuple(q["label"]), name,
                              not tuned))
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


def run(old: bool = False) -> tuple[dict[tuple[str, str], Counter], list[str]]:
    """(counts by (kata, split), the tuning questions not right with what they were heard as)."""
    counts: dict[tuple[str, bool], Counter] = {}
    misses = []
    heard_by: dict[str, object] = {}
    for case in cases():
        meta = catalog.get(case.kata).meta
        if case.kata not in heard_by:
            heard_by[case.kata] = before(meta) if old else Matcher(meta).match
        levels = {q["id"]: q.get("level", 1) for q in meta["questions"]}
        heard = heard_by[case.kata](case.text, case.level)
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
        matcher = Matcher(kata.meta)
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


# The margin rule's constants and the values --cross tries for each.
GRID = {"FLOOR": (0.15, 0.2, 0.25), "SURE": (0.6, 0.7, 0.75), "SURE_ELSE": (0.35, 0.4),
        "MARGIN": (0.8, 0.9), "OFFER": (0.4,), "CUE_FLOOR": (0.3, 0.4), "CUE_SURE": (0.4, 0.5),
        "ALONE": (0.6, 0.8, 1.0)}
WRONG_COST = 5     # a confident wrong hearing costs this many right ones: the bar allows 2 %
CONFIRM_COST = 0.2  # a right one heard through an ask-back costs this much: the candidate confirms
UNDEFERRED = "later-level, not deferred"  # the bar wants every one deferred: it costs as a wrong


def _heard_rows(chosen: list[Case]) -> list[tuple[Case, Matcher, list, dict[str, int]]]:
    """Each case with its kata's matcher and its items as scored (the rule is applied later)."""
    matchers, rows = {}, []
    for case in chosen:
        meta = catalog.get(case.kata).meta
        matcher = matchers.setdefault(case.kata, Matcher(meta))
        levels = {q["id"]: q.get("level", 1) for q in meta["questions"]}
        rows.append((case, matcher, matcher.scores(case.text, case.level), levels))
    return rows


def _apply(rows: list, constants: dict[str, float]) -> Counter:
    """The kinds of the rows' hearings under the margin rule with these constants."""
    saved = {name: getattr(matcher_module, name) for name in constants}
    for name, value in constants.items():
        setattr(matcher_module, name, value)
    try:
        found = Counter()
        for case, matcher, scored, levels in rows:
            heard = matcher.decide(case.text, case.level, scored)
            found[kind := judge(case, heard, levels)] += 1
            found[OFFERED] += kind == "right" and heard.outcome is Outcome.ASK_BACK
            found[UNDEFERRED] += (expected(case, levels) is Outcome.LATER
                                  and heard.outcome is not Outcome.LATER)
        return found
    finally:
        for name, value in saved.items():
            setattr(matcher_module, name, value)


def _tune(rows: list) -> dict[str, float]:
    """The grid's constants with the most right, less WRONG_COST per wrong or undeferred
    later-level question and CONFIRM_COST per right one heard through an ask-back."""
    def gain(constants: dict[str, float]) -> float:
        c = _apply(rows, constants)
        return (c["right"] - WRONG_COST * (c["wrong"] + c[UNDEFERRED])
                - CONFIRM_COST * c[OFFERED])

    grid = [dict(zip(GRID, values, strict=True)) for values in itertools.product(*GRID.values())]
    return max(grid, key=gain)


def cross_check() -> str:
    """The margin rule's constants tuned on the tuned questions of one group of katas (the first
    set's, or the other tuned folders'), scored on the other group's, and the other way round;
    beside each, the score with the constants of harness/session/matcher.py."""
    tuned = [case for case in cases() if not case.held_out]
    first = {case.kata for case in tuned if case.split == TUNED}
    groups = {"first set": [c for c in tuned if c.kata in first],
              "other tuned": [c for c in tuned if c.kata not in first]}
    current = {name: getattr(matcher_module, name) for name in GRID}
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
    parser.add_argument("--loo", action="store_true", help="leave-one-phrasing-out, all katas")
    parser.add_argument("--cross", action="store_true", help="tune on some katas, score the rest")
    args = parser.parse_args()
    counts, misses = run(old=args.before)
    print(table(counts))
    if args.show:
        print("\n".join(misses))
    if args.time:
        print(timing())
    if args.loo:
        print(leave_one_out())
    if args.cross:
        print(cross_check())


if __name__ == "__main__":
    main()
