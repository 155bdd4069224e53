"""`kata interviewer`, driven as an interviewer would next to a candidate's pair session, with a
fake grader and a fake clock (the hidden suite's titles are collected once, for real)."""

from __future__ import annotations

import html
import re
import sqlite3
import subprocess
import sys

import pytest
from mockkit import L1, QUESTIONS, current, kata, make_run, start
from rich.console import Console

from harness import catalog, diagnosis, mutants
from harness.interviewer import commands, suite, timeline, watch
from harness.session import rubric
from harness.session.log import Kind, Reason, Sessions
from harness.session.rubric import Scores
from harness.store import Attempt, Store

AUC = catalog.get("auc_roc")


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    """auc_roc's hidden tests, collected once for the module (later calls hit the memo)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KATA_HOME", str(tmp_path_factory.mktemp("collect")))
        return suite.hidden_tests(AUC)


def letters(text: str) -> str:
    """Only letters and digits: wrapping, Markdown and escaping change nothing else."""
    return re.sub(r"[\W_]+", "", text)


def pair(work, clock, *extra: str):
    start(work, "--pair", *extra)
    return current()


def test_help_names_every_subcommand():
    result = kata("interviewer", "--help")
    assert result.exit_code == 0
    for command in ("script", "watch", "hint", "answered", "score", "report"):
        assert command in result.output


def test_the_script_asks_first_and_records_the_reveal(collected, monkeypatch):
    monkeypatch.delenv("KATAS_MAINTAINER", raising=False)  # maintainers are never asked
    refused = kata("interviewer", "auc_roc", input="n\n")
    assert refused.exit_code == 1 and "Reveal it?" in refused.output
    assert not Store().revealed("auc_roc")
    shown = kata("interviewer", "auc_roc", input="y\n")
    assert shown.exit_code == 0 and "Level 1 of 3" in shown.output
    assert Store().revealed("interviewer:auc_roc")  # the interviewer's, not the candidate's
    assert not Store().revealed("auc_roc")
    again = kata("interviewer", "auc_roc")  # revealed once: no question the second time
    assert again.exit_code == 0 and "Reveal it?" not in again.output


def test_the_script_of_a_passed_kata_is_shown_without_asking(collected):
    Store().add_attempt(Attempt("auc_roc", "stub", 1.0, 3, 60, 60, {}))
    result = kata("interviewer", "script", "auc_roc")
    assert result.exit_code == 0 and "Reveal it?" not in result.output
    assert not Store().revealed("auc_roc")


@pytest.mark.parametrize("lang", catalog.LANGS)
def test_the_script_holds_every_question_answer_hint_mistake_and_followup(collected, lang):
    result = kata("interviewer", "auc_roc", "--lang", lang, "--yes")
    assert result.exit_code == 0, result.output
    out, meta = letters(result.output), AUC.meta
    wanted = [q[key][lang] for q in meta["questions"] for key in ("ask", "answer")]
    wanted += [text for hints in meta["hints"].values() for text in hints[lang]]
    wanted += [m.mistake[lang] for m in mutants.load(AUC)]
    wanted += [f["question"][lang] for f in meta["followups"]]
    wanted += [p for f in meta["followups"] for p in f["points"][lang]]
    wanted += meta["selfcheck"][lang] + [spec["brief"][lang] for spec in meta["levels"]]
    wanted += [a for d in rubric.dimensions() for a in d.anchors[lang]]
    wanted += [a for anchors in meta["rubric"].values() for a in anchors[lang]]
    missing = [text for text in wanted if letters(text) not in out]
    assert not missing, missing


def test_the_script_puts_each_mistake_and_hint_on_the_level_that_shows_it(collected):
    out = kata("interviewer", "auc_roc", "--yes").output
    level2, level3 = out.index("Level 2 of 3"), out.index("Level 3 of 3")
    at = {m.name: out.index(f"[{m.name}]") for m in mutants.load(AUC)}
    assert at["ties_count_zero"] < level2 < at["no_origin_point"] < level3 < at["quadratic_pairs"]
    assert level2 < out.index("\n  curve\n") < level3  # the curve ladder is Level 2's
    assert "Time: 00:00–12:00. Not passing at 12:00: give the nudges" in out
    assert "at 16:00: the pointers" in out and "The follow-ups start at 35:00" in out


@pytest.mark.parametrize("lang", catalog.LANGS)
def test_the_html_script_is_one_self_contained_page(collected, tmp_path, lang):
    page = tmp_path / "script.html"
    result = kata("interviewer", "auc_roc", "--lang", lang, "--html", str(page), "--yes")
    assert result.exit_code == 0 and str(page) in result.output.replace("\n", "")
    text = page.read_text(encoding="utf-8")
    assert f'<html lang="{lang}">' in text and "http" not in text
    for outside in ("<script", "<img", "url(", "@import"):
        assert outside not in text, outside
    assert re.findall(r'(?:src|href)="([^"]*)"', text) == ["data:,"]  # the icon: none
    shown = letters(html.unescape(re.sub(r"<[^>]+>", "", text)))
    assert letters(AUC.meta["questions"][0]["answer"][lang]) in shown


def test_hint_and_answered_log_into_the_pair_session_with_their_times(work, clock):
    pair(work, clock)
    clock.advance(70)
    hinted = kata("interviewer", "hint", "ties")
    assert hinted.exit_code == 0 and "Logged at 01:10: hint 1 of 2 (nudge)" in hinted.output
    assert AUC.meta["hints"]["ties"]["en"][0] in hinted.output
    clock.advance(20)
    assert "hint 2 of 2 (pointer)" in kata("interviewer", "hint", "ties").output
    spent = kata("interviewer", "hint", "ties")
    assert spent.exit_code == 0 and "given already" in spent.output
    answered = kata("interviewer", "answered", "1", "label-types")
    assert answered.exit_code == 0 and "question 3 answered" in answered.output
    assert "logged already" in kata("interviewer", "answered", "ties").output
    session = current()
    assert session.hints == [("ties", 0), ("ties", 1)] and session.asked == [0, 2]
    hints = session.of(Kind.HINT)
    assert [e.at - session.started for e in hints] == [70, 90]
    assert all(e.data["by"] == "interviewer" for e in hints + session.of(Kind.ASK))
    ended = kata("mock", "end")
    assert "Hints used: 2" in ended.output  # the level reached: Level 1's questions only
    level_1 = sum(q["level"] == 1 for q in AUC.meta["questions"])
    assert (f"Questions: 2 asked in your own words, 0 picked from a list or by number, "
            f"of {level_1} at") in ended.output


@pytest.mark.parametrize("command", [["hint", "ties"], ["answered", "1"]])
def test_logging_without_an_open_pair_session_is_exit_2(work, clock, command):
    assert kata("interviewer", *command).exit_code == 2  # nothing open
    start(work)  # a solo session
    result = kata("interviewer", *command)
    assert result.exit_code == 2 and "No pair session is open" in result.output
    assert current().events == []


@pytest.mark.parametrize("command, message", [
    (["hint", "nope"], "no hint category 'nope'"),
    (["answered", str(QUESTIONS + 1)], f"no question '{QUESTIONS + 1}'"),
    (["answered", "tie"], "no question 'tie'"),
    (["hint", "ties", "--kata", "sync_batch_scheduler"], "not sync_batch_scheduler"),
    (["watch", "--kata", "sync_batch_scheduler"], "not sync_batch_scheduler"),
    (["score", "--kata", "sync_batch_scheduler", "--notes", "x"], "not sync_batch_scheduler"),
])
def test_bad_input_to_the_interviewer_is_a_clear_error(work, clock, command, message):
    pair(work, clock)
    result = kata("interviewer", *command)
    assert result.exit_code == 2 and message in result.output, result.output
    assert current().events == []


def test_nothing_is_logged_once_the_clock_has_run_out(work, clock):
    pair(work, clock)
    clock.advance(30 * 60 + 1)
    result = kata("interviewer", "hint", "ties")
    assert result.exit_code == 1 and "time is up" in result.output
    assert current().events == []  # closing the session is the candidate's command's job


def test_a_locked_store_is_exit_2_and_nothing_is_torn(work, clock):
    pair(work, clock)
    blocker = sqlite3.connect(Store().path)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        result = kata("interviewer", "hint", "ties")
    finally:
        blocker.rollback()
        blocker.close()
    assert result.exit_code == 2 and "try again" in result.output
    assert current().hints == []


SCORED = ["--dimension", "framing=3", "--evidence", "asked about ties before coding",
          "--dimension", "correctness=2", "--evidence", "ties right only after the hint"]


@pytest.mark.parametrize("extra, message", [
    (["--dimension", "charm=3", "--evidence", "x"], "unknown dimension 'charm'"),
    (["--dimension", "framing=5", "--evidence", "x"], "must be 1 (poor)"),
    (["--dimension", "framing=0", "--evidence", "x"], "must be 1 (poor)"),
    (["--dimension", "framing", "--evidence", "x"], "ID=LEVEL"),
    (["--dimension", "framing=3"], "one --evidence per --dimension"),
    (["--dimension", "framing=3", "--evidence", " "], "must say what you saw"),
    (["--covered", "4.1"], "no follow-up point '4.1'"),
    (["--covered", "1.9"], "no follow-up point '1.9'"),
    ([], "Nothing to score"),
])
def test_score_validates_everything_before_writing_anything(work, clock, extra, message):
    session = pair(work, clock)
    result = kata("interviewer", "score", *SCORED, *extra) if extra else kata("interviewer",
                                                                              "score")
    assert result.exit_code == 2 and message in result.output, result.output
    assert Scores(Store()).of(session.id).empty


def test_score_without_a_pair_session_is_exit_2(work, clock):
    start(work)
    kata("mock", "end")
    result = kata("interviewer", "score", *SCORED)
    assert result.exit_code == 2 and "no pair session yet" in result.output


def test_scoring_again_replaces_what_it_names_and_keeps_the_rest(work, clock):
    session = pair(work, clock)
    kata("mock", "end")
    first = kata("interviewer", "score", *SCORED, "--covered", "1.1", "--covered", "2.2")
    assert first.exit_code == 0 and "2 dimension(s) scored, 2 of 9" in first.output
    kata("interviewer", "score", "--dimension", "correctness=3", "--evidence", "fixed it alone",
         "--missed", "2.2", "--notes", "Practise the curve.")
    score = Scores(Store()).of(session.id)
    assert score.levels == {"framing": (3, "asked about ties before coding"),
                            "correctness": (3, "fixed it alone")}
    assert score.covered == {(1, 1): True, (2, 2): False} and score.notes == "Practise the curve."


def test_score_asks_for_each_dimension_on_a_terminal(work, clock, monkeypatch):
    session = pair(work, clock)
    kata("mock", "end")
    monkeypatch.setattr(commands, "console", Console(force_terminal=True, width=80))
    points = len(rubric.points(AUC))
    answers = ["9", "3", "asked first"] + ["2", "seen"] * 6
    for f, followup in enumerate(AUC.spec.followups):  # asked; only its first point covered
        answers += ["y"] + ["y" if f == 0 and p == 0 else "n"
                            for p in range(len(followup.points.en))]
    answers += ["3", "solved most of it", "Good start."]
    result = kata("interviewer", "score", input="\n".join(answers) + "\n")
    assert result.exit_code == 0, result.output
    score = Scores(Store()).of(session.id)
    assert score.levels["framing"] == (3, "asked first") and len(score.levels) == 7
    assert score.covered[1, 1] and sum(score.covered.values()) == 1
    assert score.notes == "Good start." and score.overall == (3, "solved most of it")
    assert len(rubric.points(AUC)) == points
    shown = letters(re.sub(r"\x1b\[[0-9;]*m", "", result.output))
    assert letters(AUC.meta["rubric"]["framing"]["en"][0]) in shown  # the kata's own anchors
    assert "mustbe1poor" in shown  # 9 was refused, and asked again


def test_the_report_tells_the_sessions_own_numbers(work, clock, grader, tmp_path, monkeypatch):
    def ties(kata, failing, levels):  # the diagnosis, fixed: its ranking is tested on its own
        return [diagnosis.Likely("ties_count_zero", 1, 0.9, 2, 0, 0, (L1[0][0],))] \
            if L1[0][0] in failing else []
    monkeypatch.setattr(timeline.diagnosis, "likely", ties)
    pair(work, clock)
    grader.runs += [make_run(set()), make_run({1}), make_run({1, 2})]
    clock.advance(60)
    kata("interviewer", "answered", "ties")
    clock.advance(60)
    kata("mock", "submit")
    clock.advance(30)
    kata("interviewer", "hint", "ties")
    clock.advance(90)
    kata("mock", "submit")
    clock.advance(60)
    kata("mock", "spec")
    clock.advance(60)
    kata("mock", "submit")
    kata("mock", "end")
    kata("interviewer", "score", *SCORED, "--covered", "1.2", "--notes", "Ask about ties first.")
    session = Sessions(Store()).last_pair()
    out = kata("interviewer", "report").output
    assert f"Submits: {len(session.of(Kind.SUBMIT))} · hints given: {len(session.hints)} · " \
           f"questions answered: {len(session.asked)} of {QUESTIONS}" in out
    assert "2 of 3 levels passed" in out and session.levels_passed == 2
    for line in ("[01:00] question 1 answered", "[02:00] Level 1 · submit: 0 of 2",
                 "[02:30] hint 1 of 2 given for ties", "[04:00] Level 1 passed (it took 04:00)",
                 "[05:00] the candidate opened the full prompt (Levels 1–2)",
                 "[06:00] Level 2 passed (it took 02:00)", "ended early",
                 "Level 1: 2 of 2 hidden tests in the last submit · passed at 04:00",
                 "Level 3: 0 of 1", "Problem framing and clarifying questions: 3 (good)",
                 "asked about ties before coding", "Follow-up points covered: 1 of 9",
                 "Notes: Ask about ties first.", "auc_roc again"):
        assert line in out, line
    tied = next(m for m in mutants.load(AUC) if m.name == "ties_count_zero")
    assert letters(f"{tied.mistake['en']} (`ties_count_zero`), first at 02:00: fixed by the "
                   "last submit at its level") in letters(out)
    page = tmp_path / "report.html"
    kata("interviewer", "report", "--html", str(page), "--lang", "zh-TW")
    text = page.read_text(encoding="utf-8")
    assert "http" not in text and "<script" not in text and '<html lang="zh-TW">' in text
    assert "提交：3 次" in text


def test_the_report_before_scoring_says_so_and_progress_shows_the_rubric(work, clock):
    pair(work, clock)
    kata("mock", "end")
    assert "Not scored yet" in kata("interviewer", "report").output
    assert "Interviewer scores" not in kata("progress").output
    kata("interviewer", "score", *SCORED, "--covered", "1.1")
    progress = kata("progress").output
    row = next(line for line in progress.splitlines() if "3 2 · · · · ·" in line)
    assert "auc_roc" in row and "0/3" in row and "1/9" in row
    assert "framing, correctness, code" in progress


# A second process writes a session's events while `kata interviewer watch` follows it.
WRITER = f"""
import sys
from harness.session.log import Kind, Reason, Sessions
from harness.store import Store
sessions = Sessions(Store())
s = sessions.current()
if sys.argv[1] == "submit":
    failures = [[1, {L1[0][0]!r}, "ties", "wrong answer"]]
    sessions.record(s, s.started + 200, (Kind.SUBMIT, 1, {{"hidden": [1, 2],
        "counts": {{"1": [1, 2]}}, "failures": failures, "import_error": None}}))
