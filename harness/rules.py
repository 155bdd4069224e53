"""Rule maps: every sentence of a kata's prompt, quoted, with the mutants that break it.

`harness/suites/<kata>/rules.toml` (its format: CONTRIBUTING.md, "Rule maps") quotes each rule of
the English prompt under an id `L<level>.<slug>`; kind `open` (left open on purpose) and `context`
(nothing to test; `why` says so) take no mutant. The quotes cover every word of the prompt
outside fenced code, so a complete map, each mutant caught by the tests it names, proves every
rule of the prompt tested.
"""

from __future__ import annotations

import itertools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from harness import tomlfile
from harness.catalog import Kata

KINDS = ("rule", "open", "context")
ID = re.compile(r"L(\d+)\.[a-z0-9]+(-[a-z0-9]+)*")
FENCE = re.compile(r"```.*?```", re.DOTALL)
WORD = re.compile(r"\w+")


class RuleError(ValueError):
    """A rules.toml that is malformed."""


@dataclass(frozen=True)
class Rule:
    id: str
    quote: str
    kind: str = "rule"
    why: str = ""

    @property
    def level(self) -> int:
        return int(self.id[1:self.id.index(".")])


def path(kata: Kata) -> Path:
    return kata.suite_dir / "rules.toml"


def normalise(text: str) -> str:
    return " ".join(text.split())


def load(kata: Kata) -> list[Rule]:
    """The kata's rules in file order; an empty list when it has no rule map yet."""
    try:
        tables = tomlfile.read(path(kata)).get("rules", [])
    except FileNotFoundError:
        return []
    except tomllib.TOMLDecodeError as exc:
        raise RuleError(f"{path(kata)} is not valid TOML: {exc}") from exc
    rules = []
    for i, t in enumerate(tables):
        where = f"{kata.name}: rule {t.get('id', f'#{i + 1}')!r}"
        if not isinstance(t.get("id"), str) or not ID.fullmatch(t["id"]):
            raise RuleError(f"{where}: `id` must look like L1.some-rule")
        if any(r.id == t["id"] for r in rules):
            raise RuleError(f"{where}: the id is used twice")
        if not isinstance(t.get("quote"), str) or not t["quote"].strip():
            raise RuleError(f"{where}: needs a `quote` from the prompt")
        kind = t.get("kind", "rule")
        if kind not in KINDS:
            raise RuleError(f"{where}: `kind` must be one of {', '.join(KINDS)}, got {kind!r}")
        if kind == "context" and not str(t.get("why", "")).strip():
            raise RuleError(f"{where}: a context quote needs `why` (why nothing can test it)")
        rules.append(Rule(t["id"], normalise(t["quote"]), kind, t.get("why", "")))
    return rules


def prompt(kata: Kata, level: int) -> str:
    return normalise(kata.meta["levels"][level - 1]["prompt"]["en"])


def uncovered(text: str, quotes: list[str]) -> list[str]:
    """The runs of words in `text`, outside fenced code, that no quote covers."""
    covered = [False] * len(text)
    for fence in FENCE.finditer(text):
        covered[fence.start():fence.end()] = [True] * (fence.end() - fence.start())
    for quote in quotes:
        start = text.find(quote)
        if start >= 0:
            covered[start:start + len(quote)] = [True] * len(quote)
    words = [(w.group(), all(covered[w.start():w.end()])) for w in WORD.finditer(text)]
    runs = itertools.groupby(words, key=lambda word: word[1])
    return [" ".join(word for word, _ in run) for quoted, run in runs if not quoted]


def problems(kata: Kata, rules: list[Rule], mutants: list) -> list[str]:
    """Everything that keeps the rule map from proving every rule tested (empty when complete)."""
    if not rules:
        return [f"{kata.name} has no rule map: write {path(kata)}"]
    found = []
    for rule in rules:
        if not 1 <= rule.level <= kata.num_levels:
            found.append(f"{rule.id}: {kata.name} has no Level {rule.level}")
            continue
        count = prompt(kata, rule.level).count(rule.quote)
        if count != 1:
            where = "does not occur" if count == 0 else f"occurs {count} times"
            found.append(f"{rule.id}: the quote {where} in the Level {rule.level} prompt (it "
                         f"must occur exactly once): {rule.quote!r}")
    for level in range(1, kata.num_levels + 1):
        quotes = [r.quote for r in rules if r.level == level]
        for run in uncovered(prompt(kata, level), quotes):
            found.append(f"Level {level}: no rule quotes {run!r}")
    ids = {r.id for r in rules}
    for mutant in mutants:
        if not mutant.rules:
            found.append(f"mutant {mutant.name!r} names no rule it breaks")
        found += [f"mutant {mutant.name!r} names an unknown rule {rule_id!r}"
                  for rule_id in mutant.rules if rule_id not in ids]
    for rule in rules:
        breaking = [m.name for m in mutants if rule.id in m.rules]
        if rule.kind == "rule" and not breaking:
            found.append(f"{rule.id} has no mutant: no test is shown to check {rule.quote!r}")
        elif rule.kind != "rule" and breaking:
            found.append(f"{rule.id} is {rule.kind}, yet mutants break it: {', '.join(breaking)}")
    return found


def covered(rules: list[Rule], mutants: list) -> tuple[int, int]:
    """(rules broken by at least one mutant, rules) over the rules that are not open or context."""
    broken = {rule_id for m in mutants for rule_id in m.rules}
    testable = [r for r in rules if r.kind == "rule"]
    return sum(r.id in broken for r in testable), len(testable)
