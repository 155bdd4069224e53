"""`kata` works on the checkout it runs in, found upward from the current directory as git does."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness import catalog

KATA = Path(sys.executable).with_name("kata")  # the installed command, not this checkout's code


@pytest.fixture(scope="module")
def second_clone(tmp_path_factory) -> Path:
    """A second clone of this repository whose auc_roc file is the reference solution."""
    clone = tmp_path_factory.mktemp("second") / "clone"
    subprocess.run(["git", "clone", "--quiet", str(catalog.ROOT), str(clone)], check=True)
    shutil.copyfile(clone / "solutions/auc_roc/auc.py", clone / "katas/auc_roc/auc.py")
    return clone


def test_the_checkout_is_found_upward_from_the_current_directory(second_clone, tmp_path):
    assert catalog.find_root(second_clone / "katas" / "auc_roc") == second_clone
    assert catalog.find_root(tmp_path) == catalog.INSTALLED_ROOT  # outside any checkout


@pytest.mark.skipif(not KATA.exists(), reason="the kata command is not installed in this venv")
def test_kata_grades_the_file_of_the_checkout_it_runs_in(second_clone):
    proc = subprocess.run([str(KATA), "grade", "auc_roc"], cwd=second_clone / "katas",
                          capture_output=True, text=True, timeout=300)
    graded = second_clone / "katas" / "auc_roc" / "auc.py"
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert str(graded) in proc.stdout.replace("\n", "")  # always says which file it graded


@pytest.mark.skipif(not KATA.exists(), reason="the kata command is not installed in this venv")
def test_a_relative_impl_path_is_read_from_the_current_directory(second_clone):
    proc = subprocess.run([str(KATA), "test", "auc_roc", "--impl", "auc_roc/auc.py", "-q"],
                          cwd=second_clone / "katas", capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert str(second_clone / "katas" / "auc_roc" / "auc.py") in proc.stdout.replace("\n", "")
