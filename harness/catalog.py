"""Where every kata's pieces live. Katas are discovered from `katas/*/kata.toml`, never named."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from harness import metadata, mutants
from harness.lang import LANGS as LANGS  # re-exported: every reader names it here

INSTALLED_ROOT = Path(__file__).resolve().parent.parent  # the checkout harness was installed from


def find_root(start: Path | None = None) -> Path:
    """The checkout `start` (default: the current directory) lies in, searched upward as git
    does, so a second clone grades its own files; else the checkout harness was installed from."""
    try:
        start = Path(start or Path.cwd()).resolve()
    except OSError:  # the current directory was deleted
        return INSTALLED_ROOT
    return next((f for f in (start, *start.parents)
                 if (f / "katas").is_dir() and (f / "harness" / "suites").is_dir()), INSTALLED_ROOT)


ROOT = find_root()
KATAS_DIR = ROOT / "katas"
SOLUTIONS_DIR = ROOT / "solutions"
SUITES_DIR = ROOT / "harness" / "suites"
# A copy of every stub, shipped as package data: the learner's commits to katas/ never touch it.
STUBS_DIR = ROOT / "harness" / "stubs"
MUTANT_PREFIX = "mutant:"


@dataclass(frozen=True)
class Kata:
    name: str

    @cached_property
    def meta(self) -> dict:
        """kata.toml with the hidden side (interviewer.toml: answers, hints, follow-ups,
        self-check, rubric) folded in: see harness.metadata."""
        return metadata.load(self.folder / "kata.toml", self.suite_dir / "interviewer.toml")

    @property
    def module(self) -> str:
        return self.meta["module"]

    @property
    def folder(self) -> Path:
        return KATAS_DIR / self.name

    @property
    def stub_path(self) -> Path:
        return self.folder / f"{self.module}.py"

    @property
    def solution_path(self) -> Path:
        return SOLUTIONS_DIR / self.name / f"{self.module}.py"

    @property
    def suite_dir(self) -> Path:
        return SUITES_DIR / self.name

    @property
    def bench_path(self) -> Path:
        return self.suite_dir / "bench.py"

    @cached_property
    def spec(self) -> metadata.Spec:
        """The metadata as typed records, parsed once: what the commands and screens read."""
        return metadata.parse(self.meta)

    @property
    def num_levels(self) -> int:
        return len(self.meta["levels"])

    def title(self, lang: str = "en") -> str:
        return self.spec.title(lang)

    @cached_property
    def api(self) -> tuple[str, ...]:
        """What a graded file needs: kata.toml's `api`, else the public names the pristine stub
        defines at top level. A debugging kata names only its prompt's API, since the helpers of
        the code it hands out are the candidate's to reshape."""
        if "api" in self.meta:
            return tuple(self.meta["api"])
        try:
            tree = ast.parse(self.pristine_stub())
        except (OSError, SyntaxError):  # no pristine stub to read: nothing is checked
            return ()
        defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        return tuple(n.name for n in tree.body
                     if isinstance(n, defs) and not n.name.startswith("_"))

    def pristine_stub(self) -> str:
        """The stub as shipped: what `kata reset` restores, whatever the learner has written or
        committed. A debugging kata's stub is its reference with the planted bugs applied."""
        text = mutants.planted_stub(self)
        if text is not None:
            return text
        path = STUBS_DIR / self.name / f"{self.module}.py"
        if not path.is_file():
            raise FileNotFoundError(f"no pristine stub: {path} is missing")
        return path.read_text(encoding="utf-8")

    def impl_arg(self, impl: str) -> str:
        """`--impl` for a pytest child that runs from the repository root: a path becomes
        absolute (relative to here, not to the root); named choices pass as they are."""
        if impl in ("stub", "solution") or impl.startswith(MUTANT_PREFIX):
            return impl
        return str(self.impl_path(impl))

    def impl_path(self, impl: str) -> Path:
        """`stub` (the learner's file), `solution`, `mutant:NAME` (written to a temporary folder
        outside the repository), or a path to any file with the kata's API."""
        if impl == "stub":
            return self.stub_path
        if impl == "solution":
            return self.solution_path
        if impl.startswith(MUTANT_PREFIX):
            return mutants.materialise(self, impl.removeprefix(MUTANT_PREFIX))
        path = Path(impl).expanduser()
        return path if path.is_absolute() else Path.cwd() / path


def all_katas() -> list[Kata]:
    return [Kata(p.parent.name) for p in sorted(KATAS_DIR.glob("*/kata.toml"))]


def get(name: str) -> Kata:
    if not (KATAS_DIR / name / "kata.toml").is_file():
        known = ", ".join(k.name for k in all_katas())
        raise KeyError(f"no kata named {name!r}; known katas: {known}")
    return Kata(name)


def kata_for_path(path: Path) -> Kata | None:
    """The kata a test file or folder belongs to: katas/<kata>/... or harness/suites/<kata>/..."""
    path = Path(path).resolve()
    for base in (KATAS_DIR, SUITES_DIR):
        if path.is_relative_to(base) and path != base:
            name = path.relative_to(base).parts[0]
            if (KATAS_DIR / name / "kata.toml").is_file():
                return Kata(name)
    return None
