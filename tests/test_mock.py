"""`kata mock` and `kata progress`, driven as a learner would, with a fake grader and a fake clock.

The real grader is exercised end to end in test_mock_e2e.py; here each submit returns a prepared
KataRun, so the whole state machine runs in seconds.
"""

from __future__ import annotations

import re

import pytest
from mockkit import (
    AUC_QUESTIONS,
    L1,
    L2,
    LEVEL_1_QUESTIONS,
    QUESTIONS,
    Q,
    current,
    kata,
    make_run,
    start,
)

from harness import catalog, grading
from harness.mock import watch
from harness.results import TestResult as Result  # not a test class
from harness.session.log import Reason, Sessions
from harness.store import Attempt, Store

AUC = catalog.get("auc_roc")
LEVEL_TITLES = [spec["title"]["en"] for spec in AUC.meta["levels"]]


def test_help_explains_the_kata_shortcut_and_every_subcommand():
    result = kata("mock", "--help")
    assert result.exit_code == 0
    assert "kata mock [KATA]" in result.output and "kata mock start" in result.output
    for command in ("start", "status", "questions", "ask", "submit", "hint", "watch", "scorecard",
                    "end"):
        assert command in result.output
    assert "--file" in kata("mock", "start", "--help").output


def test_start_shows_level_one_only_and_the_clock(work, clock):
    result = start(work)
    assert LEVEL_TITLES[0] in result.output and "Level 1 of 3" in result.output
    assert LEVEL_TITLES[1] not in result.output and LEVEL_TITLES[2] not in result.output
    assert "30:00 left" in result.output and "kata mock ask" in result.output
    assert "\x1b[" not in result.output  # plain text when not a terminal
    session = current()
    assert (session.kata, session.file, session.minutes, session.level) == (
        "auc_roc", str(work), 30, 1)


def test_the_default_clock_is_the_katas_and_the_language_switches_everything(work, clock):
    result = kata("mock", "auc_roc", "--file", str(work), "--lang", "zh-TW")
    assert result.exit_code == 0, result.output
    assert f"{AUC.meta['minutes']}:00" in result.output
    assert AUC.meta["levels"][0]["title"]["zh-TW"] in result.output and "剩下" in result.output
    assert not re.search(r"\b(left|Level|Ask)\b", result.output)
    assert current().lang == "zh-TW"


def test_bad_options_are_clear_errors(work):
    assert "--lang must be one of" in kata("mock", "auc_roc", "--lang", "fr").output
    assert "--minutes must be positive" in kata("mock", "auc_roc", "--minutes", "0").output
    assert "--file is not a file" in kata("mock", "auc_roc", "--file", str(work.parent)).output
    assert "no kata named 'nope'" in kata("mock", "nope").output
    assert current() is None


def test_without_a_kata_it_picks_one_not_passed_yet(work, clock, monkeypatch):
    monkeypatch.setattr(catalog, "all_katas", lambda: [AUC])
    Store().add_attempt(Attempt("auc_roc", "solution", 1.0, 3, 53, 53, {}))  # not your file
    result = kata("mock", "--file", str(work))
    assert result.exit_code == 0 and current().kata == "auc_roc"
    kata("mock", "end")
    Store().add_attempt(Attempt("auc_roc", "stub", 2.0, 3, 53, 53, {}))
    result = kata("mock")
    assert result.exit_code == 1 and "passed every kata" in result.output


def test_one_open_session_which_kata_mock_resumes(work, clock):
    start(work)
    clock.advance(90)
    again = kata("mock")
    assert again.exit_code == 0 and "still open" in again.output and "28:30 left" in again.output
    assert kata("mock", "auc_roc").exit_code == 0
    other = kata("mock", "sync_batch_scheduler")
    assert other.exit_code == 1 and "kata mock end" in other.output
    assert len(Sessions(Store()).history()) == 1


@pytest.mark.parametrize("command", [["status"], ["questions"], ["ask", "ties?"], ["submit"],
                                     ["hint"], ["watch"], ["end"]])
