"""The leak audit: nothing a candidate sees holds interviewer-only text, for every kata and both
languages. Interviewer-only: the answers, the hint ladders, the mistakes, the follow-ups and their
points, the self-check and the rubric's anchors, each unless the candidate's side (the prompts,
briefs, open points and questions) says it too. Seen by the candidate: every screen of a pair
session, and every file in `katas/<kata>/`, which sits beside the stub."""

from __future__ import annotations

import re

import pytest
from mockkit import kata, make_run

from harness import catalog, mutants
from harness.session import rubric

KATAS = catalog.all_katas()
SHORTEST = 12  # letters: a shorter text ("Yes.") says nothing by itself


def letters(text: str) -> str:
    """Only letters and digits: wrapping and Markdown change nothing else."""
    return re.sub(r"[\W_]+", "", text).lower()


def candidate_side(meta: dict, lang: str) -> str:
    texts = [level[key][lang] for level in meta["levels"] for key in ("prompt", "brief", "open")
             if key in level] + [q["ask"][lang] for q in meta["questions"]]
    return letters(" ".join(texts))


def secrets(k: catalog.Kata, lang: str) -> list[tuple[str, str]]:
    """(what, text) of every interviewer-only text of the kata in `lang`."""
    meta = k.meta
    found = [(f"the answer to {q['id']!r}", q["answer"][lang]) for q in meta["questions"]]
    found += [(f"hint {n} of [hints.{c}]", text) for c, hints in meta["hints"].items()
              for n, text in enumerate(hints[lang], start=1)]
    found += [(f"mistake {m.name!r}", m.mistake[lang]) for m in mutants.load(k)]
    for f in meta["followups"]:
        found += [("a follow-up", f["question"][lang])]
        found += [("a follow-up's point", p) for p in f["points"][lang]]
    found += [("the self-check", item) for item in meta["selfcheck"][lang]]
    found += [(f"an anchor of {d.id}", a) for d in rubric.dimensions() for a in d.anchors[lang]]
    found += [(f"[rubric.{d}] of the kata", a) for d, anchors in meta.get("rubric", {}).items()
              for a in anchors[lang]]
    said = candidate_side(meta, lang)
    return [(what, text) for what, text in found
            if len(letters(text)) >= SHORTEST and letters(text) not in said]


def leaks(k: catalog.Kata, lang: str, shown: str) -> list[str]:
    seen = letters(shown)
    return [f"{what}: {text!r}" for what, text in secrets(k, lang) if letters(text) in seen]


def fake_levels(k: catalog.Kata) -> dict[int, list[tuple[str, str]]]:
    """A failing hidden test per hint category, on every level."""
    categories = list(k.meta["hints"])
    return {n: [(f"hidden test {n}.{i}", c) for i, c in enumerate(categories)]
            for n in range(1, k.num_levels + 1)}


@pytest.mark.parametrize("lang", catalog.LANGS)
@pytest.mark.parametrize("k", KATAS, ids=lambda k: k.name)
def test_a_pair_sessions_screens_hold_no_interviewer_text(k, lang, work, clock, grader):
    levels = fake_levels(k)
    grader.runs += [make_run(set(), levels=levels, name=k.name)]
    grader.runs += [make_run(set(range(1, n + 1)), levels=levels, name=k.name)
                    for n in range(1, k.num_levels + 1)]
    questions = k.meta["questions"]
    outputs = [kata("mock", k.name, "--pair", "--file", str(work), "--lang", lang),
               kata("mock", "status"), kata("mock", "questions"),
               kata("mock", "ask", questions[0]["ask"][lang]), kata("mock", "ask", "1"),
               kata("mock", "hint"), kata("mock", "submit", "--hint"), kata("mock", "spec")]
    for _ in range(k.num_levels):
        clock.advance(60)
        outputs += [kata("mock", "submit"), kata("mock", "hint"), kata("mock", "spec")]
    outputs += [kata("mock", "scorecard"), kata("mock", "scorecard", "--lang", lang)]
    shown = "\n".join(r.output for r in outputs)
    assert outputs[0].exit_code == 0, outputs[0].output
    assert ("Every level passes" if lang == "en" else "每一關都通過") in shown  # all seen
    found = leaks(k, lang, shown)
    assert not found, f"{k.name} ({lang}): a pair session shows\n" + "\n".join(found)


@pytest.mark.parametrize("k", KATAS, ids=lambda k: k.name)
def test_the_candidates_folder_holds_no_interviewer_text(k):
    found = []
    for path in sorted(p for p in k.folder.rglob("*") if p.is_file()):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # not text: nothing a person reads
            continue
        for lang in catalog.LANGS:
            found += [f"{path.relative_to(catalog.ROOT)} holds {leak}"
                      for leak in leaks(k, lang, text)]
    assert not found, (f"{k.name}: interviewer-only text beside the stub (it belongs in "
                       f"harness/suites/{k.name}/interviewer.toml):\n" + "\n".join(found))
