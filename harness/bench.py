"""Shared pieces of the benchmarks: a best-of timer, and a table that prints itself and can be
saved as Markdown."""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path


def pyplot():
    """matplotlib.pyplot on the file-only Agg backend, imported late: only plots need it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def best(fn: Callable[[], object], repeat: int) -> float:
    """Best of `repeat` wall times, in seconds: the machine may be shared."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


class Table:
    def __init__(self, *columns: str) -> None:
        self.columns = columns
        self.rows: list[tuple[str, ...]] = []
        self.notes: list[str] = []  # printed and saved under the table

    def add(self, *cells: object) -> None:
        self.rows.append(tuple(str(c) for c in cells))

    def markdown(self) -> str:
        lines = ["| " + " | ".join(self.columns) + " |", "|" + " --- |" * len(self.columns)]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        return "\n".join(lines)

    def save(self, path: Path, title: str) -> None:
        stamp = f"{date.today().isoformat()}, {platform.machine()} CPU, {os.cpu_count()} cores"
        Path(path).write_text(f"# {title}\n\nMeasured {stamp}.\n\n"
                              f"{self.markdown()}\n" + "".join(f"\n{n}\n" for n in self.notes),
                              encoding="utf-8")
