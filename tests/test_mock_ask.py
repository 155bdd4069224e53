"""The brief-mode interviewer as a candidate meets it: what a question is heard as (an answer, an
ask-back, a later level, a point left open, nothing), in which language, what the scorecard counts
of it, and where the next hint goes when the diagnosis names a likely mistake."""

from __future__ import annotations

import pytest
from mockkit import (
    AUC_QUESTIONS,
    L1,
    LEVEL_1_QUESTIONS,
    LEVEL_2_QUESTIONS,
    Q,
    current,
    kata,
    make_run,
    start,
)

from harness import catalog, diagnosis
from harness.session import interview
from harness.session.matcher import Match, Matcher, Outcome

AUC = catalog.get("auc_roc")
ASK = {q["id"]: q["ask"] for q in AUC_QUESTIONS}
ANSWER = {q["id"]: q["answer"] for q in AUC_QUESTIONS}
POINT = AUC.meta["open_points"]["method"]["point"]


def number(qid: str) -> str:
    return str(Q[qid] + 1)


@pytest.fixture
def heard(monkeypatch) -> dict[str, Match]:
    """Questions the interviewer is made to hear a given way (the rest go to the real matcher):
    a confident wrong match cannot be told from a right one by the tool, only by the test."""
    script: dict[str, Match] = {}

    class Scripted(Matcher):
        def match(self, asked: str, level: int) -> Match:
            return script.get(asked) or super().match(asked, level)

    monkeypatch.setattr(interview, "Matcher", Scripted)
    return script


def test_the_scorecard_counts_own_words_apart_from_picks_and_ticks_only_matches(
        work, clock, heard):
    start(work, "--brief")
    meant = "Are booleans fine as labels?"  # means label-types, heard as direction
    heard[meant] = Match(Outcome.ANSWER, "en", ("direction",), 1)
    heard["What may the inputs be?"] = Match(Outcome.ASK_BACK, "en",
                                             ("input-types", "modify-inputs"))
    clock.advance(60)
    wrong = kata("mock", "ask", meant)
    assert wrong.exit_code == 0
    assert f"The interviewer heard: {ASK['direction']['en']}" in wrong.output
    clock.advance(60)
    tie = kata("mock", "ask", "What may the inputs be?")
    a, b = number("input-types"), number("modify-inputs")
    assert tie.exit_code == 0 and f"Did you mean {a} or {b}?" in tie.output
    assert ASK["input-types"]["en"] in tie.output and ASK["modify-inputs"]["en"] in tie.output
    assert ASK["scikit-learn"]["en"] not in tie.output  # those two only, never the whole list
    assert ANSWER["input-types"]["en"] not in tie.output
    assert current().asked == [Q["direction"]]  # the ask-back logged nothing
    clock.advance(60)
    picked = kata("mock", "ask", a)  # answering the ask-back by number
    assert ANSWER["input-types"]["en"] in picked.output
    clock.advance(60)
    assert kata("mock", "ask", "How should ties count?").exit_code == 0  # the notes' own words

    card = kata("mock", "end").output
    assert (f"Questions: 2 asked in your own words, 1 picked from a list or by number, of "
            f"{LEVEL_1_QUESTIONS} at the levels you reached") in card
    assert f"✓ {ASK['direction']['en']} (asked at 01:00, Level 1)" in card
    assert f"✓ {ASK['ties']['en']} (asked at 04:00, Level 1)" in card
    assert f"○ {ASK['input-types']['en']} (picked by number at 03:00, Level 1)" in card
    assert f"· not asked: {ASK['label-types']['en']}" in card  # the entry that was meant
    assert f"· not asked: {ASK['modify-inputs']['en']}" in card  # offered, never picked
    assert ASK["zero-weights"]["en"] not in card  # Level 3 was never reached


def test_a_question_asked_in_own_words_after_a_pick_counts_as_own(work, clock):
    start(work, "--brief")
    kata("mock", "ask", number("ties"))
    kata("mock", "ask", "How should ties count?")
    session = current()
    assert session.asked == [Q["ties"]] and session.asked_own == [Q["ties"]]
    assert "Questions: 1 asked in your own words, 0 picked" in kata("mock", "end").output


def test_a_later_levels_question_is_deferred_and_not_counted(work, clock, grader):
    start(work, "--brief")
    early = kata("mock", "ask", ASK["zero-weights"]["en"])
    assert "That comes up in Level 3 — ask again when it opens." in early.output
    assert ANSWER["zero-weights"]["en"] not in early.output and current().asked == []
    zh = kata("mock", "ask", ASK["zero-weights"]["zh-TW"])
    assert "這會在第 3 關談到" in zh.output and current().asked == []
    grader.runs += [make_run({1}), make_run({1, 2})]
    kata("mock", "submit")
    kata("mock", "submit")
    now = kata("mock", "ask", ASK["zero-weights"]["en"])
    assert ANSWER["zero-weights"]["en"] in now.output and current().asked == [Q["zero-weights"]]


