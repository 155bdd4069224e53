"""A debugging kata's hints lead to its planted bugs.

For every hint category whose tests the pristine stub fails, the bugs behind those failures are
the planted mutants that, alone on the reference, fail one of them. The category's pointer (its
second hint, in each language) must name code where one of those bugs lives: an identifier of
the bug's edit, or the function that holds it. A pointer to correct code sends a learner looking
where there is nothing to find, however true the rule it states.
"""

from __future__ import annotations

import ast
import builtins
import functools
import keyword
import re

import forkserver
import pytest

from harness import catalog, mutants, signatures

DEBUG_KATAS = [k for k in catalog.all_katas() if any(m.planted for m in mutants.load(k))]
GENERIC = {"self", "np", "None", "True", "False", *dir(builtins), *keyword.kwlist}


def failed(run) -> set[tuple[str, str]]:
    return {(r.title, r.hint) for r in run.results if r.failed and r.level > 0}


def places(stub: str, mutant: mutants.Mutant) -> set[str]:
    """The names a pointer may use to lead to this bug: identifiers of its edits, and the
    functions of the stub that hold the planted code."""
    tree = ast.parse(stub)
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)]
    names: set[str] = set()
    for edit in mutant.edits:
        code = re.sub(r"#.*", "", edit.old + "\n" + edit.new)  # comments name no code
        names |= set(re.findall(r"[A-Za-z_]\w*", code))
        code = edit.new.strip()
        if code and code in stub:
            line = stub[: stub.index(code)].count("\n") + 1
            names |= {f.name for f in functions if f.lineno <= line <= f.end_lineno}
    return {n for n in names if len(n) > 2 and n not in GENERIC}


def names_in(pointer: str, candidates: set[str]) -> set[str]:
    return {n for n in candidates if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", pointer)}


@pytest.mark.parametrize("kata", DEBUG_KATAS, ids=lambda k: k.name)
def test_every_failing_hint_points_at_a_planted_bug(kata, tmp_path):
    stub_text = kata.pristine_stub()
    stub = tmp_path / f"{kata.module}.py"
    stub.write_text(stub_text, encoding="utf-8")
    run, output = forkserver.grade_collected(kata, str(stub), [], exitfirst=False)
    stub_fails = failed(run)
    assert stub_fails, output[-2000:]
    causes: dict[str, set[str]] = {}  # hint category -> the names of the bugs behind it
    for mutant in (m for m in mutants.load(kata) if m.planted):
        fails = set(failing_titles(kata, mutant))
        for hint in {h for t, h in stub_fails if t in fails}:
            causes.setdefault(hint, set()).add(mutant.name)
    by_name = {m.name: m for m in mutants.load(kata)}
    problems = []
    for hint in sorted({h for _, h in stub_fails}):
        bugs = causes.get(hint, set())
        if not bugs:
            problems.append(f"[hints.{hint}]: no planted bug alone fails its tests (masking?)")
            continue
        allowed = set().union(*(places(stub_text, by_name[b]) for b in bugs))
        for lang in catalog.LANGS:
            pointer = kata.meta["hints"][hint][lang][-1]
            if not names_in(pointer, allowed):
                problems.append(f"[hints.{hint}] {lang}: the pointer names none of the code of "
                                f"{', '.join(sorted(bugs))}, e.g. {', '.join(sorted(allowed)[:8])}")
    assert not problems, "\n".join(problems)


PLANTED = [pytest.param(k, m, id=f"{k.name}-{m.name}") for k in DEBUG_KATAS
           for m in mutants.load(k) if m.planted]
PRECISION = 0.8  # the share of a planted bug's failing tests that must carry its own category


@pytest.mark.parametrize("kata, mutant", PLANTED)
def test_a_planted_bug_alone_fails_tests_of_its_own_hint_category(kata, mutant):
    """Its own category is the hint of the first test it names (caught_by). The first failing
    line of its scorecard carries it, and so do at least 80 % of the hidden tests it fails: a
    debugging round is graded on finding the bug, and a hint that points elsewhere misleads."""
    hints = {r.title: r.hint for r in collected_hints(kata)}
    own = hints[mutant.caught_by[0]]
    failing = failing_titles(kata, mutant)
    assert failing
    assert hints[failing[0]] == own, f"the first failing line is [{hints[failing[0]]}], not [{own}]"
    share = sum(hints[t] == own for t in failing) / len(failing)
    others = sorted(f"{t} [{hints[t]}]" for t in failing if hints[t] != own)
    assert share >= PRECISION, (f"{share:.0%} of its {len(failing)} failing tests carry [{own}]; "
                                "the others:\n" + "\n".join(others))


def failing_titles(kata, mutant) -> list[str]:
    """The hidden titles a planted bug alone fails in the whole suite, one per scorecard line in
    its order (parametrized cases share a title and a line): its stored signature when current,
    else a grading of it."""
    if signatures.stale(kata) is None:
        stored = signatures.load(kata)
        return [t for t in stored.tests if t in stored.signatures[mutant.name]]
    run, _ = forkserver.grade_collected(kata, f"mutant:{mutant.name}", [], exitfirst=False)
    assert run.import_error is None, run.import_error
    return list(dict.fromkeys(r.title for r in run.results if r.failed and r.level > 0))


@functools.cache
def collected_hints(kata):
    run, output = forkserver.grade(kata, "solution", "--collect-only", hidden_only=True)
    assert run.results, output[-2000:]
    return run.results
