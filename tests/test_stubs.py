"""The pristine stub ships with the harness: a learner's commits cannot change it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness import catalog

KATA = Path(sys.executable).with_name("kata")  # the installed command
KATAS = catalog.all_katas()


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=learner", "-c", "user.email=l@example.com", *args],
                   cwd=cwd, check=True, capture_output=True)


@pytest.mark.skipif(not KATA.exists(), reason="the kata command is not installed in this venv")
def test_reset_restores_the_stub_after_the_learner_commits_a_solution(tmp_path):
    clone = tmp_path / "fork"
    git(tmp_path, "clone", "--quiet", str(catalog.ROOT), str(clone))
    mine = clone / "katas" / "auc_roc" / "auc.py"
    mine.write_text((clone / "solutions" / "auc_roc" / "auc.py").read_text(encoding="utf-8"),
                    encoding="utf-8")
    git(clone, "commit", "--quiet", "-am", "my auc_roc")  # what anyone practising in a fork does
    proc = subprocess.run([str(KATA), "reset", "auc_roc"], cwd=clone, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "raise NotImplementedError" in mine.read_text(encoding="utf-8")
    pristine = clone / "harness" / "stubs" / "auc_roc" / "auc.py"
    assert mine.read_text(encoding="utf-8") == pristine.read_text(encoding="utf-8")


def test_every_kata_ships_a_pristine_stub():
    for kata in KATAS:
        assert kata.pristine_stub().strip(), kata.name


@pytest.mark.skipif(os.environ.get("KATAS_MAINTAINER") != "1",
                    reason="maintainers only (KATAS_MAINTAINER=1): a learner's files are solved")
@pytest.mark.parametrize("kata", KATAS, ids=lambda k: k.name)
def test_the_learners_file_is_the_pristine_stub(kata):
    assert kata.stub_path.read_text(encoding="utf-8") == kata.pristine_stub(), (
        f"katas/{kata.name}/{kata.module}.py differs from its pristine stub")