def test_commands_without_a_session_say_how_to_start_one(command):
    result = kata("mock", *command)
    assert result.exit_code == 1 and "kata mock [KATA]" in result.output


def test_questions_are_answered_only_when_asked_and_counted_once(work, clock):
    start(work)
    listed = kata("mock", "questions")
    assert f"0 of {LEVEL_1_QUESTIONS} asked" in listed.output
    assert AUC_QUESTIONS[Q["ties"]]["ask"]["en"] in listed.output
    assert "counts one half" not in listed.output
    answered = kata("mock", "ask", "How do ties count?")
    assert answered.exit_code == 0 and "counts one half" in answered.output
    assert "asked this one before" in kata("mock", "ask", "ties?").output
    unknown = kata("mock", "ask", "What is the weather like?")
    assert unknown.exit_code == 0 and "no answer" in unknown.output  # not an error
    assert "May I use scikit-learn?" not in unknown.output  # the list is not dumped
    assert "kata mock questions" in unknown.output
    chinese = kata("mock", "ask", "可以用 sklearn 嗎?", "--lang", "zh-TW")
    assert "不行，只能用 NumPy" in chinese.output
    listed = kata("mock", "questions")
    assert f"2 of {LEVEL_1_QUESTIONS} asked" in listed.output and "one half" in listed.output
    assert current().asked == [Q["ties"], Q["scikit-learn"]]


def test_a_whole_session_unlocks_levels_in_order_with_counted_hints(work, clock, grader):
    start(work)
    grader.runs += [make_run(set()), make_run({1}), make_run({1, 2, 3}), make_run({1, 2, 3})]
    assert "Submit first" in kata("mock", "hint").output

    clock.advance(120)
    failed = kata("mock", "submit", "--hint")
    assert failed.exit_code == 1
    assert "Level 1: 0 of 2 hidden tests pass" in failed.output
    assert "tied scores must count one half" in failed.output
    assert L2[0][0] not in failed.output  # a locked level's tests stay hidden
    assert AUC.meta["hints"]["ties"]["en"][0] in failed.output and "Hint 1 of 2" in failed.output
    expected = [AUC.meta["hints"]["ties"]["en"][1], AUC.meta["hints"]["orientation"]["en"][0],
                AUC.meta["hints"]["orientation"]["en"][1]]
    for n, text in enumerate(expected, start=2):
        shown = kata("mock", "hint")
        assert text in shown.output and f"Hints used so far: {n}" in shown.output
    spent = kata("mock", "hint")
    assert "seen both hints" in spent.output and "Hints used so far: 4" in spent.output

    clock.advance(180)
    level1 = kata("mock", "submit")
    assert level1.exit_code == 0 and "Level 1 passed at 05:00 (it took 05:00)" in level1.output
    assert "Level 2 of 3" in level1.output and LEVEL_TITLES[1] in level1.output
    assert LEVEL_TITLES[2] not in level1.output
    zh_hint = kata("mock", "hint", "--lang", "zh-TW")
    assert AUC.meta["hints"]["curve"]["zh-TW"][0] in zh_hint.output

    clock.advance(240)
    level2 = kata("mock", "submit")  # passes everything, but unlocks one level at a time
    assert "Level 2 passed at 09:00 (it took 04:00)" in level2.output
    assert "Level 3 of 3" in level2.output and current().level == 3

    clock.advance(60)
    level3 = kata("mock", "submit")
    assert level3.exit_code == 0 and "Every level passes" in level3.output
    out = level3.output
    for line in ("Levels passed: 3 of 3", "Level 1: passed at 05:00 (took 05:00)",
                 "Level 3: passed at 10:00 (took 01:00)", "Hints used: 5", "ties: 2/2",
                 "curve: 1/2", "Questions: 0 asked in your own words, 0 picked from a list or "
                 f"by number, of {QUESTIONS} at the levels you reached", "Follow-up discussion",
                 "Self-check",
                 AUC.meta["followups"][0]["question"]["en"],
                 AUC.meta["followups"][0]["points"]["en"][0], AUC.meta["selfcheck"]["en"][0]):
        assert line in out, line
    assert out.index("Levels passed") < out.index("Follow-up discussion") < out.index("Self-check")
    assert current() is None
    assert work.read_text() == "# my answer\n"  # nothing the learner wrote is changed
    assert grader.calls == [str(work)] * 4

    zh = kata("mock", "scorecard", "--lang", "zh-TW")
    assert zh.exit_code == 0 and "通過關卡：3 / 3" in zh.output and "追問" in zh.output
    assert AUC.meta["followups"][0]["question"]["zh-TW"] in zh.output
    assert AUC.meta["selfcheck"]["zh-TW"][0] in zh.output


