"""A clock line: redrawn in place on a terminal, printed once a minute anywhere else."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager

from rich.console import Console
from rich.live import Live
from rich.text import Text


class Countdown:
    """`line()` is the text, `left()` the seconds left (it says when a minute has passed), and
    `running()` whether to come back after a pause."""

    def __init__(self, console: Console, line: Callable[[], str], left: Callable[[], float],
                 running: Callable[[], bool] = lambda: True) -> None:
        self.console, self.line, self.left, self.running = console, line, left, running
        self.live = Live(console=console, auto_refresh=False, transient=True) \
            if console.is_terminal else None
        self.printed: int | None = None  # the minute last printed, when not a terminal

    def show(self) -> None:
        if self.live:
            self.live.update(Text(self.line()), refresh=True)
            return
        minute = int(self.left() // 60)
        if minute != self.printed:
            self.printed = minute
            self.console.print(self.line(), markup=False, highlight=False, soft_wrap=True)

    @contextmanager
    def paused(self):
        if self.live:
            self.live.stop()
        try:
            yield
        finally:
            if self.live and self.running():
                self.live.start()

    def __enter__(self) -> Countdown:
        if self.live:
            self.live.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.live:
            self.live.stop()
