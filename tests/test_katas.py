"""Meta-tests over every kata: the reference passes, the stub and every mutant fail.

The in-process checks come first (anchors apply, mutants compile, titles exist), the gradings in
child processes after, so a drifted mutant is reported in seconds. Each grading is forked from a
warm grader, each mutant's from its kata's collected suite (both in tests/forkserver.py):
a thousand mutants would otherwise spend most of their time importing and collecting.
"""

from __future__ import annotations

import functools

import forkserver
import pytest

from harness import catalog, metadata, mutants, rules
from harness.interviewer import document, script, suite

KATAS = catalog.all_katas()


def _mutants(kata: catalog.Kata) -> list[mutants.Mutant]:
    try:
        return mutants.load(kata)
    except mutants.MutantError:  # reported by test_mutants_are_anchored_edits
        return []


MUTANTS = [pytest.param(k, m, id=f"{k.name}-{m.name}") for k in KATAS for m in _mutants(k)]


@functools.cache
def collected(kata: catalog.Kata) -> list[suite.HiddenTest]:
    """Every hidden test's level, title and hint category, as the grader collects them."""
    run, output = forkserver.grade(kata, "solution", "--collect-only", hidden_only=True)
    assert run.results, output[-2000:]
    return list(dict.fromkeys(suite.HiddenTest(r.level, r.title, r.hint) for r in run.results))


def hidden_tests(kata: catalog.Kata) -> dict[str, str]:
    """title -> hint category of every hidden test."""
    return {t.title: t.hint for t in collected(kata)}


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_metadata_is_complete_in_both_languages(kata):
    assert metadata.problems(kata.meta, set(hidden_tests(kata).values())) == []


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_mutants_are_anchored_edits(kata):
    found = mutants.load(kata)  # a malformed file raises, naming the mutant
    assert len(found) >= 6, f"{kata.name} needs at least 6 mutants, has {len(found)}"
    reference = mutants.reference(kata)
    titles = hidden_tests(kata)
    for mutant in found:
        text = mutants.source(kata, mutant)  # a drifted anchor raises, naming it
        compile(text, f"mutant:{mutant.name}", "exec")
        assert text != reference, f"mutant {mutant.name!r} changes nothing"
        unknown = [t for t in mutant.caught_by if t not in titles]
        assert not unknown, f"mutant {mutant.name!r} names no hidden test titled {unknown[0]!r}"


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_rule_map_covers_the_prompt_and_every_rule_has_a_mutant(kata):
    found = rules.problems(kata, rules.load(kata), mutants.load(kata))
    assert not found, f"{kata.name}'s rule map is incomplete:\n" + "\n".join(found)


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_briefs_and_questions_cover_every_rule_of_the_prompt(kata):
    """A live interview starts from each level's brief; the clarifying questions, each tied to
    a level, must recover every rule the brief leaves out (see interview_problems)."""
    where = rules.path(kata).relative_to(catalog.ROOT)
    found = interview_problems(kata.meta, rules.load(kata), str(where))
    assert not found, (f"{kata.name} is not ready for a live interview (briefs, questions and "
                       "answers: see CONTRIBUTING.md, `kata.toml`):\n" + "\n".join(found))


def interview_problems(meta: dict, rule_list: list[rules.Rule], rules_path: str) -> list[str]:
    """What a live interview needs beyond metadata.problems: a brief per level and a level per
    question, in both languages, and every rule of the prompt (kind `rule` or `open` in
    rules.toml) either stated by its level's brief or answered by a question of that level or an
    earlier one."""
    found = []
    levels = meta.get("levels", [])
    for n, level in enumerate(levels, start=1):
        if "brief" not in level:
            found.append(f"Level {n} has no brief yet (brief.en and brief.zh-TW in kata.toml)")
        else:
            found += metadata.bilingual(f"Level {n}: brief", level["brief"], str)
    for i, q in enumerate(meta.get("questions", [])):
        if not isinstance(q.get("level"), int):
            found.append(f"question {q.get('id', i + 1)!r} has no level (`level = N` in "
                         "kata.toml)")
    if not rule_list:
        return found + [f"no rule map yet ({rules_path}): which rules the briefs and questions "
                        "cover cannot be checked until it exists"]
    by_id = {r.id: r for r in rule_list}
    covered: dict[int, set[str]] = {}
    for n, level in enumerate(levels, start=1):
        for rule_id in level.get("brief_rules", []):
            rule = by_id.get(rule_id)
            if rule is None or rule.level != n:
                found.append(f"Level {n}: brief_rules names {rule_id!r}, which is no rule of "
                             f"Level {n} in {rules_path}")
        covered[n] = set(level.get("brief_rules", []))
    for q in meta.get("questions", []):
        for rule_id in q.get("rules", []):
            if rule_id not in by_id:
                found.append(f"question {q.get('id')!r} names an unknown rule {rule_id!r}")
        asked_at = metadata.question_level(q)
        for n in range(asked_at, len(levels) + 1):
            covered.setdefault(n, set()).update(q.get("rules", []))
    for rule in rule_list:
        if rule.kind in ("rule", "open") and rule.id not in covered.get(rule.level, set()):
            found.append(f"{rule.id} is neither in Level {rule.level}'s brief_rules nor answered "
                         f"by a question of Level {rule.level} or before: {rule.quote!r}")
    for n, level in enumerate(levels, start=1):
        if any(r.kind == "open" and r.level == n for r in rule_list):
            found += metadata.bilingual(f"Level {n}: open (the spec leaves points open on "
                                        "purpose)", level.get("open"), str)
    return found


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
@pytest.mark.parametrize("lang", catalog.LANGS)
def test_the_interviewer_script_renders_in_both_languages(kata, lang):
    built = script.build(kata, lang, collected(kata))  # a missing text raises KeyError here
    assert len(built.sheets) == kata.num_levels and built.followups and built.selfcheck
    assert not built.other_mistakes, [m.name for m in built.other_mistakes]
    page = document.page(document.script(built))
    assert "http" not in page and f'lang="{lang}"' in page


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_reference_solution_passes_everything(kata):
    run, output = forkserver.grade(kata, "solution")
    assert run.passed, output[-3000:]
    assert run.hidden_total > 0 and set(run.level_counts()) >= set(range(1, kata.num_levels + 1))


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_pristine_stub_fails(kata, tmp_path):
    stub = tmp_path / f"{kata.module}.py"
    stub.write_text(kata.pristine_stub(), encoding="utf-8")
    run, output = forkserver.grade(kata, str(stub), "-x")
    assert not run.passed and run.import_error is None, output[-3000:]


@pytest.mark.parametrize("kata, mutant", MUTANTS)
def test_mutant_is_caught_by_the_tests_it_names(kata, mutant):
    # A mistake only a time limit shows (time_limit) need not wait out the test's own limit.
    run, output = forkserver.grade_collected(kata, f"mutant:{mutant.name}", list(mutant.caught_by),
                                          timeout=mutant.time_limit)
    assert run.import_error is None, run.import_error
    caught = [r for r in run.results if r.failed and r.title in mutant.caught_by]
    assert caught, f"{mutant.name} survived {list(mutant.caught_by)}: {mutant.mistake['en']}"
