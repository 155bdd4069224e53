"""A pair session on one machine, driven through both roles: the candidate's `kata mock` and
`kata` commands and the interviewer's `kata interviewer` ones, with a fake grader and a fake
clock (the one real run is the candidate's own `pytest katas/auc_roc`, to see what it grades)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from mockkit import L1, current, kata, make_run, start
from rich.console import Console
from test_words import english

from harness import catalog, diagnosis, mutants, words
from harness.interviewer import commands, document, script, suite, timeline, watch
from harness.session import rubric
from harness.session.log import Kind, Reason, Sessions
from harness.session.rubric import Scores
from harness.store import Store

AUC = catalog.get("auc_roc")
V1 = "def auc(scores, labels):\n    return 0.5\n"
V2 = "def auc(scores, labels):\n    ranked = sorted(scores)\n    return 0.75\n"
NOTE = "asked about ties before coding"
L3_TITLE = "samples of zero weight must be ignored, curve points included"


def plain(text: str) -> str:
    """The output as said: colours dropped, wrapping undone."""
    return " ".join(re.sub(r"\x1b\[[0-9;]*m", "", text).split())


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    """auc_roc's hidden tests, collected once, for real, before the grader is faked."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KATA_HOME", str(tmp_path_factory.mktemp("collect")))
        return suite.hidden_tests(AUC)


@pytest.fixture
def likely(monkeypatch):
    """The diagnosis, fixed: two likely mistakes for any failing submit (the stored signatures
    are regenerated on their own schedule; this tests the wiring, not the ranking)."""
    def two(kata, failing, levels):
        return [diagnosis.Likely("ties_count_zero", 1, 0.8, 2, 0, 1, ("t",)),
                diagnosis.Likely("ties_count_one", 1, 0.5, 1, 1, 1, ("t",)),
                diagnosis.Likely("never_shown", 1, 0.1, 1, 1, 9, ("t",))][:diagnosis.SHOWN]
    monkeypatch.setattr(timeline.diagnosis, "likely", two)


def test_watch_waits_for_the_candidate_to_start(work, clock, monkeypatch):
    looks = []

    def candidate_starts_then_ends(seconds):
        looks.append(seconds)
        if len(looks) == 1:
            start(work, "--pair")
        elif len(looks) == 2:
            Sessions(Store()).finish(current(), Reason.ENDED, clock())
        assert len(looks) < 5

    monkeypatch.setattr(watch, "sleep", candidate_starts_then_ends)
    result = kata("interviewer", "watch", "--candidate", "Ada")
    out = plain(result.output)
    assert result.exit_code == 0, out
    assert out.index("Waiting for the candidate to start") < out.index("Following the pair")
    assert "Ada" in plain(kata("interviewer", "sessions").output)


