"""Load an implementation from a file path, under a name of our own, with a clear error."""

from __future__ import annotations

import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType

from harness.timeouts import KataTimeout, time_limit

IMPORT_SECONDS = 30.0


class ImplError(Exception):
    """The implementation file is missing or does not import."""


def load_module(path: Path, name: str) -> ModuleType:
    path = Path(path)
    if not path.is_file():
        raise ImplError(f"{path} does not exist")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    # Registered before exec: dataclasses and typing look their module up in sys.modules.
    sys.modules[name] = module
    try:
        with time_limit(IMPORT_SECONDS):
            spec.loader.exec_module(module)
    except (Exception, KataTimeout) as exc:
        del sys.modules[name]
        raise ImplError(f"{path} does not import: {_one_line(exc, path)}") from exc
    return module


def _one_line(exc: BaseException, path: Path) -> str:
    """The error and the learner's own line that raised it, without the import machinery."""
    where = ""
    if not isinstance(exc, SyntaxError):  # a SyntaxError names its line itself
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
        if frames:
            where = f" (line {frames[-1].lineno})"
    return f"{type(exc).__name__}: {exc}{where}"