def test_a_level_passed_before_that_fails_again_blocks_the_next(work, clock, grader):
    start(work)
    grader.runs += [make_run({1}), make_run({2})]
    kata("mock", "submit")
    result = kata("mock", "submit")
    assert result.exit_code == 1 and current().level == 2
    assert "A level you passed before fails again" in result.output
    assert "(Level 1) tied scores must count one half" in result.output


def test_a_title_failing_in_several_cases_is_one_line_with_its_count(work, clock, grader):
    start(work)
    run = make_run(set())
    title, hint = L1[0]
    run.results += [Result(f"p{i}", 1, title, hint, "failed", "wrong answer") for i in range(2)]
    run.recorded, run.stored = "recorded in /x/progress.db (mock submit)", True
    grader.runs.append(run)
    result = kata("mock", "submit")
    assert result.output.count(title) == 1, result.output
    assert f"{title} (×3) — wrong answer" in result.output
    assert "counts in `kata list` and `kata progress` (recorded in /x/progress.db" in \
        result.output.replace("\n", " ")


def test_an_import_error_is_shown_without_a_wall_of_failures(work, clock, grader):
    start(work)
    grader.runs.append(make_run(set(), import_error="auc.py does not import: SyntaxError"))
    result = kata("mock", "submit", "--hint")
    assert result.exit_code == 1 and "SyntaxError" in result.output
    assert "tied scores" not in result.output
    assert "no failing hidden test to give a hint" in result.output


def test_time_up_ends_the_session_at_its_deadline(work, clock, grader):
    start(work, "--minutes", "1")
    kata("mock", "ask", "ties?")
    grader.runs.append(make_run(set()))
    clock.advance(61)
    result = kata("mock", "submit")
    assert result.exit_code == 0 and "Time is up" in result.output
    assert "Levels passed: 0 of 3" in result.output
    assert "Level 1: not passed" in result.output and "Level 2: not reached" in result.output
    assert "tied scores must count one half" in result.output
    assert (f"Questions: 1 asked in your own words, 0 picked from a list or by number, of "
            f"{LEVEL_1_QUESTIONS} at the levels you reached") in result.output
    assert "Self-check" in result.output
    assert grader.calls == [str(work)]  # graded once, at time-up, not again as a submit
    session = Sessions(Store()).last_finished()
    assert session.reason == Reason.TIME and session.ended == session.deadline
    assert kata("mock", "status").exit_code == 1


def test_time_up_grades_the_file_as_it_stands_and_scores_it(work, clock, grader):
    start(work, "--minutes", "1")
    grader.runs.append(make_run({1, 2, 3}))  # the learner never ran `kata mock submit`
    clock.advance(61)
    result = kata("mock", "status")
    assert result.exit_code == 0 and "Time is up" in result.output
    assert "graded as it stood at time-up" in result.output
    assert "You never submitted" not in result.output
    assert "Levels passed: 1 of 3" in result.output
    assert "Level 1: passed at 01:00" in result.output
    assert "Hidden tests failing in your last submit: none" in result.output
    session = Sessions(Store()).last_finished()
    assert session.last_submit.at == session.deadline and session.score == 1.0
    late = kata("mock", "submit")
    assert late.exit_code == 1 and "No mock interview is open" not in late.output
    assert "time was up" in late.output and "kata mock scorecard" in late.output
    assert grader.calls == [str(work)]  # graded once


