"""Every sentence the mock interview prints, in English and Traditional Chinese side by side."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str]] = {
    # (English, Traditional Chinese); placeholders are str.format fields
    "banner": ("Mock interview · {title} · {minutes} min · your file: {file}",
               "模擬面試 · {title} · {minutes} 分鐘 · 你的檔案：{file}"),
    "resumed": ("Your session on {kata} is still open (started {when}); here is where you are.",
                "你在 {kata} 的面試還沒結束（開始於 {when}），目前進度如下。"),
    "level": ("Level {n} of {total} · {title}", "第 {n} 關（共 {total} 關）· {title}"),
    "clock": ("{left} left", "剩下 {left}"),
    "how_to": ("Ask clarifying questions with `kata mock ask \"…\"` (`kata mock questions` lists "
               "what the interviewer can answer). Grade your file with `kata mock submit`, or "
               "`kata mock watch` to grade every save. `kata mock status` shows this screen "
               "again, `kata mock end` stops early.",
               "用 `kata mock ask \"…\"` 問釐清問題"
               "（`kata mock questions` 列出面試官能回答的問題）。"
               "用 `kata mock submit` 評分你的檔案，或用 `kata mock watch` 在每次存檔時評分。"
               "`kata mock status` 再顯示一次這個畫面，`kata mock end` 提早結束。"),
    "banner_pair": ("Pair mock interview · {title} · {minutes} min · your file: {file}",
                    "雙人模擬面試 · {title} · {minutes} 分鐘 · 你的檔案：{file}"),
    "no_brief": ("(Level {n} has no brief yet: here is its full prompt.)",
                 "（第 {n} 關還沒有簡述，以下是完整題目。）"),
    "how_to_brief": ("This is the question as an interviewer would put it: the edge rules are "
                     "yours to ask for. Ask with `kata mock ask \"…\"` (`kata mock questions` "
                     "lists what the interviewer can answer so far); `kata mock spec` shows the "
                     "full prompt, "
                     "and the scorecard notes it. Grade your file with `kata mock submit`, or "
                     "`kata mock watch` to grade every save. `kata mock status` shows this screen "
                     "again, `kata mock end` stops early.",
                     "這是面試官口頭出題的樣子：邊界規則要靠你自己問出來。用 `kata mock ask \"…\"` "
                     "發問（`kata mock questions` 列出面試官目前能回答的問題）；`kata mock spec` "
                     "顯示完整題目，成績單會記下這件事。用 `kata mock submit` 評分你的檔案，或用 "
                     "`kata mock watch` 在每次存檔時評分。`kata mock status` 再顯示一次這個畫面，"
                     "`kata mock end` 提早結束。"),
    "how_to_pair": ("Your interviewer gives you the question, answers your questions and gives "
                    "hints; this screen stays silent. Grade your file with `kata mock submit`, or "
                    "`kata mock watch` to grade every save. `kata mock spec` shows the full prompt "
                    "(your interviewer sees that you opened it). `kata mock status` shows this "
                    "screen again, `kata mock end` stops early.",
                    "面試官會出題、回答你的問題並給提示；這個畫面不會替面試官回答。用 "
                    "`kata mock submit` 評分你的檔案，或用 `kata mock watch` 在每次存檔時評分。"
                    "`kata mock spec` 顯示完整題目（面試官會看到你打開過）。`kata mock status` "
                    "再顯示一次這個畫面，`kata mock end` 提早結束。"),
    "pair_ask": ("In a pair interview your interviewer answers your questions: ask them aloud. "
                 "Nothing was recorded.",
                 "雙人面試中由面試官回答你的問題：請直接開口問。這次沒有記錄任何東西。"),
    "pair_hint": ("In a pair interview your interviewer gives the hints: ask them for one.",
                  "雙人面試中由面試官給提示：請直接向面試官要提示。"),
    "hint_how_pair": ("Stuck? Ask your interviewer for a hint.", "卡住了嗎？請向面試官要提示。"),
    "spec": ("The full prompt of the levels open so far:", "目前已開放關卡的完整題目："),
    "spec_noted": ("(Opening the full prompt is noted on the scorecard.)",
                   "（打開完整題目這件事會記在成績單上。）"),
    "no_session": ("No mock interview is open. Start one with `kata mock [KATA]`.",
                   "目前沒有進行中的模擬面試。用 `kata mock [KATA]` 開始一場。"),
    "time_was_up": ("Your session on {kata} is over: its time was up, and your file was graded as "
                    "it stood then. `kata mock scorecard` shows the scorecard; `kata mock [KATA]` "
                    "starts a new session.",
                    "你在 {kata} 的面試已經結束：時間到了，你的檔案已按當時的內容評分。"
                    "用 `kata mock scorecard` 看成績單；用 `kata mock [KATA]` 開始新的一場。"),
    "other_open": ("A session on {kata} is still open. Finish it with `kata mock end` before "
                   "starting another.",
                   "{kata} 的面試還沒結束。請先用 `kata mock end` 結束它，再開始新的一場。"),
    "all_passed": ("You have passed every kata. Name one to practise it again: `kata mock KATA`.",
                   "你已經通過每一題了。指定一題再練一次：`kata mock KATA`。"),
    "kata_gone": ("The session's kata {kata} is no longer in katas/ (deleted or renamed). "
                  "End the session with `kata mock end`.",
                  "這場面試的題目 {kata} 已經不在 katas/ 裡（被刪除或改名）。"
                  "請用 `kata mock end` 結束這場面試。"),
    "file_gone": ("Your file {file} is missing (deleted or renamed?). Put it back and submit "
                  "again: the session is still open.",
                  "找不到你的檔案 {file}（被刪除或改名了嗎？）。"
                  "把它放回去再提交一次，面試仍在進行中。"),
    "bad_kata": ("{kata}'s kata.toml is incomplete, so it cannot be interviewed on: {problems}",
                 "{kata} 的 kata.toml 不完整，無法用來模擬面試：{problems}"),
    "interrupted": ("Interrupted. The session is still open: `kata mock status` to resume.",
                    "已中斷。面試仍在進行中：用 `kata mock status` 繼續。"),
    # questions
    "questions": ("Clarifying questions the interviewer can answer ({asked} of {total} asked):",
                  "面試官能回答的釐清問題（已問 {asked} 題，共 {total} 題）："),
    "ask_how": ("Ask one in your own words (`kata mock ask \"…\"`) or by its number "
                "(`kata mock ask 2`). Asking costs nothing: the scorecard lists what you asked "
                "and when, as an interviewer notes it.",
                "用你自己的話問（`kata mock ask \"…\"`），或用題號問（`kata mock ask 2`）。"
                "問問題不扣分：成績單會像面試官的筆記一樣，列出你問了什麼、什麼時候問的。"),
    "heard": ("The interviewer heard: {ask}", "面試官聽到的問題：{ask}"),
    "answer": ("Answer: {answer}", "回答：{answer}"),
    "asked_before": ("(you asked this one before)", "（這題你之前問過了）"),
    "no_match": ("The interviewer has no answer to that in their notes.",
                 "面試官的筆記裡沒有這個問題的答案。"),
    "open_points": ("The spec leaves these points open on purpose: any reasonable choice is "
                    "accepted, so say which one you make.",
                    "題目刻意把下列幾點留給你決定：任何合理的選擇都可以，說清楚你選了哪一種。"),
    "open_point": ("  · Level {n}: {text}", "  · 第 {n} 關：{text}"),
    "can_answer": ("Questions they can answer so far:", "面試官目前能回答的問題："),
    # submit
    "grading": ("Grading {file} …", "正在評分 {file} …"),
    "import_error": ("✗ {error}", "✗ {error}"),
    "level_passed": ("Level {n} passed at {at} (it took {took}).",
                     "第 {n} 關通過，時間 {at}（花了 {took}）。"),
    "level_counts": ("Level {n}: {passed} of {total} hidden tests pass.",
                     "第 {n} 關：隱藏測試通過 {passed} / {total}。"),
    "lower_failing": ("A level you passed before fails again, so Level {n} cannot pass yet.",
                      "之前通過的關卡又失敗了，所以第 {n} 關還不能通過。"),
    "failing": ("Failing:", "失敗的隱藏測試（名稱為英文）："),
    "failure": ("  ✗ {where}{title}{times} — {verdict}",
                "  ✗ {where}測試“{title}”{times} — {verdict}"),
    "where": ("(Level {n}) ", "（第 {n} 關）"),
    "recorded": ("This submit counts in `kata list` and `kata progress` ({why}).",
                 "這次提交已計入 `kata list` 與 `kata progress`（{why}）。"),
    "not_recorded": ("This submit is not in your progress: {why}.",
                     "這次提交沒有計入你的進度：{why}。"),
    "hint_how": ("Ask for a hint with `kata mock hint` (hints are counted).",
                 "需要提示時用 `kata mock hint`（提示次數會被記錄）。"),
    "unlocked": ("Level {n} is unlocked:", "第 {n} 關已解鎖："),
    # hints
    # Test titles exist in English only: a Chinese screen names one as the test's English name.
    "hint": ("Hint {step} of 2 for “{title}” [{category}]: {text}",
             "提示 {step} / 2 [{category}]：{text}\n"
             "  ↳ 對應的失敗隱藏測試（英文名稱）：{title}"),
    "hints_used": ("Hints used so far: {n}", "目前用掉的提示：{n}"),
    "hint_submit_first": ("Submit first: hints are for failing hidden tests of Level {n}.",
                          "請先提交：提示只針對第 {n} 關失敗的隱藏測試。"),
    "hint_none": ("Your last submit has no failing hidden test to give a hint for (it did not "
                  "import, or nothing up to Level {n} fails); submit again first.",
                  "你最後一次提交沒有可以給提示的失敗隱藏測試(檔案無法匯入，或到第 {n} 關為止都沒有"
                  "失敗)；請先再提交一次。"),
    "hints_spent": ("You have seen both hints for every failing test; the pointers again:",
                    "每個失敗測試的兩個提示你都看過了；再列一次第二個提示："),
    # watch
    "watching": ("Watching {file}: every save is graded. Ctrl-C stops watching; the session stays "
                 "open.",
                 "正在監看 {file}：每次存檔都會評分。按 Ctrl-C 停止監看，面試仍會繼續。"),
    "watch_line": ("Level {n} · {left} left · watching {file}",
                   "第 {n} 關 · 剩下 {left} · 監看 {file}"),
    "watch_stopped": ("Stopped watching. The session is still open: `kata mock watch` or "
                      "`kata mock status` to resume.",
                      "已停止監看。面試仍在進行中："
                      "用 `kata mock watch` 或 `kata mock status` 繼續。"),
    # the end
    "no_finished": ("No session has finished yet.", "還沒有結束的面試。"),
    "end_passed": ("Every level passes. Well done.", "每一關都通過了，做得好。"),
    "end_time": ("Time is up.", "時間到。"),
    "end_ended": ("You ended the session.", "你結束了這場面試。"),
    "scorecard": ("Scorecard · {title}", "成績單 · {title}"),
    "levels_passed": ("Levels passed: {n} of {total}", "通過關卡：{n} / {total}"),
    "level_time": ("  Level {n}: passed at {at} (took {took})",
                   "  第 {n} 關：{at} 通過（花了 {took}）"),
    "level_not_passed": ("  Level {n}: not passed", "  第 {n} 關：未通過"),
    "level_not_reached": ("  Level {n}: not reached", "  第 {n} 關：未到達"),
    "final_failures": ("Hidden tests failing in your last submit:",
                       "最後一次提交失敗的隱藏測試（名稱為英文）："),
    "no_failures": ("Hidden tests failing in your last submit: none",
                    "最後一次提交失敗的隱藏測試：無"),
    "no_submit": ("You never submitted.", "你沒有提交過。"),
    "time_up_graded": ("Your file was graded as it stood at time-up.",
                       "時間到時，你的檔案已按當時的內容評分。"),
    "hints_total": ("Hints used: {n}", "使用的提示：{n}"),
    "hint_item": ("  {category}: {steps}", "  {category}:{steps}"),
    "questions_total": ("Questions asked: {n} of {total} (asking costs nothing; a question not "
                        "asked is one a strong candidate would have asked)",
                        "問過的問題：{n} / {total}"
                        "（問問題不扣分；沒問的題目是表現好的應試者會問的）"),
    "question_asked": ("  ✓ {ask} (asked at {at}, Level {n})", "  ✓ {ask}（{at} 問的，第 {n} 關）"),
    "question_missed": ("  · not asked: {ask}", "  · 沒問：{ask}"),
    "followups": ("Follow-up discussion", "後續討論"),
    "points": ("  A good answer covers:", "  好的回答會提到："),
    "selfcheck": ("Self-check", "自我檢查"),
    "spec_opened": ("  Full prompt of Level {n} opened at {at}",
                    "  {at} 打開了第 {n} 關的完整題目"),
    "spec_never": ("Full prompt: never opened; you worked from the briefs and your questions.",
                   "完整題目：沒有打開過；你是靠簡述和自己的提問完成的。"),
    "end_pair": ("Your interviewer now leads the follow-up discussion, then scores the session "
                 "(`kata interviewer score`); `kata interviewer report` shows you the feedback.",
                 "接下來由面試官帶後續討論，再替這場面試評分（`kata interviewer score`）；"
                 "`kata interviewer report` 會顯示給你的回饋。"),
    "untouched": ("Your file was read, never changed.", "你的檔案只被讀取，沒有被修改。"),
    "no_meta": ("(the follow-ups are unavailable: the kata is no longer in katas/)",
                "（無法顯示後續討論：這題已經不在 katas/ 裡）"),
    # progress
    "col_kata": ("kata", "題目"),
    "col_attempts": ("attempts", "嘗試次數"),
    "mocks": ("({n} mock)", "（模擬 {n} 場）"),
    "col_best_level": ("best level", "最佳關卡"),
    "col_best_time": ("best time", "最佳時間"),
    "col_last": ("last attempt", "最近一次"),
    "solutions_seen": ("Reference solutions you have looked at (`kata solution`): {katas}",
                       "你看過的參考解答（`kata solution`）：{katas}"),
    "progress_title": ("Your progress", "你的進度"),
    "gone": ("(gone)", "（已移除）"),
    "chart": ("Chart of your scores over time: {path}", "成績趨勢圖：{path}"),
    "chart_empty": ("No graded attempt yet, so there is no chart to draw.",
                    "還沒有任何評分紀錄，所以沒有趨勢圖。"),
    "chart_title": ("Hidden tests passed over time", "隱藏測試通過率的變化"),
    "chart_y": ("hidden tests passed (%)", "隱藏測試通過率 (%)"),
    "chart_graded": ("{kata} · kata grade", "{kata} · kata grade"),
    "chart_mock": ("{kata} · mock", "{kata} · 模擬面試"),
}

INDEX = {"en": 0, "zh-TW": 1}


def say(key: str, lang: str, **fields: object) -> str:
    """The message `key` in `lang`, with its fields filled in."""
    return MESSAGES[key][INDEX[lang]].format(**fields)


def clock(seconds: float) -> str:
    """mm:ss (h:mm:ss past an hour), rounded down to the second."""
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"
