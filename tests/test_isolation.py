"""Level isolation: a Level k test calls only the API that Levels <= k open (isolation.py).

For every kata and every level k below its last, the reference is graded with everything a later
level adds (kata.toml's `api` per level) raising NotImplementedError; Level k must pass in full.
A test that fails here calls what a candidate at Level k has not been asked to write yet. (Levels
below k are each checked with more closed: closing less cannot fail them.)
"""

from __future__ import annotations

import functools

import forkserver
import isolation
import pytest

from harness import catalog

KATAS = catalog.all_katas()
CASES = [pytest.param(k, lvl, id=f"{k.name}-L{lvl}") for k in KATAS
         for lvl in range(1, k.num_levels)]


@functools.cache
def titles(kata: catalog.Kata) -> dict[str, int]:
    """Every hidden test title -> its level, as the grader collects them."""
    run, output = forkserver.grade(kata, "solution", "--collect-only", hidden_only=True)
    assert run.results, output[-2000:]
    return {r.title: r.level for r in run.results}


def test_closed_names_methods_and_parameters_raise_not_implemented_only_for_the_caller():
    paged = catalog.get("paged_kv_cache")
    names = isolation.closed(paged.solution_path, ["BlockManager.fork", "BlockManager.ref_count",
                                                   "BlockManager(prefix_caching)"])
    bm = names["BlockManager"](4, 2)  # a parameter left out is no call of it
    bm.allocate("a", [1, 2, 3])
    bm.free("a")  # the reference's own use of what is closed passes through
    for call in (lambda: bm.fork("a", "b"), lambda: bm.ref_count(0),
                 lambda: names["BlockManager"](4, 2, prefix_caching=True)):
        with pytest.raises(NotImplementedError, match="opened by a later level"):
            call()
    auto = catalog.get("queue_autoscaler")
    scaler = isolation.closed(auto.solution_path, ["QueueAutoscaler.panicking"])
    with pytest.raises(NotImplementedError):
        assert scaler["QueueAutoscaler"](target=2, max_replicas=4).panicking  # a property
    with pytest.raises(ValueError, match="names nothing"):
        isolation.closed(auto.solution_path, ["QueueAutoscaler.no_such_method"])


@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_every_level_names_the_api_it_adds_and_each_name_is_the_references(kata):
    for level in range(1, kata.num_levels + 1):
        entries = isolation.api(kata, level)
        assert level > 1 or entries, f"{kata.name}: Level 1 names no api in kata.toml"
        isolation.closed(kata.solution_path, entries)  # an entry that names nothing raises


@pytest.mark.parametrize("kata, level", CASES)
def test_a_level_passes_with_every_later_level_unwritten(kata, level, tmp_path):
    graded = tmp_path / f"{kata.module}.py"
    graded.write_text(isolation.wrapper(kata, level), encoding="utf-8")
    wanted = [t for t, lvl in titles(kata).items() if lvl == level]
    run, output = forkserver.grade_collected(kata, str(graded), wanted, exitfirst=False)
    assert run.import_error is None, run.import_error
    failed = [f"Level {r.level} · {r.title} — {r.verdict}" for r in run.results if r.failed]
    assert not failed, (f"{kata.name}: with Levels > {level} unwritten "
                        f"({', '.join(isolation.later(kata, level))}):\n" + "\n".join(failed))