def test_a_look_ahead_no_entry_settles_is_put_off_and_not_counted(work, clock, grader):
    start(work, "--brief")
    ahead = kata("mock", "ask", "will a later level bring streaming output?")
    assert ahead.exit_code == 0 and "not said before they open" in ahead.output
    zh = kata("mock", "ask", "下一關會有串流輸出嗎？")
    assert "開放之前不會先說" in zh.output and current().asked == []


def test_only_a_question_about_a_point_left_open_gets_your_choice(work, clock, grader):
    start(work, "--brief")
    chosen = kata("mock", "ask", "how exact must the result be?")
    assert chosen.exit_code == 0 and "Your choice, say which" in chosen.output
    assert POINT["en"] in chosen.output and current().asked == []
    zh = kata("mock", "ask", "用數配對的方法還是排名次的方法都可以嗎？")
    assert "由你決定" in zh.output and POINT["zh-TW"] in zh.output
    grader.runs.append(make_run({1}))
    kata("mock", "submit")
    nothing = kata("mock", "ask", "What is the weather like?")
    assert "no answer to that in their notes" in nothing.output
    assert "open on purpose" not in nothing.output and POINT["en"] not in nothing.output
    card = kata("mock", "end").output
    assert f"of {LEVEL_2_QUESTIONS} at the levels you reached" in card


@pytest.mark.parametrize("session_lang, asked, lang", [
    ("en", "同分怎麼算？", "zh-TW"), ("zh-TW", "How do ties count?", "en")])
def test_a_question_is_answered_in_the_language_it_was_asked_in(work, clock, session_lang,
                                                                 asked, lang):
    start(work, "--brief", "--lang", session_lang)
    other = "en" if lang == "zh-TW" else "zh-TW"
    answered = kata("mock", "ask", asked)
    assert ASK["ties"][lang] in answered.output and ANSWER["ties"][lang] in answered.output
    assert ANSWER["ties"][other] not in answered.output
    assert ASK["ties"][other] not in answered.output  # "heard" in the question's language


def test_a_missing_file_is_offered_from_the_stub_or_said_how(tmp_path, clock):
    new = tmp_path / "mine" / "auc.py"
    declined = kata("mock", "auc_roc", "--file", str(new), input="n\n")
    assert declined.exit_code == 1 and "does not exist yet" in declined.output
    assert f"cp katas/auc_roc/auc.py {new}" in declined.output
    assert not new.exists() and current() is None
    started = kata("mock", "auc_roc", "--file", str(new), input="y\n")
    assert started.exit_code == 0 and "Started" in started.output
    assert new.read_text(encoding="utf-8") == AUC.pristine_stub()
    assert current().file == str(new.resolve())


def test_the_command_for_a_missing_file_works_from_any_folder(tmp_path, monkeypatch, clock):
    monkeypatch.chdir(tmp_path)  # outside the checkout: the stub by its whole path
    declined = kata("mock", "auc_roc", "--file", "mine.py", input="n\n")
    assert f"cp {AUC.stub_path} mine.py" in " ".join(declined.output.split())


def test_submit_hint_shows_the_hint_without_saying_how_to_ask_for_one(work, clock, grader):
    start(work)
    grader.runs.append(make_run(set()))
    hinted = kata("mock", "submit", "--hint")
    assert "Hint 1 of 2" in hinted.output and "kata mock hint" not in hinted.output
    grader.runs.append(make_run(set()))
    assert "kata mock hint" in kata("mock", "submit").output


def likely(mutant: str, *caught_by: str) -> diagnosis.Likely:
    return diagnosis.Likely(mutant, 1, 0.9, 2, 0, 0, caught_by)


def test_the_hint_ladder_follows_the_best_ranked_mistake(work, clock, grader):
    (ties, _), (orientation, _) = L1
    start(work)
    grader.ranked = [likely("flipped", orientation), likely("ties_as_wins", ties)]
    grader.runs.append(make_run(set()))
    first = kata("mock", "submit", "--hint")  # the first failing test is the ties one
    assert AUC.meta["hints"]["orientation"]["en"][0] in first.output
    second = kata("mock", "hint")
    assert AUC.meta["hints"]["orientation"]["en"][1] in second.output
    third = kata("mock", "hint")  # the best-ranked category is spent: the runner-up's
    assert AUC.meta["hints"]["ties"]["en"][0] in third.output
    assert current().hints == [("orientation", 0), ("orientation", 1), ("ties", 0)]


def test_a_likely_mistake_whose_tests_pass_leaves_the_ladder_as_it_was(work, clock, grader):
    start(work)
    grader.ranked = [likely("elsewhere", "a test this submit does not fail")]
    grader.runs.append(make_run(set()))
    kata("mock", "submit", "--hint")
    assert current().hints == [("ties", 0)]  # the first failing test's category, as before
