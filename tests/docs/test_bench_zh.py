"""The Chinese Benchmarks page speaks Chinese: every benchmark file's heading, column names and
notes have their Chinese in docs/benchmarks/zh-TW.toml (the tables' cells stay as measured)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = sorted((ROOT / "docs" / "benchmarks").rglob("*.md"))
spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "tools" / "docs_hooks.py")
hooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hooks)
ENGLISH = re.compile(r"\b[a-z]{3,}[ ,;:]+[a-z]{3,}\b")  # two English words in a row
HAN = re.compile(r"[\u3400-\u9fff]")


def _chinese(path: Path) -> str:
    body = path.read_text(encoding="utf-8").strip()
    return hooks.bench_chinese(re.sub(r"^(#+) ", r"##\1 ", body, flags=re.MULTILINE),
                               hooks._group(path))


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_headings_columns_and_notes_have_their_chinese(path):
    words = hooks._bench_words()["columns"]
    lines = _chinese(path).splitlines()
    heads = [line for n, line in enumerate(lines[:-1])
             if line.startswith("|") and lines[n + 1].startswith("| ---")]
    english = [cell.strip() for line in heads for cell in line.strip("|").split("|")
               if cell.strip() not in words.values()]
    prose = [line for line in lines if not line.startswith("|") and not HAN.search(line)
             and ENGLISH.search(re.sub(r"`[^`]*`", "", line))]
    assert not english, f"columns with no Chinese in docs/benchmarks/zh-TW.toml: {english}"
    assert not prose, f"lines with no Chinese in docs/benchmarks/zh-TW.toml: {prose}"


def test_a_kata_heading_is_its_chinese_title():
    body = _chinese(ROOT / "docs" / "benchmarks" / "auc_roc.md")
    title = hooks._meta("auc_roc")["title"]["zh-TW"]
    assert body.splitlines()[0] == f"### {title}\uff1a效能基準"
