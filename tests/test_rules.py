"""Rule maps: quotes anchored in the prompt, full coverage, a mutant per rule, and their views."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness import catalog, mutants, rules
from harness.cli import app
from harness.store import Store

# The maintainers' mutation script, outside the package: its table's "rules covered" column.
spec = importlib.util.spec_from_file_location("tools_mutation",
                                              catalog.ROOT / "tools" / "mutation.py")
mutation = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # for its dataclasses
spec.loader.exec_module(mutation)

PROMPT = """
Write `f(x)`. It returns *twice* x.

```python
def f(x): ...   # code is exempt
```
Negative x raises `ValueError`. Messages are left open.
"""


@dataclass
class FakeKata:
    name: str = "fake"
    prompts: list[str] = field(default_factory=lambda: [PROMPT])
    suite_dir: Path = Path("suites/fake")

    @property
    def meta(self) -> dict:
        return {"levels": [{"prompt": {"en": p}} for p in self.prompts]}

    @property
    def num_levels(self) -> int:
        return len(self.prompts)


def mutant(name: str, *rule_ids: str) -> mutants.Mutant:
    return mutants.Mutant(name, {}, ("t",), (mutants.Edit("a", "b"),), rules=rule_ids)


COMPLETE = [
    rules.Rule("L1.api", "Write `f(x)`.", "context", "the signature every test calls"),
    rules.Rule("L1.doubles", "It returns *twice* x."),
    rules.Rule("L1.negative-raises", "Negative x raises `ValueError`."),
    rules.Rule("L1.messages", "Messages are left open.", "open"),
]
MUTANTS = [mutant("adds_one", "L1.doubles"), mutant("accepts_negative", "L1.negative-raises")]


def test_a_complete_map_has_no_problems_and_counts_its_rules():
    assert rules.problems(FakeKata(), COMPLETE, MUTANTS) == []
    assert rules.covered(COMPLETE, MUTANTS) == (2, 2)


def test_words_no_quote_covers_are_named_in_runs_and_fenced_code_is_exempt():
    text = rules.normalise(PROMPT)
    assert rules.uncovered(text, ["It returns *twice* x."]) == [
        "Write f x", "Negative x raises ValueError Messages are left open"]


def test_a_quote_must_occur_exactly_once_in_its_own_levels_prompt():
    moved = [*COMPLETE[:3], rules.Rule("L1.messages", "Messages are left closed.", "open")]
    [problem, gap] = rules.problems(FakeKata(), moved, MUTANTS)
    assert problem.startswith("L1.messages: the quote does not occur in the Level 1 prompt")
    assert gap == "Level 1: no rule quotes 'Messages are left open'"
    twice = [*COMPLETE, rules.Rule("L1.x", "x")]
    assert any("occurs 5 times" in p for p in rules.problems(FakeKata(), twice, MUTANTS))
    wrong_level = [*COMPLETE, rules.Rule("L2.doubles-again", "It returns *twice* x.")]
    assert "L2.doubles-again: fake has no Level 2" in rules.problems(FakeKata(), wrong_level,
                                                                   MUTANTS)


def test_every_rule_needs_a_mutant_and_every_mutant_a_known_rule():
    found = rules.problems(FakeKata(), COMPLETE, [MUTANTS[0], mutant("stray", "L1.nope"),
                                                  mutant("silent")])
    assert found == ["mutant 'stray' names an unknown rule 'L1.nope'",
                     "mutant 'silent' names no rule it breaks",
                     "L1.negative-raises has no mutant: no test is shown to check "
                     "'Negative x raises `ValueError`.'"]
    assert rules.covered(COMPLETE, [MUTANTS[0]]) == (1, 2)


def test_open_and_context_quotes_take_no_mutant():
    found = rules.problems(FakeKata(), COMPLETE, [*MUTANTS, mutant("msg", "L1.messages")])
    assert found == ["L1.messages is open, yet mutants break it: msg"]


@pytest.mark.parametrize("table, error", [
    ({"id": "tie", "quote": "q"}, "`id` must look like L1.some-rule"),
    ({"id": "L1.a", "quote": " "}, "needs a `quote`"),
    ({"id": "L1.a", "quote": "q", "kind": "maybe"}, "`kind` must be one of"),
    ({"id": "L1.a", "quote": "q", "kind": "context"}, "a context quote needs `why`"),
])
def test_a_malformed_rule_is_named(tmp_path, monkeypatch, table, error):
    kata = FakeKata(suite_dir=tmp_path)
    body = "".join(f"{k} = {v!r}\n" for k, v in table.items())
    (tmp_path / "rules.toml").write_text(f"[[rules]]\n{body}", encoding="utf-8")
    with pytest.raises(rules.RuleError, match=error):
        rules.load(kata)


def test_a_missing_map_is_one_problem(tmp_path):
    kata = FakeKata(suite_dir=tmp_path)
    assert rules.load(kata) == []
    assert rules.problems(kata, [], []) == [f"fake has no rule map: write {tmp_path}/rules.toml"]


def test_the_mutation_table_shows_every_katas_rules_covered_as_they_are_now():
    table = (catalog.ROOT / "docs" / "benchmarks" / mutation.TABLE).read_text(encoding="utf-8")
    for kata in catalog.all_katas():
        row = next(line for line in table.splitlines() if line.startswith(f"| `{kata.name}` |"))
        assert row.rstrip(" |").endswith(mutation.rules_covered(kata)), (
            f"{kata.name}: run `python tools/mutation.py --rules-only` to refresh the table")


def test_the_rule_map_view_asks_first_then_names_rules_mutants_and_titles(monkeypatch):
    monkeypatch.delenv("KATAS_MAINTAINER", raising=False)
    kata = catalog.get("auc_roc")
    refused = CliRunner().invoke(app, ["mutants", kata.name, "--rules"], input="n\n")
    assert refused.exit_code == 1 and not Store().revealed(kata.name)
    shown = CliRunner().invoke(app, ["mutants", kata.name, "--rules"], input="y\n")
    assert shown.exit_code == 0 and Store().revealed(kata.name), shown.output
    first = next(r for r in rules.load(kata) if r.kind == "rule")
    breaker = next(m for m in mutants.load(kata) if first.id in m.rules)
    assert first.id in shown.output and breaker.name in shown.output
    assert breaker.caught_by[0][:40] in shown.output.replace("\n", " ")
