"""Traditional Chinese house style over every zh-TW text a learner reads (tools/zh_lint.py)."""

from __future__ import annotations

import importlib.util

import pytest

from harness import catalog

pytest.importorskip("autocorrect_py", reason="the zh-TW linter needs autocorrect-py ('.[test]')")
pytest.importorskip("opencc", reason="the Simplified-character check needs opencc ('.[test]')")
spec = importlib.util.spec_from_file_location("zh_lint", catalog.ROOT / "tools" / "zh_lint.py")
zh_lint = importlib.util.module_from_spec(spec)
spec.loader.exec_module(zh_lint)

@pytest.mark.parametrize("path", zh_lint.sources(), ids=lambda p: str(p.relative_to(catalog.ROOT)))
def test_zh_tw_text_follows_the_house_style(path):
    found = zh_lint.problems(path)
    assert not found, "run `python tools/zh_lint.py --fix`, then fix the rest by hand:\n" + \
        "\n".join(found)


@pytest.mark.parametrize("before, after", [
    ("標籤(整數);同分算一半:正在被 拜訪。", "標籤（整數）；同分算一半：正在被拜訪。"),
    ("key 與 value(KV)存在", "key 與 value（KV）存在"),
    ("它的值是1,不是2", "它的值是 1，不是 2"),
    ("第二關;`with s(...) as t:` 離開時", "第二關；`with s(...) as t:` 離開時"),
    ("P(s+ > s-) + 1/2 * P(s+ = s-)。", "P(s+ > s-) + 1/2 * P(s+ = s-)。"),
    ("```\nf(a, b)  # 中文:註解\n```\n中文(英文)", "```\nf(a, b)  # 中文：註解\n```\n中文（英文）"),
    ("a, b and c; (x)", "a, b and c; (x)"),
    ("$\\max(a, b)$ 是上界", "$\\max(a, b)$ 是上界"),
    ("切片 `row[-L:]` 與 (n,) 的形狀", "切片 `row[-L:]` 與 (n,) 的形狀"),
    ("比較 A vs. B 的差別", "比較 A vs. B 的差別"),
])
def test_the_fixer_widens_marks_beside_chinese_and_leaves_code_and_english(before, after):
    assert zh_lint.fix(before) == after
    assert zh_lint.fix(after) == after


# One text per defect kind the lint exists for, each with the rule that must catch it.
DEFECTS = {
    "mark": ("結果是 `x`,\n下一行是中文。", "結果是 `x`，\n下一行是中文。"),
    "mark between words": ("只要還有請求不是 FINISHED,`has_unfinished()` 就是真的。",
                           "只要還有請求不是 FINISHED，`has_unfinished()` 就是真的。"),
    "bracket": ("接受一個 token(即使\n它是空的)，再回傳。",
                "接受一個 token（即使\n它是空的），再回傳。"),
    "formula": ("下界是 max（總數 / B，最長）。", "下界是 max(總數 / B，最長)。"),
    "sentence-end ?": ("你會怎麼算 AUC?", "你會怎麼算 AUC？"),
    "sentence-end ? in a string": ('a = "你要怎麼算 AUC?"', 'a = "你要怎麼算 AUC？"'),
    "sentence-end .": ("最後一列免費多給一個\nbonus token.", "最後一列免費多給一個\nbonus token。"),
    "space-after-mark": ("- **挑選，不要相加。** `np.where` 不會。",
                         "- **挑選，不要相加**。`np.where` 不會。"),
    "space-after-full-stop": ("先做這個。 再做那個。", "先做這個。再做那個。"),
    "space": ("正在被 拜訪", "正在被拜訪"),
    "admonition": ('??? note "解答"\n    它會先請你確認,再印出它。',
                   '??? note "解答"\n    它會先請你確認，再印出它。'),
}


@pytest.mark.parametrize("kind", DEFECTS)
def test_each_defect_kind_is_caught_and_fixed(kind, tmp_path):
    before, after = DEFECTS[kind]
    assert zh_lint.fix(before) == after
    page = tmp_path / "page.zh-TW.md"
    page.write_text(before, encoding="utf-8")
    assert zh_lint.findings(page), f"{kind}: not reported"


def test_an_admonition_no_longer_hides_the_rest_of_the_file():
    text = '??? note "解答"\n    第一段。\n\n之後的段落(括號)也要檢查,不能略過。'
    assert zh_lint.fix(text) == \
        '??? note "解答"\n    第一段。\n\n之後的段落（括號）也要檢查，不能略過。'


def test_words_the_glossary_rules_out_are_reported_with_the_term_to_use():
    found = zh_lint.off_terms("這些數據的時間戳與時間戳記都在 `數據` 裡，由 benchmark 量出；"
                              "效能基準（benchmark）")
    assert found == ["'數據' → 資料 (data)", "'時間戳' → 時間戳記 (timestamp)",
                     "'benchmark' → 效能基準 (benchmark)"]


def test_every_glossary_term_has_one_chinese_term_and_its_ruled_out_words_are_not_it():
    for term in zh_lint.glossary():
        assert term["en"] and term["zh-TW"] and term["not"], term
        assert not zh_lint.off_terms(term["zh-TW"]), f"{term['zh-TW']} rules itself out"


def test_english_comments_in_a_chinese_code_block_are_reported_and_names_are_not():
    text = ("```python\ndef f(tenant, request_id): ...  # (tenant, request_id)\n"
            "x = 1  # requests queued\n```")
    assert zh_lint.english_comments(text) == ["# requests queued"]


def test_the_report_counts_each_kind(tmp_path, capsys, monkeypatch):
    page = tmp_path / "docs" / "a.zh-TW.md"
    page.parent.mkdir()
    page.write_text("你會怎麼算 AUC?\n先做這個。 再做那個。\n這是數據。\n", encoding="utf-8")
    monkeypatch.setattr(zh_lint, "ROOT", tmp_path)
    assert zh_lint.main([]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == \
        "sentence-end: 1, space-after-mark: 1, term: 1"


def test_simplified_characters_are_found_and_shared_ones_left_to_review():
    assert zh_lint.simplified("这是数据，台灣的群組佔用 `这`") == ["据", "数", "这"]
