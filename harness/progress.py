"""`kata progress`: a row per kata from graded attempts and mock sessions, and a chart over time."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Column, Table
from rich.text import Text

from harness import catalog, words
from harness.session import rubric
from harness.session.clock import clock, when
from harness.session.log import Mode, Session, Sessions
from harness.store import Attempt, Store, own


def say(key: str, lang: str, **fields: object) -> str:
    return words.say(f"mock.{key}", lang, **fields)


def table(title: str, heads: list[str]) -> Table:
    """A plain table: a line under the heads, no frame."""
    return Table(*(Column(h, no_wrap=True) for h in heads), title=title, box=box.SIMPLE_HEAD,
                 show_edge=False, pad_edge=False, collapse_padding=True)


CHART = "progress.png"


@dataclass
class Row:
    kata: str
    graded: int  # full graded runs of your own file outside a mock (grade, pytest, kata test)
    mocks: int
    best_level: int
    best_time: float | None  # fastest mock session to reach the best level, in seconds
    last: float | None  # when you last graded or started a session
    gone: bool = False  # its folder is gone from katas/, its history is not

    def cells(self, lang: str) -> list[str]:
        kata = f"{self.kata} {say('gone', lang)}" if self.gone else self.kata
        last = when(self.last) if self.last else "—"
        attempts = str(self.graded + self.mocks)
        if self.mocks:
            attempts += " " + say("mocks", lang, n=self.mocks)
        return [kata, attempts,
                str(self.best_level) if self.last else "—",
                clock(self.best_time) if self.best_time is not None else "—", last]


def rows(attempts: list[Attempt], sessions: list[Session]) -> list[Row]:
    """Every kata in katas/, plus any with a history whose folder is gone."""
    known = [k.name for k in catalog.all_katas()]
    names = known + sorted(({a.kata for a in attempts} | {s.kata for s in sessions}) - set(known))
    table = []
    for name in names:
        graded = [a for a in attempts if a.kata == name and own(a) and a.via != "mock"]
        mocks = [s for s in sessions if s.kata == name]
        best = max([a.best_level for a in graded] + [s.levels_passed for s in mocks], default=0)
        times = [s.level_times()[best - 1][1] for s in mocks if best and s.levels_passed >= best]
        last = max([a.at for a in graded] + [s.started for s in mocks], default=None)
        table.append(Row(name, len(graded), len(mocks), best, min(times, default=None), last,
                         gone=name not in known))
    return table


def points(attempts: list[Attempt], sessions: list[Session]) -> dict[tuple[str, str], list]:
    """(kata, 'graded' | 'mock') -> [(when, % of hidden tests passed)], oldest first."""
    series: dict[tuple[str, str], list] = {}
    for a in attempts:
        if own(a) and a.total and a.via != "mock":  # mocks are their own series
            series.setdefault((a.kata, "graded"), []).append((a.at, 100 * a.passed / a.total))
    for s in sessions:
        if s.score is not None:
            series.setdefault((s.kata, "mock"), []).append((s.last_submit.at, 100 * s.score))
    return {key: sorted(values) for key, values in series.items()}


def chart(attempts: list[Attempt], sessions: list[Session], out: Path, lang: str) -> Path | None:
    """Draw the scores over time as a PNG at `out`; None when nothing was graded yet."""
    series = points(attempts, sessions)
    if not series:
        return None
    import matplotlib  # imported here: only the chart needs it, and it is slow to import

    matplotlib.use("Agg")
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

    font = _cjk_font() if lang != "en" else None
    lang = lang if lang == "en" or font else "en"  # without a CJK font, English labels
    style = {"font.family": "sans-serif",
             "font.sans-serif": [font, *plt.rcParams["font.sans-serif"]]} if font else {}
    with plt.rc_context(style):
        fig, ax = plt.subplots(figsize=(8, 4.5))
        colors = {kata: f"C{i}" for i, kata in enumerate(sorted({k for k, _ in series}))}
        for (kata, kind), values in sorted(series.items()):  # one colour per kata
            when = [datetime.fromtimestamp(t) for t, _ in values]
            ax.plot(when, [v for _, v in values], color=colors[kata], markersize=8,
                    marker="o" if kind == "graded" else "*",
                    linestyle="-" if kind == "graded" else "--",
                    label=say(f"chart_{kind}", lang, kata=kata))
        stamps = [t for values in series.values() for t, _ in values]
        first, last = min(stamps), max(stamps)
        pad = max((last - first) * 0.05, 3600.0)  # one point alone still gets a readable axis
        ax.set(title=say("chart_title", lang), ylabel=say("chart_y", lang), ylim=(-5, 105),
               xlim=(datetime.fromtimestamp(first - pad), datetime.fromtimestamp(last + pad)))
        locator = mdates.AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small", loc="lower right")
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, dpi=100, bbox_inches="tight")
        plt.close(fig)
    return out


def _cjk_font() -> str | None:
    """An installed font with Traditional Chinese glyphs, if there is one."""
    from matplotlib import font_manager

    names = {f.name for f in font_manager.fontManager.ttflist}
    return next((name for name in ("Noto Sans CJK TC", "Noto Sans TC", "Noto Serif CJK TC",
                                   "PingFang TC", "Microsoft JhengHei", "WenQuanYi Zen Hei",
                                   "Noto Sans CJK SC") if name in names), None)


def report(console: Console, store: Store, lang: str) -> None:
    """Print the table and write the chart beside the store (StoreError: it cannot be read)."""
    attempts, sessions, revealed = store.attempts(), Sessions(store).history(), store.reveals()
    columns = ("col_kata", "col_attempts", "col_best_level", "col_best_time", "col_last")
    shown = table(say("progress_title", lang), [say(c, lang) for c in columns])
    for row in rows(attempts, sessions):
        shown.add_row(*(Text(c) for c in row.cells(lang)))
    console.print(shown)
    rubric_history(console, store, sessions, lang)
    if revealed:  # `kata solution` promised that a look is recorded: here it is
        seen = ", ".join(f"{kata} ({when(at)})" for kata, at in sorted(revealed.items()))
        console.print(say("solutions_seen", lang, katas=seen), markup=False, highlight=False)
    path = chart(attempts, sessions, store.path.parent / CHART, lang)
    if path is None:  # a chart left from an older store would show scores that are gone
        (store.path.parent / CHART).unlink(missing_ok=True)
    message = say("chart", lang, path=path) if path else say("chart_empty", lang)
    console.print(message, markup=False, highlight=False, soft_wrap=True)


def rubric_history(console: Console, store: Store, sessions: list[Session], lang: str) -> None:
    """The interviewer's levels of every scored pair session, next to its levels passed."""
    scores = rubric.Scores(store)
    scored = [(s, scores.of(s.id)) for s in sessions if s.mode == Mode.PAIR]
    scored = [(s, score) for s, score in scored if not score.empty]
    if not scored:
        return
    dims = rubric.dimensions()
    heads = ("col_when", "col_kata", "col_levels", "col_rubric", "col_points")
    shown = table(words.say("interviewer.history", lang),
                  [words.say(f"interviewer.{h}", lang) for h in heads])
    for session, score in scored:
        kata = next((k for k in catalog.all_katas() if k.name == session.kata), None)
        points = rubric.points(kata) if kata else []
        levels = " ".join(str(score.levels[d.id][0]) if score.levels.get(d.id, (0,))[0] else "·"
                          for d in dims)  # unscored or not observed: no level to show
        covered = sum(bool(score.covered.get(p)) for p in points)  # None: not asked
        shown.add_row(*(Text(c) for c in (when(session.started), session.kata,
                                          f"{session.levels_passed}/{session.levels}", levels,
                                          f"{covered}/{len(points)}" if points else "—")))
    console.print(shown)
    console.print(words.say("interviewer.legend", lang, names=", ".join(d.id for d in dims)),
                  markup=False, highlight=False, soft_wrap=True)
