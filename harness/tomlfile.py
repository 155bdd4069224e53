"""TOML files read once per version: a grader forked for each of a hundred mutants would otherwise
parse the same large mutants.toml and kata.toml a hundred times (tests/forkserver.py reads them
first)."""

from __future__ import annotations

import copy
import os
import tomllib
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=256)
def _parse(path: str, stamp: tuple[int, int]) -> dict:
    with open(path, "rb") as f:
        return tomllib.load(f)


def read(path: Path) -> dict:
    """The parsed file, a fresh copy each call; re-read when its size or mtime changes.
    FileNotFoundError and tomllib.TOMLDecodeError pass through."""
    st = os.stat(path)
    return copy.deepcopy(_parse(str(path), (st.st_mtime_ns, st.st_size)))