def test_a_submit_that_finishes_after_the_deadline_still_counts_then_ends(work, clock,
                                                                         monkeypatch):
    start(work, "--minutes", "1")

    def slow_grade(*args, **kwargs):
        clock.advance(120)
        return make_run({1}), ""

    monkeypatch.setattr(grading, "grade", slow_grade)
    result = kata("mock", "submit")
    assert "Level 1 passed" in result.output and "Time is up" in result.output
    assert Sessions(Store()).last_finished().levels_passed == 1


def test_end_early_in_either_language(work, clock, grader):
    start(work, "--lang", "zh-TW")
    grader.runs.append(make_run(set()))
    kata("mock", "submit")
    result = kata("mock", "end")
    assert result.exit_code == 0 and "你結束了這場面試" in result.output
    assert "最後一次提交失敗的隱藏測試" in result.output
    assert "tied scores must count" in result.output
    assert Sessions(Store()).last_finished().reason == Reason.ENDED
    again = kata("mock", "scorecard", "--lang", "en")
    assert "You ended the session" in again.output
    assert f"0 picked from a list or by number, of {LEVEL_1_QUESTIONS} at" in again.output


def test_a_deleted_or_renamed_kata_is_reported_not_crashed_on(work, clock, tmp_path,
                                                              monkeypatch):
    start(work)
    monkeypatch.setattr(catalog, "KATAS_DIR", tmp_path / "empty")  # the folder is gone
    for command in (["status"], ["submit"], ["hint"], []):
        result = kata("mock", *command)
        assert result.exit_code == 2 and "no longer in katas/" in result.output, command
    ended = kata("mock", "end")
    assert ended.exit_code == 0 and "Levels passed: 0 of 3" in ended.output
    assert "follow-ups are unavailable" in ended.output
    progress = kata("progress")
    assert progress.exit_code == 0 and "auc_roc (gone)" in progress.output


def test_a_missing_file_is_reported_and_the_session_stays_open(work, clock, grader):
    start(work)
    work.unlink()
    result = kata("mock", "submit")
    assert result.exit_code == 2 and "is missing" in result.output
    assert current() is not None and grader.calls == []


def test_ctrl_c_during_a_submit_leaves_the_session_resumable(work, clock, grader):
    start(work)
    grader.runs.append(KeyboardInterrupt())
    result = kata("mock", "submit")
    assert result.exit_code == 130 and "kata mock status" in result.output
    session = current()
    assert session is not None and session.last_submit is None
    assert kata("mock", "status").exit_code == 0


def test_watch_grades_each_save_and_stops_cleanly_on_ctrl_c(work, clock, grader, monkeypatch):
    start(work)
    grader.runs.append(make_run(set()))
    looks = []

    def fake_sleep(seconds):
        looks.append(seconds)
        if len(looks) == 1:
            work.write_text("# my answer, saved again\n", encoding="utf-8")
        if len(looks) == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(watch, "sleep", fake_sleep)
    result = kata("mock", "watch")
    assert result.exit_code == 0, result.output
    assert "Level 1 · 30:00 left · watching auc.py" in result.output
    assert "tied scores must count one half" in result.output
    assert "Stopped watching" in result.output and "kata mock watch" in result.output
    assert grader.calls == [str(work)] and current().last_submit is not None


def test_watch_ends_when_the_last_level_passes(work, clock, grader, monkeypatch):
    start(work)
    grader.runs += [make_run({1, 2, 3})] * 3
    saves = iter(range(100))

    def save_each_time(seconds):
        work.write_text("#" * (next(saves) + 2) + "\n", encoding="utf-8")

    monkeypatch.setattr(watch, "sleep", save_each_time)
    result = kata("mock", "watch")
    assert result.exit_code == 0 and "Every level passes" in result.output
    assert len(grader.calls) == 3 and current() is None


