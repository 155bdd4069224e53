"""Hidden tests check only the wording a prompt pins (issue 18.15)."""

from __future__ import annotations

from harness import catalog, grading

SYNC = catalog.get("sync_batch_scheduler")
# The prompt: for `None`, the message must "say so" — in the learner's own words.
NONE_LABEL = 'got = "None" if responses is None else f"{len(responses)} responses"'
OWN_WORDS = 'got = "nothing" if responses is None else f"{len(responses)} responses"'


def test_a_wrong_count_message_in_the_learners_own_words_passes(tmp_path):
    code = SYNC.solution_path.read_text(encoding="utf-8")
    assert code.count(NONE_LABEL) == 1, "the reference's wording moved; update this test"
    path = tmp_path / f"{SYNC.module}.py"
    path.write_text(code.replace(NONE_LABEL, OWN_WORDS), encoding="utf-8")
    run, output = grading.grade(SYNC, str(path), "-k", "test_wrong_response_count",
                                hidden_only=True)
    cases = [r for r in run.results if r.outcome != "skipped"]
    assert len(cases) == 3 and all(r.outcome == "passed" for r in cases), output[-3000:]
