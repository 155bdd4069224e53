"""Load an implementation from a file path, under a name of our own, with a clear error."""

from __future__ import annotations

import importlib.util
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from harness.timeouts import KataTimeout, time_limit
from harness.words import say

IMPORT_SECONDS = 30.0


class ImplError(Exception):
    """The implementation file is missing or does not import."""
    verdict_key = "grade.no_import_verdict"  # what each test's verdict says

    @property
    def verdict(self) -> str:
        return say(self.verdict_key)


class MissingAPI(ImplError):
    """The file imports but lacks names of the kata's API: likely another kata's file."""
    verdict_key = "grade.no_api_verdict"


def load_module(path: Path, name: str, api: Sequence[str] = ()) -> ModuleType:
    """`api`: the names the file must define, checked once here rather than failing every test."""
    path = Path(path)
    if path.is_dir():
        raise ImplError(say("grade.folder", path=path))
    if not path.is_file():
        raise ImplError(say("grade.missing", path=path))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    # Registered before exec: dataclasses and typing look their module up in sys.modules.
    sys.modules[name] = module
    try:
        with time_limit(IMPORT_SECONDS):
            spec.loader.exec_module(module)
    except (Exception, KataTimeout) as exc:
        del sys.modules[name]
        raise ImplError(say("grade.no_import", path=path, error=_one_line(exc, path))) from exc
    missing = [n for n in api if not hasattr(module, n)]
    if missing:
        del sys.modules[name]
        raise MissingAPI(say("grade.no_api", path=path, names=", ".join(missing)))
    return module


def _one_line(exc: BaseException, path: Path) -> str:
    """The error and the learner's own line that raised it, without the import machinery."""
    where = ""
    if not isinstance(exc, SyntaxError):  # a SyntaxError names its line itself
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
        if frames:
            where = say("grade.line", n=frames[-1].lineno)
    return f"{type(exc).__name__}: {exc}{where}"