def test_watch_ends_with_the_scorecard_when_time_is_up(work, clock, grader, monkeypatch):
    start(work, "--minutes", "2")
    grader.runs.append(make_run(set()))
    monkeypatch.setattr(watch, "sleep", lambda seconds: clock.advance(50))
    result = kata("mock", "watch")
    assert result.exit_code == 0 and "Time is up" in result.output
    assert "01:10 left" in result.output  # printed once a minute without a terminal
    assert grader.calls == [str(work)]  # the file as it stood at time-up


def test_progress_shows_attempts_and_sessions_and_draws_the_chart(work, clock, grader,
                                                                  kata_home):
    empty = kata("progress")
    assert empty.exit_code == 0 and "No graded attempt yet" in empty.output
    store = Store()
    store.add_attempt(Attempt("auc_roc", "stub", clock() - 86400, 1, 20, 53, {}))
    store.add_attempt(Attempt("auc_roc", "solution", clock() - 3600, 3, 53, 53, {}))
    start(work)
    grader.runs += [make_run({1}), make_run({1, 2})]
    clock.advance(300)
    kata("mock", "submit")
    clock.advance(200)
    kata("mock", "submit")
    kata("mock", "end")
    result = kata("progress")
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if line.startswith("auc_roc"))
    assert row.split()[:6] == ["auc_roc", "2", "(1", "mock)", "2", "08:20"]
    chart = kata_home / "progress.png"
    assert str(chart) in result.output
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    zh = kata("progress", "--lang", "zh-TW")
    assert "嘗試次數" in zh.output and "成績趨勢圖" in zh.output


def test_the_scorecard_shows_what_was_asked_when_and_what_it_cost(work, clock):
    start(work)
    listed = kata("mock", "questions")
    assert "Asking counts in your score" not in listed.output
    assert "costs nothing" in listed.output and "scorecard" in listed.output
    clock.advance(200)
    kata("mock", "ask", "How do ties count?")
    clock.advance(100)
    kata("mock", "ask", "How do ties count?")  # asked twice, listed once, at its first time
    result = kata("mock", "end")
    assert "Questions: 1 asked in your own words, 0 picked" in result.output
    assert "asking costs nothing" in result.output
    assert f"✓ {AUC_QUESTIONS[Q['ties']]['ask']['en']} (asked at 03:20, Level 1)" in result.output
    zh = kata("mock", "scorecard", "--lang", "zh-TW")
    assert "問問題不扣分" in zh.output and "03:20" in zh.output


def test_a_question_can_be_asked_by_its_number(work, clock):
    start(work, "--lang", "zh-TW")
    listed = kata("mock", "questions")
    assert "kata mock ask 2" in listed.output
    answered = kata("mock", "ask", "4")
    assert answered.exit_code == 0
    assert AUC.meta["questions"][3]["answer"]["zh-TW"] in answered.output
    assert kata("mock", "ask", "#1").exit_code == 0
    not_open_yet = kata("mock", "ask", "7")  # a Level 2 question while Level 1 is open
    assert not_open_yet.exit_code == 0 and "沒有這個問題的答案" in not_open_yet.output
    assert "1. " not in not_open_yet.output and "7. " not in not_open_yet.output
    assert "沒有這個問題的答案" in kata("mock", "ask", "17").output
    assert current().asked == [0, 3] and current().asked_own == []


def test_hints_in_a_chinese_session_give_the_english_test_title_context(work, clock, grader):
    start(work, "--lang", "zh-TW")
    grader.runs.append(make_run(set()))
    failed = kata("mock", "submit", "--hint")
    assert AUC.meta["hints"]["ties"]["zh-TW"][0] in failed.output
    title = "tied scores must count one half"
    for line in failed.output.splitlines():
        if title in line:  # never an English title on its own: it is named as the test's name
            assert "測試" in line, line
    assert "失敗隱藏測試（英文名稱）" in failed.output
    english = kata("mock", "hint", "--lang", "en")
    assert 'Hint 2 of 2 for "tied scores must count one half"' in english.output


