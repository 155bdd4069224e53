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
    assert not found, "run `python tools/zh_lint.py --fix`:\n" + "\n".join(found)


@pytest.mark.parametrize("before, after", [
    ("標籤(整數);同分算一半:正在被 拜訪。", "標籤（整數）；同分算一半：正在被拜訪。"),
    ("key 與 value(KV)存在", "key 與 value（KV）存在"),
    ("它的值是1,不是2", "它的值是 1，不是 2"),
    ("第二關;`with s(...) as t:` 離開時", "第二關；`with s(...) as t:` 離開時"),
    ("P(s+ > s-) + 1/2 * P(s+ = s-)。", "P(s+ > s-) + 1/2 * P(s+ = s-)。"),
    ("```\nf(a, b)  # 中文:註解\n```\n中文(英文)", "```\nf(a, b)  # 中文:註解\n```\n中文（英文）"),
    ("a, b and c; (x)", "a, b and c; (x)"),
])
def test_the_fixer_widens_marks_beside_chinese_and_leaves_code_and_english(before, after):
    assert zh_lint.fix(before) == after
    assert zh_lint.fix(after) == after


def test_simplified_characters_are_found_and_shared_ones_left_to_review():
    assert zh_lint.simplified("这是数据，台灣的群組佔用 `这`") == ["据", "数", "这"]
