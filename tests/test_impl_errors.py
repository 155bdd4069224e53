"""`--impl` pointing at the wrong thing: one clear failure that says what is wrong (issue 18.9)."""

from __future__ import annotations

from typer.testing import CliRunner

from harness import catalog, grading
from harness.cli import app

AUC = catalog.get("auc_roc")
DECODER = catalog.get("slot_refill_decoder")


def test_another_katas_file_is_one_failure_naming_the_missing_api():
    run, output = grading.grade(DECODER, str(AUC.solution_path))
    assert run.import_error, output[-3000:]
    for name in ("Request", "Completion", "DecodingEngine", "SlotDecodingEngine"):
        assert name in run.import_error
    assert "raised AttributeError" not in output
    assert "1 failed" in output and all(r.failed for r in run.results)


def test_a_folder_is_called_a_folder():
    run, _ = grading.grade(AUC, str(AUC.folder))
    assert run.import_error and "is a folder" in run.import_error
    assert "does not exist" not in run.import_error
    result = CliRunner().invoke(app, ["bench", "auc_roc", "--impl", str(AUC.folder)])
    assert result.exit_code == 2 and "is a folder" in result.output


def test_a_debugging_kata_asks_only_for_its_prompts_api():
    # The code it hands out has helpers (split_heads, attend...) that a fix may merge or rename.
    gpt = catalog.get("kv_cache_debug")
    assert gpt.api == ("TinyGPT",)
    assert set(AUC.api) == {"roc_curve", "roc_auc_score"}  # the default: the stub's public names
