"""Level isolation: a Level k test may call only what Levels <= k open.

Each `[[levels]]` table of kata.toml names the API the level adds in `api`:

    "roc_curve"                     a top-level function or class
    "BlockManager.fork"             a method or property of a class
    "BlockManager(prefix_caching)"  a parameter of a class or function (a method: "A.b(param)")

`closed(reference, entries)` loads the reference and returns its names with every entry closed:
calling a closed function, class, method or property, or passing a closed parameter, raises
NotImplementedError, as a candidate's unfinished stub would. The reference's own calls pass
through, so only what a test calls is closed. The meta-test (test_isolation.py) grades that file
at each level below the last and requires Levels <= k to pass in full; the forked grader finds
this module on its PYTHONPATH (tests/).
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import re
import sys
from pathlib import Path

from harness.catalog import Kata

ENTRY = re.compile(r"(?P<owner>[A-Za-z_]\w*)(\.(?P<member>[A-Za-z_]\w*))?"
                   r"(\((?P<param>[A-Za-z_]\w*)\))?")


def api(kata: Kata, level: int) -> list[str]:
    """The names Level `level` adds, as kata.toml lists them."""
    return list(kata.meta["levels"][level - 1].get("api", []))


def later(kata: Kata, level: int) -> list[str]:
    """Everything the levels after `level` add."""
    return [e for lvl in range(level + 1, kata.num_levels + 1) for e in api(kata, lvl)]


def _ours(namespace: dict) -> bool:
    """True when the caller's caller is code of the reference itself (its globals)."""
    return sys._getframe(2).f_globals is namespace


def _refuse(what: str, original, namespace: dict):
    @functools.wraps(original)
    def closed(*args, **kwargs):
        if _ours(namespace):
            return original(*args, **kwargs)
        raise NotImplementedError(f"{what} is opened by a later level")
    return closed


def _refuse_param(what: str, original, param: str, namespace: dict):
    signature = inspect.signature(original)

    @functools.wraps(original)
    def closed(*args, **kwargs):
        if not _ours(namespace) and param in signature.bind(*args, **kwargs).arguments:
            raise NotImplementedError(f"{what} is opened by a later level")
        return original(*args, **kwargs)
    return closed


def _load(reference: Path) -> dict:
    name = f"_kata_isolated_reference_{abs(hash(str(reference)))}"
    spec = importlib.util.spec_from_file_location(name, reference)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it runs
    spec.loader.exec_module(module)
    return vars(module)


def closed(reference: Path, entries: list[str]) -> dict:
    """The reference's public names with `entries` closed (see the module docstring).
    ValueError names an entry that matches nothing in the reference."""
    namespace = _load(Path(reference))
    names = {k: v for k, v in namespace.items() if not k.startswith("__")}
    for entry in entries:
        match = ENTRY.fullmatch(entry)
        owner = names.get(match["owner"]) if match else None
        if owner is None:
            raise ValueError(f"api entry {entry!r} names nothing in {reference}")
        member, param = match["member"], match["param"]
        if member is None and param is None:
            names[match["owner"]] = _refuse(entry, owner, namespace)
            continue
        target = owner
        attr = member or "__init__"
        if not isinstance(target, type) and member is None:  # a function's parameter
            names[match["owner"]] = _refuse_param(entry, owner, param, namespace)
            continue
        found = inspect.getattr_static(target, attr, None)
        if found is None:
            raise ValueError(f"api entry {entry!r} names nothing in {reference}")
        if isinstance(found, property):
            getter = _refuse(entry, found.fget, namespace)
            setattr(target, attr, property(getter, found.fset, found.fdel, found.__doc__))
        elif param is None:
            setattr(target, attr, _refuse(entry, found, namespace))
        else:
            setattr(target, attr, _refuse_param(entry, found, param, namespace))
    return names


def wrapper(kata: Kata, level: int) -> str:
    """A graded file: the reference with every later level's API closed."""
    return ("from isolation import closed\n\n"
            f"globals().update(closed({str(kata.solution_path)!r}, {later(kata, level)!r}))\n")