else:
    sessions.record(s, s.started + 400, (Kind.SUBMIT, 1, {{"hidden": [2, 2],
        "counts": {{"1": [2, 2]}}, "failures": [], "import_error": None}}), (Kind.PASS, 1, {{}}))
    sessions.finish(s, Reason.ENDED, s.started + 450)
"""


def test_the_live_view_reports_what_another_process_writes(work, clock, monkeypatch):
    pair(work, clock)
    looks = []

    def other_process_writes(seconds):
        looks.append(seconds)
        step = {1: "submit", 2: "finish"}.get(len(looks))
        if step:
            subprocess.run([sys.executable, "-c", WRITER, step], check=True,
                           cwd=catalog.ROOT, timeout=120)
        assert len(looks) < 10, "the live view did not see the session end"

    monkeypatch.setattr(watch, "sleep", other_process_writes)
    result = kata("interviewer", "watch")
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())  # as said, whatever the wrapping
    assert "Following the pair session on auc_roc" in out
    assert "[03:20] Level 1 · submit: 1 of 2 hidden tests pass" in out
    assert f"✗ {L1[0][0]} [ties]: wrong answer" in out  # the reason the candidate saw
    assert "[06:40] Level 1 passed" in out and "Level 2 is unlocked" in out
    assert "the session is over (ended early): 1 of 3 levels passed" in out
    assert out.index("submit: 1 of 2") < out.index("Level 1 passed") < out.index("is over")
    session = Sessions(Store()).last_finished()
    assert session.reason == Reason.ENDED and work.read_text() == "# my answer\n"
