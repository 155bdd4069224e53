"""The docs site, built once per test session into a temporary folder, never into the repository."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LANGS = ("en", "zh-TW")
DOCS_PACKAGES = ("mkdocs", "material", "mkdocs_static_i18n", "jieba")


def missing_docs_packages() -> list[str]:
    return [name for name in DOCS_PACKAGES if importlib.util.find_spec(name) is None]


def source_pages() -> list[Path]:
    """English source pages relative to docs/ (benchmark tables are folded into a page)."""
    pages = (p.relative_to(DOCS) for p in DOCS.rglob("*.md") if not p.name.endswith(".zh-TW.md"))
    return sorted(p for p in pages if p.parts[0] != "benchmarks")


def translated(page: Path) -> Path:
    return page.with_name(page.stem + ".zh-TW.md")


def url(page: Path, lang: str) -> str:
    """Site-relative URL of a source page (use_directory_urls), with the language prefix."""
    path = page.with_suffix("").as_posix()
    path = "" if path == "index" else path.removesuffix("/index") + "/"
    return ("" if lang == "en" else f"{lang}/") + path


@dataclass(frozen=True)
class Site:
    folder: Path
    log: str


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Site:
    missing = missing_docs_packages()
    if missing:
        pytest.skip(f"docs packages not installed ({', '.join(missing)}): "
                    "pip install mkdocs-material mkdocs-static-i18n jieba")
    folder = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
         str(ROOT / "mkdocs.yml"), "--site-dir", str(folder)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    log = run.stdout + run.stderr
    if run.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed (exit {run.returncode}):\n{log}", pytrace=False)
    return Site(folder, log)
