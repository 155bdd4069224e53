"""The Chinese Benchmarks page speaks Chinese: every benchmark file's heading, column names, notes
and the table cells that are words (a row's label, a figure's remark) have their Chinese in
harness/bench.zh-TW.toml; the figures stay as measured."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from harness import bench

ROOT = Path(__file__).resolve().parents[2]
RESULTS = sorted((ROOT / "docs" / "benchmarks").rglob("*.md"))
spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "tools" / "docs_hooks.py")
hooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hooks)
ENGLISH = re.compile(r"\b[a-z]{3,}[ ,;:]+[a-z]{3,}\b")  # two English words in a row
HAN = re.compile(r"[\u3400-\u9fff]")
# A lowercase English word; an identifier (`run_batch`, `starvation_ms=1000`, `LinearCost`) is none.
WORD = re.compile(r"(?<![\w-])[a-z]{2,}(?:-[a-z]+)*(?![\w-])")


def _chinese(path: Path) -> str:
    body = path.read_text(encoding="utf-8").strip()
    return hooks.bench_chinese(re.sub(r"^(#+) ", r"##\1 ", body, flags=re.MULTILINE),
                               hooks._group(path))


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_headings_columns_and_notes_have_their_chinese(path):
    words = bench.chinese()["columns"]
    lines = _chinese(path).splitlines()
    heads = [lines[n] for n, names_columns in hooks.table_rows(lines) if names_columns]
    english = [cell.strip() for line in heads for cell in line.strip("|").split("|")
               if cell.strip() not in words.values()]
    prose = [line for line in lines if not line.startswith("|") and not HAN.search(line)
             and ENGLISH.search(re.sub(r"`[^`]*`", "", line))]
    assert not english, f"columns with no Chinese in harness/bench.zh-TW.toml: {english}"
    assert not prose, f"lines with no Chinese in harness/bench.zh-TW.toml: {prose}"


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_cells_that_are_words_have_their_chinese(path):
    """mutation.md is on the same page, through the same bench_chinese, so it is checked too."""
    lines = _chinese(path).splitlines()
    cells = [cell for n, names_columns in hooks.table_rows(lines) if not names_columns
             for cell in hooks._cells(lines[n])]
    english = [cell for cell in dict.fromkeys(cells) if not HAN.search(cell)
               and len(WORD.findall(re.sub(r"`[^`]*`", "", cell))) >= 2]
    assert not english, (f"{path.relative_to(ROOT)}: cells with no Chinese in "
                         f"harness/bench.zh-TW.toml [rows] or [[row_patterns]]: {english}")


def test_a_rerun_keeps_the_translation_and_the_figures():
    table = ("| scenario | max_wait_ms | req/s |\n| --- | --- | --- |\n"
             "| heavy: 3,500 req/s offered | 7 | 3,321 |\n"
             "| fixed fleet of 31 | 0.54 ms | 12.5x fewer |")
    assert hooks.bench_chinese(table, "sync_batch_scheduler").splitlines()[2:] == [
        "| 重負載：送入 3,500 req/s | 7 | 3,321 |",
        "| 固定 31 個 replica | 0.54 ms | 只有 1/12.5 |"]


def test_a_kata_heading_is_its_chinese_title():
    body = _chinese(ROOT / "docs" / "benchmarks" / "auc_roc.md")
    title = hooks._meta("auc_roc")["title"]["zh-TW"]
    assert body.splitlines()[0] == f"### {title}\uff1a效能基準"