def test_a_pair_session_through_both_roles(collected, work, clock, grader, likely, monkeypatch,
                                           tmp_path):
    monkeypatch.delenv("KATAS_MAINTAINER", raising=False)
    # The interviewer prepares: the script is their reveal, not the candidate's.
    assert kata("interviewer", "script", "auc_roc", "--yes").exit_code == 0
    assert not Store().revealed("auc_roc")
    assert "solution seen" not in kata("list").output

    start(work, "--pair")
    first = current()
    shown = kata("show", "auc_roc")
    assert "your interviewer sees" in plain(shown.output)

    work.write_text(V1, encoding="utf-8")
    clock.advance(120)
    grader.runs.append(make_run(set()))
    kata("mock", "submit")
    clock.advance(30)
    noted = kata("interviewer", "note", NOTE, "--dimension", "framing")
    assert noted.exit_code == 0 and "yours only" in noted.output
    kata("interviewer", "answered", "3")  # a slip: question 3 was never asked
    undone = kata("interviewer", "undo")
    assert "Took back the answer to question 3" in plain(undone.output)
    assert current().asked == [] and "0 question(s) answered" in plain(undone.output)

    work.write_text(V2, encoding="utf-8")
    clock.advance(200)
    grader.runs.append(make_run({1}))
    kata("mock", "submit")
    # The candidate's own full run grades only Levels 1-2 (2 is open now), and shows.
    ran = subprocess.run([sys.executable, "-m", "pytest", "katas/auc_roc", "-q", "-p",
                          "no:cacheprovider"], cwd=catalog.ROOT, capture_output=True, text=True,
                         timeout=600)
    assert "your interviewer sees" in ran.stdout and "Levels 1–2" in ran.stdout
    assert L3_TITLE not in ran.stdout
    clock.advance(60)
    kata("mock", "end")

    # Watch and replay: per submit the verdict, the likely mistakes and the diff.
    watched = plain(kata("interviewer", "watch", "--session", str(first.id)).output)
    assert watched.count("likely (") == 2 * 2 and "never_shown" not in watched
    assert "likely (0.80)" in watched and "since the previous submit" in watched
    assert "+ ranked = sorted(scores)" in watched and "- return 0.5" in watched
    assert "the candidate ran `kata show`" in watched
    assert "the candidate ran `pytest katas/auc_roc`" in watched
    assert f"note `framing`: {NOTE}" in watched and "taken back: the answer to question 3" \
        in watched
    replayed = plain(kata("interviewer", "replay").output)
    assert "Submit 1 of 2" in replayed and "Submit 2 of 2" in replayed
    assert replayed.index("+ return 0.5") < replayed.index("Submit 2 of 2") \
        < replayed.index("+ return 0.75")

    # Score: stopped after the first dimension, which keeps; resumed, it asks for the rest.
    monkeypatch.setattr(commands, "console", Console(force_terminal=True, width=100))
    stopped = kata("interviewer", "score", input="3\n1\n")
    assert stopped.exit_code == 130, stopped.output
    assert f"note 1 [02:30]: {NOTE}" in plain(stopped.output)
    assert Scores(Store()).of(first.id).levels == {"framing": (3, NOTE)}
    followups = AUC.spec.followups
    rest = ["n"] + ["2", "seen"] * 5  # not observed, then five levels with evidence
    rest += ["n"]  # follow-up 1 was not asked
    for f in followups[1:]:
        rest += ["y"] + ["y"] * len(f.points.en)
    rest += ["3", "solved the levels that matter", "Keep going."]
    resumed = kata("interviewer", "score", input="\n".join(rest) + "\n")
    assert resumed.exit_code == 0, resumed.output
    assert "Resuming" in plain(resumed.output)
    assert AUC.meta["rubric"]["framing"]["en"][0][:30] not in plain(resumed.output)
    score = Scores(Store()).of(first.id)
    assert score.levels["correctness"] == (rubric.NOT_OBSERVED, "")
    assert score.overall == (3, "solved the levels that matter")
    assert all(score.covered[1, p] is None for p in range(1, len(followups[0].points.en) + 1))

    # A newer session, then the report of the earlier one.
    start(work, "--pair")
    kata("mock", "end")
    listed = plain(kata("interviewer", "sessions").output)
    assert listed.count("auc_roc") == 2 and "over, scored" in listed
    out = plain(kata("interviewer", "report", "--session", str(first.id)).output)
    assert "(not asked)" in out and "✗" not in out.split("Follow-up points covered")[1]
    assert "not observed" in out
    assert "what 4 looks like" in out and "Overall recommendation: 3" in out
    assert "The final code" in out and "return 0.75" in out and "+2 −1 lines" in out
    assert "the candidate ran `kata show`" in out
    assert "note `framing`" not in out  # the note is the interviewer's, unless picked
    assert f"note `framing`: {NOTE}" in plain(kata("interviewer", "report", "--session",
                                                   str(first.id), "--mine").output)
    newer = plain(kata("interviewer", "report").output)
    assert "return 0.75" not in newer

    # The printed pages: no literal markup, room to write on the rubric.
    for args in (("report", "--session", str(first.id)), ("script", "auc_roc", "--yes")):
        page = tmp_path / f"{args[0]}.html"
        assert kata("interviewer", *args, "--html", str(page)).exit_code == 0
        text = re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8").split("<main>")[1])
        assert not re.search(r"\*\*|`|\[/?(bold|red|green|dim|cyan)", text), args
    assert 'class="write"' in (tmp_path / "script.html").read_text(encoding="utf-8")
    assert not Store().revealed("auc_roc")
    assert all(e.kind != Kind.LOOK or "interviewer" not in e.data["what"]
               for e in Sessions(Store()).get(first.id).events)


