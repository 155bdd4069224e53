"""A plain `pip install .` (no extras) must run the `kata` command and the grader."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import tomllib
from importlib import metadata

from harness import catalog

# Run in a child: every third-party module that no core dependency (or a dependency of one)
# provides is refused, as it would be missing after `pip install .` without extras.
CHILD = textwrap.dedent("""
    import sys
    from importlib import metadata

    allowed = set(sys.argv[1].split(","))
    provided = metadata.packages_distributions()

    class Refuse:
        def find_spec(self, name, path=None, target=None):
            top = name.split(".")[0]
            dists = {d.lower().replace("_", "-") for d in provided.get(top, [])}
            if dists and not dists & allowed:
                raise ModuleNotFoundError(f"No module named {top!r} (not a core dependency)")
            return None

    sys.meta_path.insert(0, Refuse())
    sys.argv = ["kata", "list"]
    import harness.plugin  # noqa: F401  the grader, loaded by every pytest run
    from harness.cli import app
    app()
""")


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def core_closure() -> set[str]:
    """The core dependencies and everything they require (extras left out)."""
    with open(catalog.ROOT / "pyproject.toml", "rb") as f:
        todo = [_name(r) for r in tomllib.load(f)["project"]["dependencies"]]
    seen: set[str] = {"ml-interview-katas"}
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        todo += [_name(r) for r in requires if "extra ==" not in r]
    return seen


def test_kata_runs_with_only_the_core_dependencies():
    proc = subprocess.run([sys.executable, "-c", CHILD, ",".join(sorted(core_closure()))],
                          cwd=catalog.ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "auc_roc" in proc.stdout
