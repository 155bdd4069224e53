"""The grade marker of one level, shared by every hidden test file: `grade = level(2)`."""

from __future__ import annotations

from collections.abc import Callable

import pytest


def level(number: int, default_hint: str | None = None) -> Callable[..., pytest.MarkDecorator]:
    """`grade(title, hint, timeout=...)` for hidden tests of level `number`."""

    def grade(title: str, hint: str | None = default_hint, **kw) -> pytest.MarkDecorator:
        if hint is None:
            raise TypeError(f"grade({title!r}) needs a hint category")
        return pytest.mark.grade(level=number, title=title, hint=hint, **kw)

    return grade
