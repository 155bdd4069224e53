"""The README tells a contributor what `make test` costs and how to check one kata fast (18.17)."""

from __future__ import annotations

import re
import subprocess

from harness import catalog

README = (catalog.ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_says_how_long_make_test_takes():
    paragraphs = README.split("\n\n")
    assert any("make test" in p and re.search(r"\d+\s*[–-]\s*\d+ minutes", p) for p in paragraphs)


def test_make_check_runs_one_katas_meta_tests():
    assert "make check KATA=" in README
    dry = subprocess.run(["make", "-n", "check", "KATA=auc_roc"], cwd=catalog.ROOT,
                         capture_output=True, text=True)
    assert dry.returncode == 0, dry.stderr
    assert re.search(r"pytest tests/test_katas\.py -k auc_roc\b", dry.stdout), dry.stdout


def test_make_check_without_a_kata_says_how_to_call_it():
    bare = subprocess.run(["make", "check"], cwd=catalog.ROOT, capture_output=True, text=True,
                          timeout=60)
    assert bare.returncode != 0 and "make check KATA=" in bare.stdout + bare.stderr
