"""`kata solution` prints the reference whole: never wrapped, never cropped (issue 18.1)."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from typer.testing import CliRunner

from harness import catalog, cli

ANSI = re.compile(r"\x1b\[[0-9;]*m")
KATAS = [k.name for k in catalog.all_katas()]


@pytest.mark.parametrize("name", KATAS)
def test_piped_solution_is_the_file_verbatim(name):
    result = CliRunner().invoke(cli.app, ["solution", name, "--yes"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert catalog.get(name).solution_path.read_text(encoding="utf-8") in result.output


def test_solution_on_a_narrow_terminal_keeps_every_line_whole(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(cli, "console", Console(file=out, force_terminal=True, width=80))
    result = CliRunner().invoke(cli.app, ["solution", "slot_refill_decoder", "--yes"])
    assert result.exit_code == 0, result.output
    assert "\x1b[" in out.getvalue()  # highlighted on a terminal
    code = catalog.get("slot_refill_decoder").solution_path.read_text(encoding="utf-8")
    assert any(len(line) > 80 for line in code.splitlines()), "the check needs wide lines"
    # Line for line the file: nothing cut, nothing wrapped, no padding that the terminal would wrap.
    assert ANSI.sub("", out.getvalue()).splitlines() == code.splitlines()
