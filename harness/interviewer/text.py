"""Every sentence `kata interviewer` prints or writes, in English and Traditional Chinese."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str]] = {
    # (English, Traditional Chinese); placeholders are str.format fields
    # the script
    "script_title": ("Interviewer's script · {title}", "面試官腳本 · {title}"),
    "script_intro": ("{minutes} min · {levels} levels. For the interviewer only: it holds the "
                     "answers, the hints and the classic mistakes. The candidate starts with "
                     "`kata mock start {kata} --pair`; follow them live with "
                     "`kata interviewer watch`.",
                     "{minutes} 分鐘 · 共 {levels} 關。僅供面試官使用：裡面有答案、提示和常見錯誤。"
                     "應試者用 `kata mock start {kata} --pair` 開始；用 `kata interviewer watch` "
                     "即時跟進。"),
    "sheet": ("Level {n} of {total} · {title}", "第 {n} 關（共 {total} 關）· {title}"),
    "time": ("Time: {start}–{end}. Not passing at {end}: give the nudges of the failing "
             "categories; at {pointers}: the pointers. The follow-ups start at {followups}, "
             "whatever the level.",
             "時間：{start}–{end}。到 {end} 還沒通過：給失敗類別的第一個提示；到 {pointers}："
             "給第二個提示。不論進行到哪一關，{followups} 開始後續討論。"),
    "read_out": ("Read out (the brief):", "念給應試者聽（簡述）："),
    "no_brief": ("(No brief yet: say the task in a few sentences, without the edge rules.)",
                 "（還沒有簡述：用幾句話說明題目，先不提邊界規則。）"),
    "answer_key": ("The full prompt (your answer key):", "完整題目（你的答案本）："),
    "questions": ("Clarifying questions and the answers to give (log one with "
                  "`kata interviewer answered N`):",
                  "釐清問題與要給的回答（用 `kata interviewer answered N` 記錄）："),
    "no_questions": ("(none at this level)", "（這一關沒有）"),
    "left_open": ("Left open on purpose: any reasonable choice is fine; ask which one they make.",
                  "刻意留白：任何合理的選擇都可以，請應試者說明選了哪一種。"),
    "hints": ("Hint ladders, nudge first, then the pointer (log one with "
              "`kata interviewer hint CATEGORY`):",
              "提示階梯，先給第一個提示，再給第二個（用 `kata interviewer hint CATEGORY` 記錄）："),
    "nudge": ("nudge", "第一個提示"),
    "pointer": ("pointer", "第二個提示"),
    "used_by": ("for", "對應測試"),
    "mistakes": ("Classic mistakes that show first at this level, with the hidden tests that "
                 "catch them:",
                 "在這一關最先出現的常見錯誤，以及抓到它們的隱藏測試："),
    "planted": ("planted in the stub", "埋在 stub 裡"),
    "caught_by": ("caught by", "抓到它的測試"),
    "followups": ("Follow-up questions and the points a good answer covers",
                  "後續討論問題與好回答會提到的要點"),
    "selfcheck": ("Self-check", "自我檢查"),
    "other_hints": ("Hint categories no hidden test uses", "沒有隱藏測試使用的提示類別"),
    "other_mistakes": ("Mistakes whose hidden tests were not found", "找不到對應隱藏測試的錯誤"),
    "rubric": ("The rubric (score with `kata interviewer score`)",
               "評分標準（用 `kata interviewer score` 評分）"),
    "this_kata": ("on this kata", "在這一題"),
    "reveal": ("The script holds {kata}'s answers, hints and classic mistakes. Reveal it? It is "
               "recorded in your progress.",
               "腳本裡有 {kata} 的答案、提示和常見錯誤。要顯示嗎？這會記錄在你的進度裡。"),
    "wrote": ("Wrote {path}", "已寫入 {path}"),
    # the live view
    "watch_header": ("Following the pair session on {kata} · started {when} · the candidate's "
                     "file: {file}. Ctrl-C stops watching; the session is never touched.",
                     "正在跟進 {kata} 的雙人面試 · 開始於 {when} · 應試者的檔案：{file}。"
                     "按 Ctrl-C 停止跟進；這場面試不會被改動。"),
    "watch_line": ("Level {n} of {total} · {left} left", "第 {n} 關（共 {total} 關）· 剩下 {left}"),
    "watch_late": ("Level {n} of {total} · time is up: the session closes at the candidate's "
                   "next command",
                   "第 {n} 關（共 {total} 關）· 時間到：應試者下一個指令時面試會結束"),
    "watch_stopped": ("Stopped watching; the session goes on.", "已停止跟進；面試仍在進行。"),
    "ev_submit": ("[{at}] Level {n} · submit: {passed} of {total} hidden tests pass",
                  "[{at}] 第 {n} 關 · 提交：隱藏測試通過 {passed} / {total}"),
    "ev_import": ("[{at}] submit: the file does not import: {error}",
                  "[{at}] 提交：檔案無法匯入：{error}"),
    "ev_failure": ("  ✗ {where}{title} [{hint}]{times}", "  ✗ {where}{title} [{hint}]{times}"),
    "ev_where": ("(Level {n}) ", "（第 {n} 關）"),
    "ev_likely": ("      likely: {mistake} — see mistake `{name}`",
                  "      可能是：{mistake} — 見錯誤 `{name}`"),
    "ev_pass": ("[{at}] Level {n} passed (it took {took})", "[{at}] 第 {n} 關通過（花了 {took}）"),
    "ev_unlocked": ("  Level {n} is unlocked: read out its brief.",
                    "  第 {n} 關已解鎖：念出它的簡述。"),
    "ev_hint": ("[{at}] hint {step} of 2 given for {category}",
                "[{at}] 給了 {category} 的提示 {step} / 2"),
    "ev_ask": ("[{at}] question {number} answered: {ask}", "[{at}] 回答了第 {number} 題：{ask}"),
    "ev_spec": ("[{at}] the candidate opened the full prompt (Levels 1–{n})",
                "[{at}] 應試者打開了完整題目（第 1–{n} 關）"),
    "ev_time_up": ("[{at}] time is up: the file was graded as it stood",
                   "[{at}] 時間到：檔案已按當時的內容評分"),
    "ev_end": ("[{at}] the session is over ({reason}): {passed} of {total} levels passed. Score "
               "it with `kata interviewer score`, then `kata interviewer report`.",
               "[{at}] 面試結束（{reason}）：通過 {passed} / {total} 關。用 "
               "`kata interviewer score` 評分，再用 `kata interviewer report` 產生回饋。"),
    "reason_passed": ("every level passes", "每一關都通過"),
    "reason_time": ("time is up", "時間到"),
    "reason_ended": ("ended early", "提早結束"),
    # what the interviewer logs
    "no_pair": ("No pair session is open. The candidate starts one with "
                "`kata mock start KATA --pair`.",
                "目前沒有進行中的雙人面試。應試者用 `kata mock start KATA --pair` 開始一場。"),
    "no_pair_yet": ("There is no pair session yet: the candidate starts one with "
                    "`kata mock start KATA --pair`.",
                    "還沒有任何雙人面試：應試者用 `kata mock start KATA --pair` 開始一場。"),
    "other_kata": ("The pair session is on {kata}, not {wanted}.",
                   "這場雙人面試的題目是 {kata}，不是 {wanted}。"),
    "bad_category": ("{kata} has no hint category {category!r}; its categories: {known}",
                     "{kata} 沒有提示類別 {category!r}；它的類別有：{known}"),
    "bad_question": ("{kata} has no question {which!r}: give a number from 1 to {n}, or an id "
                     "({ids})",
                     "{kata} 沒有問題 {which!r}：請給 1 到 {n} 的題號，或題目 id（{ids}）"),
    "time_up": ("The session's time is up: nothing logged.",
                "這場面試的時間已到：沒有記錄任何東西。"),
    "logged_hint": ("Logged at {at}: hint {step} of 2 ({kind}) for {category}: {text}",
                    "{at} 已記錄：{category} 的提示 {step} / 2（{kind}）：{text}"),
    "hint_spent": ("Both hints for {category} were given already; not counted again. The "
                   "pointer: {text}",
                   "{category} 的兩個提示都給過了，不再計入。第二個提示：{text}"),
    "hints_given": ("Hints given so far: {n}", "目前給過的提示：{n}"),
    "logged_answer": ("Logged at {at}: question {number} answered: {ask}",
                      "{at} 已記錄：回答了第 {number} 題：{ask}"),
    "answered_before": ("Question {number} was logged already; it counts once.",
                        "第 {number} 題已經記錄過了，只算一次。"),
    # scoring
    "score_title": ("Scoring the pair session on {kata} (started {when})",
                    "替 {kata} 的雙人面試評分（開始於 {when}）"),
    "anchor": ("{level} {label}: {text}", "{level} {label}：{text}"),
    "anchor_own": ("on this kata: {text}", "在這一題：{text}"),
    "labelled": ("{label}: {text}", "{label}：{text}"),
    "ask_level": ("Level, 1 to 4", "等級（1 到 4）"),
    "ask_evidence": ("Evidence: what you saw or heard", "證據：你看到或聽到了什麼"),
    "ask_point": ("Covered: {point}", "有提到：{point}"),
    "ask_notes": ("Notes for the candidate (Enter for none)",
                  "給應試者的備註（直接按 Enter 表示沒有）"),
    "scored": ("Stored for the session of {when}: {n} dimension(s) scored, {covered} of {points} "
               "follow-up points covered. `kata interviewer report` shows the feedback.",
               "已存入 {when} 那場面試：評了 {n} 個面向，後續討論要點提到 {covered} / {points}。"
               "用 `kata interviewer report` 查看回饋。"),
    "bad_dimension": ("unknown dimension {name!r}; one of: {known}",
                      "沒有 {name!r} 這個面向；可用的有：{known}"),
    "bad_level": ("{dimension}: the level must be 1 (poor), 2 (mixed), 3 (good) or 4 "
                  "(excellent), got {level!r}",
                  "{dimension}：等級必須是 1（不佳）、2（好壞參半）、3（良好）或 4（優秀），"
                  "收到的是 {level!r}"),
    "bad_pair": ("--dimension takes ID=LEVEL (such as correctness=3), got {text!r}",
                 "--dimension 的格式是 ID=LEVEL（例如 correctness=3），收到的是 {text!r}"),
    "evidence_count": ("give one --evidence per --dimension, in the same order: {d} "
                       "dimension(s), {e} evidence",
                       "每個 --dimension 都要有一個 --evidence，順序相同：目前有 {d} 個面向、"
                       "{e} 個證據"),
    "empty_evidence": ("{dimension}: the evidence must say what you saw",
                       "{dimension}：證據要寫出你看到了什麼"),
    "bad_point": ("no follow-up point {text!r}: give F.P, follow-up F and its point P as the "
                  "script numbers them",
                  "沒有後續討論要點 {text!r}：請用 F.P，F 是後續討論題號，P 是要點編號（同腳本）"),
    "nothing_to_score": ("Nothing to score: give --dimension ID=LEVEL --evidence TEXT (and "
                         "--covered F.P, --notes TEXT), or run it on a terminal to be asked.",
                         "沒有可以評分的內容：請給 --dimension ID=LEVEL --evidence TEXT（以及 "
                         "--covered F.P、--notes TEXT），或在終端機上執行以逐項詢問。"),
    # the report
    "report_title": ("Feedback report · {title}", "回饋報告 · {title}"),
    "report_session": ("Pair session of {when} · {minutes} min · {passed} of {total} levels "
                       "passed",
                       "{when} 的雙人面試 · {minutes} 分鐘 · 通過 {passed} / {total} 關"),
    "still_open": ("The session is still open: this is the report so far.",
                   "面試還在進行中：以下是目前為止的報告。"),
    "timeline": ("Timeline", "時間軸"),
    "tl_start": ("[00:00] started at Level 1", "[00:00] 從第 1 關開始"),
    "measured": ("What the grader measured", "評分程式的量測結果"),
    "measured_level": ("Level {n}: {passed} of {total} hidden tests in the last submit",
                       "第 {n} 關：最後一次提交通過隱藏測試 {passed} / {total}"),
    "measured_passed": (" · passed at {at}", " · {at} 通過"),
    "not_submitted": ("Level {n}: not graded", "第 {n} 關：沒有評分"),
    "totals": ("Submits: {submits} · hints given: {hints} · questions answered: {asked} of "
               "{total}",
               "提交：{submits} 次 · 給過的提示：{hints} · 回答的問題：{asked} / {total}"),
    "hit": ("Classic mistakes the failing tests pointed at:", "失敗測試指向的常見錯誤："),
    "hit_item": ("  · {mistake} (`{name}`), first at {at}: {state}",
                 "  · {mistake}（`{name}`），{at} 第一次出現：{state}"),
    "fixed": ("fixed by the end", "結束前已修正"),
    "still": ("still failing at the end", "到結束時仍然失敗"),
    "none_hit": ("No failing test pointed at a classic mistake.",
                 "沒有失敗測試指向常見錯誤。"),
    "assessment": ("The interviewer's assessment", "面試官的評估"),
    "not_scored": ("Not scored yet: the interviewer runs `kata interviewer score`.",
                   "還沒有評分：面試官執行 `kata interviewer score`。"),
    "dim_line": ("{name}: {level} ({label})", "{name}：{level}（{label}）"),
    "dim_unscored": ("{name}: not scored", "{name}：未評分"),
    "evidence": ("    {text}", "    {text}"),
    "points": ("Follow-up points covered: {covered} of {total}",
               "提到的後續討論要點：{covered} / {total}"),
    "point_yes": ("  ✓ {text}", "  ✓ {text}"),
    "point_no": ("  ✗ {text}", "  ✗ {text}"),
    "notes": ("Notes: {text}", "備註：{text}"),
    "next": ("Next kata to try: {kata} ({title}), `kata mock start {kata} --brief`",
             "下一題建議：{kata}（{title}），`kata mock start {kata} --brief`"),
    "again": ("Next: {kata} again, solo from the briefs: `kata mock start {kata} --brief`",
              "下一步：再做一次 {kata}，自己從簡述開始：`kata mock start {kata} --brief`"),
    "all_done": ("Every kata is passed: pick any for another round.",
                 "每一題都通過了：任選一題再來一輪。"),
    # kata progress
    "history": ("Interviewer scores (pair sessions)", "面試官評分（雙人面試）"),
    "col_when": ("when", "時間"),
    "col_kata": ("kata", "題目"),
    "col_levels": ("levels", "關卡"),
    "col_rubric": ("rubric", "評分"),
    "col_points": ("follow-up points", "後續要點"),
    "legend": ("rubric: {names}; each 1 (poor) to 4 (excellent), · not scored",
               "評分依序為：{names}；每項 1（不佳）到 4（優秀），· 表示未評分"),
}

INDEX = {"en": 0, "zh-TW": 1}


def say(key: str, lang: str, **fields: object) -> str:
    """The message `key` in `lang`, with its fields filled in."""
    return MESSAGES[key][INDEX[lang]].format(**fields)
