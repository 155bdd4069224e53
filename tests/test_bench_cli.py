"""`kata bench` on an 80-column terminal, and what a --quick run dares to print (issue 18.13)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from harness import catalog
from harness.cli import app
from harness.loader import load_module

WIDE = ["slot_refill_decoder", "prefill_decode_scheduler"]  # quick, and wider than 80 columns


def bench_table(name: str, quick: bool = True):
    kata = catalog.get(name)
    runner = load_module(kata.bench_path, f"test_bench_{name}")
    return runner.main(load_module(kata.solution_path, f"test_impl_{name}"), quick=quick)


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("name", WIDE)
def test_a_wide_table_is_stacked_not_cut_at_80_columns(name):
    table = bench_table(name)
    result = CliRunner().invoke(app, ["bench", name, "--quick"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "…" not in result.output
    assert max(map(len, result.output.splitlines())) <= 80
    shown = flat(result.output)
    for cell in (*table.columns, *(c for row in table.rows for c in row)):
        assert flat(cell) in shown


def test_a_quick_run_prints_no_tokens_per_second_and_says_timings_are_noise():
    assert not any("tokens/s" in c for c in bench_table("slot_refill_decoder").columns)
    result = CliRunner().invoke(app, ["bench", "slot_refill_decoder", "--quick"])
    assert result.exit_code == 0, result.output
    assert "tokens/s" in result.output and "without --quick" in result.output
