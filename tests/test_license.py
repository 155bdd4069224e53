"""The license that pyproject.toml declares ships with the code (issue 18.15)."""

from __future__ import annotations

import tomllib

from harness import catalog


def test_the_declared_mit_license_file_exists():
    with open(catalog.ROOT / "pyproject.toml", "rb") as f:
        assert tomllib.load(f)["project"]["license"] == "MIT"
    text = (catalog.ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text
