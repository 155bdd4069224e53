"""Shared pieces of the benchmarks: a best-of timer, a table that prints itself in either language
and can be saved as Markdown, and plots drawn once per language of the docs."""

from __future__ import annotations

import os
import platform
import re
import time
from collections.abc import Callable
from datetime import date
from functools import cache
from pathlib import Path

from harness import tomlfile


def pyplot():
    """matplotlib.pyplot on the file-only Agg backend, imported late: only plots need it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# The docs show each language its own plot: `name.png` in English, `name.zh-TW.png` beside it
# (the docs' i18n plugin serves the second on Chinese pages). Chinese text needs a CJK font:
# fonts-noto-cjk, which the docs' browser test installs anyway.
PLOT_LANGS = ("en", "zh-TW")
CJK_FONT = "Noto Sans CJK TC"


def plot_path(path: Path, lang: str) -> Path:
    return path if lang == "en" else path.with_name(f"{path.stem}.{lang}{path.suffix}")


def save_plots(path: Path, draw: Callable[[Callable[[str, str], str]], object],
               dpi: int = 120) -> None:
    """Draws a figure once per language and saves each (see PLOT_LANGS). `draw(say)` builds and
    returns the figure, writing every text as `say(english, chinese)`."""
    plt = pyplot()
    from matplotlib import font_manager

    try:
        font_manager.findfont(CJK_FONT, fallback_to_default=False)
    except ValueError as e:
        raise RuntimeError(f"the Chinese plots need the font {CJK_FONT!r} "
                           "(apt-get install fonts-noto-cjk)") from e
    for lang in PLOT_LANGS:
        # Latin letters and digits keep matplotlib's usual font; Chinese falls back to the CJK one.
        with plt.rc_context({"font.family": ["DejaVu Sans", CJK_FONT]}):
            fig = draw(lambda english, chinese, lang=lang: chinese if lang == "zh-TW" else english)
            fig.savefig(plot_path(path, lang), dpi=dpi)
        plt.close(fig)


def best(fn: Callable[[], object], repeat: int) -> float:
    """Best of `repeat` wall times, in seconds: the machine may be shared."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


@cache
def chinese() -> dict:
    """The tables' Chinese, for `kata bench` and the docs' Benchmarks page (see its header)."""
    return tomlfile.read(Path(__file__).with_name("bench.zh-TW.toml"))


def column_chinese(name: str) -> str:
    """A column's Chinese: its own under [columns], else a row pattern's (a name holding a size)."""
    return chinese()["columns"].get(name) or cell_chinese(name)


def cell_chinese(cell: str) -> str:
    """A body cell's Chinese: its own under [rows], else each row pattern applied in turn. A
    figure matches none and stays as measured."""
    if cell in chinese()["rows"]:
        return chinese()["rows"][cell]
    for row in chinese()["row_patterns"]:
        cell = re.sub(row["en"], row["zh-TW"], cell)
    return cell


def note_chinese(text: str) -> str:
    """Notes (or a whole results file) with each known note in Chinese."""
    for note in chinese()["notes"]:
        text = re.sub(note["en"], note["zh-TW"], text, flags=re.MULTILINE)
    return text


class Table:
    def __init__(self, *columns: str) -> None:
        self.columns = columns
        self.rows: list[tuple[str, ...]] = []
        self.notes: list[str] = []  # printed and saved under the table

    def said(self, lang: str) -> Table:
        """The table in `lang`: in Chinese its columns, the cells that are words and the notes;
        the figures as measured. What is saved stays English, the docs' source."""
        if lang == "en":
            return self
        shown = Table(*(column_chinese(c) for c in self.columns))
        shown.rows = [tuple(cell_chinese(c) for c in row) for row in self.rows]
        shown.notes = [note_chinese(n) for n in self.notes]
        return shown

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