@pytest.mark.parametrize("k", catalog.all_katas(), ids=lambda k: k.name)
def test_the_time_plan_staggers_nudges_pointers_and_followups_in_whole_minutes(k):
    plans = script.plan(float(k.spec.minutes), k.num_levels)
    for p in plans:
        assert all(isinstance(t, int) for t in (p.start, p.end, p.nudges, p.pointers))
        assert p.start < p.end and p.nudges < p.pointers < p.followups, p
        assert p.nudges <= p.end
    assert [p.start for p in plans[1:]] == [p.end for p in plans[:-1]]


def test_the_script_lists_the_top_mistakes_first_and_folds_the_rest(tmp_path):
    found = mutants.load(AUC)
    tests = [suite.HiddenTest(1, t, None) for m in found for t in m.caught_by]
    firsts = {found[-1].name: 7, found[0].name: 2}
    built = script.build(AUC, "en", tests, firsts)
    top = [(m.name, n) for sheet in built.sheets for m, n in sheet.top]
    assert top == [(found[-1].name, 7), (found[0].name, 2)]
    page = document.page(document.script(built))
    assert page.index("first 7×") < page.index("<details>") < page.index(found[1].name)


def test_each_side_reads_the_verdicts_in_its_own_language(collected, work, clock, grader, likely):
    start(work, "--pair")  # the candidate's session is in English
    run = make_run(set())
    for r in (r for r in run.results if r.verdict):  # as the grader records them
        r.verdicts = {lang: words.say("grade.wrong", lang) for lang in catalog.LANGS}
    grader.runs.append(run)
    work.write_text(V1, encoding="utf-8")
    assert f"{L1[0][0]} — wrong answer" in plain(kata("mock", "submit").output)
    kata("mock", "end")
    for command in (["interviewer", "watch", "--session", "1", "--lang", "zh-TW"],
                    ["mock", "scorecard", "--lang", "zh-TW"]):
        said = plain(kata(*command).output)
        assert "答案錯誤" in said and "wrong answer" not in said, (command, said)


def test_the_new_screens_of_the_pair_mode_are_chinese(collected, work, clock, grader, likely,
                                                       monkeypatch):
    monkeypatch.setenv("KATA_LANG", "zh-TW")
    start(work, "--pair")
    outputs = [kata("show", "auc_roc").output.splitlines()[0]]  # the notice, before the prompt
    runs = [make_run(set()), make_run({1})]
    for r in (r for run in runs for r in run.results if r.verdict):  # as a zh-TW grader says it
        r.verdict = words.say("grade.wrong", "zh-TW")
    grader.runs += runs
    work.write_text(V1, encoding="utf-8")
    kata("mock", "submit")
    work.write_text(V2, encoding="utf-8")
    kata("mock", "submit")
    for command in (["note", "先問了平手", "--dimension", "framing"], ["hint", "ties"], ["undo"],
                    ["undo"], ["undo"], ["sessions"], ["replay"],
                    ["score", "--not-observed", "testing", "--not-asked", "1", "--overall", "3",
                     "--overall-evidence", "大致完成"]):
        outputs.append(kata("interviewer", *command).output)
    kata("mock", "end")
    outputs += [kata("interviewer", "watch", "--session", "1").output,
                kata("interviewer", "report").output,
                kata("interviewer", "report", "--mine").output]
    code = {line.strip() for line in (V1 + V2).splitlines()}
    for output in outputs:  # the candidate's code is theirs: its lines, and diff lines of them
        said = "\n".join(line for line in output.splitlines()
                         if line.strip().lstrip("+-").strip() not in code)
        assert english(said, [L3_TITLE, *(t for t, _ in L1)]) == [], said
        assert not re.search(r"[\u4e00-\u9fff][,;?!:]|[,;?!:][\u4e00-\u9fff]|[“”]", said), said