BRIEF_1 = "waits for Level 3"  # words of Level 1's brief, not of its prompt
PROMPT_1 = "a Series is read by position"  # words of Level 1's prompt, not of its brief
PROMPT_2 = "counts every sample with score >= t"


def test_a_brief_session_opens_each_level_with_its_brief_and_notes_the_spec(work, clock, grader):
    started = start(work, "--brief")
    assert BRIEF_1 in started.output and PROMPT_1 not in started.output
    assert "kata mock spec" in started.output
    clock.advance(100)
    spec = kata("mock", "spec")
    assert spec.exit_code == 0 and PROMPT_1 in spec.output and "noted" in spec.output
    assert PROMPT_2 not in spec.output  # a locked level's prompt stays hidden
    grader.runs.append(make_run({1}))
    unlocked = kata("mock", "submit")
    assert "Level 2 of 3" in unlocked.output and PROMPT_2 not in unlocked.output
    assert AUC.meta["levels"][1]["brief"]["en"].split()[0] in unlocked.output
    ended = kata("mock", "end")
    assert "Full prompt of Level 1 opened at 01:40" in ended.output
    assert "Full prompt of Level 2" not in ended.output and "Follow-up discussion" in ended.output


def test_the_full_prompt_session_does_not_note_the_spec(work, clock):
    start(work)
    assert PROMPT_1 in kata("mock", "spec").output
    ended = kata("mock", "end")
    assert "Full prompt" not in ended.output and Sessions(Store()).last_finished().events == []


def test_questions_are_answered_from_the_levels_open_so_far(work, clock, grader):
    start(work)
    early = kata("mock", "ask", "What about samples whose weight is zero?")
    assert early.exit_code == 0 and "That comes up in Level 3" in early.output
    assert "open on purpose" not in early.output and "still validated" not in early.output
    assert current().asked == []  # a later level's question is not counted
    grader.runs += [make_run({1}), make_run({1, 2})]
    kata("mock", "submit")
    kata("mock", "submit")
    listed = kata("mock", "questions")
    last = AUC_QUESTIONS[-1]["ask"]["en"]
    assert f"0 of {QUESTIONS} asked" in listed.output and f"{QUESTIONS}. {last}" in listed.output
    later = kata("mock", "ask", "What about samples whose weight is zero?")
    assert later.exit_code == 0 and "still validated" in later.output
    assert current().asked == [Q["zero-weights"]]


def test_a_pair_session_shows_briefs_and_the_tool_answers_nothing(work, clock, grader):
    started = start(work, "--pair")
    assert "Pair mock interview" in started.output and BRIEF_1 in started.output
    assert PROMPT_1 not in started.output and "Your interviewer" in started.output
    asked = kata("mock", "ask", AUC_QUESTIONS[Q["ties"]]["ask"]["en"])
    assert asked.exit_code == 1 and "ask them aloud" in asked.output
    assert "one half" not in asked.output and current().asked == []
    listed = kata("mock", "questions")
    assert AUC_QUESTIONS[Q["ties"]]["ask"]["en"] not in listed.output
    hinted = kata("mock", "hint")
    assert hinted.exit_code == 1 and "your interviewer gives the hints" in hinted.output
    grader.runs.append(make_run(set()))
    failed = kata("mock", "submit", "--hint")
    assert "tied scores must count one half" in failed.output
    assert "your interviewer gives the hints" in failed.output
    assert "Ask your interviewer for a hint" not in failed.output  # said once, not twice
    assert AUC.meta["hints"]["ties"]["en"][0] not in failed.output and current().hints == []
    ended = kata("mock", "end")
    assert "Follow-up discussion" not in ended.output and "Self-check" not in ended.output
    assert "kata interviewer score" in ended.output
    assert AUC.meta["followups"][0]["question"]["en"] not in ended.output
