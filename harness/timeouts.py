"""A per-test time limit that turns a deadlock or an endless loop into one failed test."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class KataTimeout(BaseException):
    """A BaseException, so neither learner code nor Hypothesis swallows it as an ordinary error."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise KataTimeout in the main thread after `seconds`, then again every second.

    Lock and event waits are interruptible by signals on POSIX, so a test blocked on a
    deadlocked scheduler is interrupted too. Off the main thread there is no limit.
    """
    if threading.current_thread() is not threading.main_thread() or seconds <= 0:
        yield
        return

    def on_alarm(signum, frame):
        raise KataTimeout(f"timed out after {seconds:g} s — deadlock or infinite loop?")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
