"""A per-test time limit that turns a deadlock or an endless loop into one failed test."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from harness.words import say

# Seconds a test that Hypothesis has already failed gets past its limit to replay its smallest
# failing example, so a slow wrong answer is reported as wrong, not as a hang.
REPLAY_GRACE = 5


class KataTimeout(BaseException):
    """A BaseException, so neither learner code nor Hypothesis swallows it as an ordinary error.

    `found_failure`: Hypothesis had already found a failing example when time ran out;
    `seconds`: the limit.
    """

    def __init__(self, message: str, *, found_failure: bool = False, seconds: float = 0) -> None:
        super().__init__(message)
        self.found_failure, self.seconds = found_failure, seconds


def failing_hypothesis_run(frame) -> object | None:
    """The Hypothesis engine on the interrupted stack, if it has found a failing example."""
    while frame is not None:
        runner = frame.f_locals.get("self")
        if type(runner).__name__ == "ConjectureRunner" and \
                getattr(runner, "interesting_test_cases", None):
            return runner
        frame = frame.f_back
    return None


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise KataTimeout in the main thread after `seconds`, then again every second.

    Lock and event waits are interruptible by signals on POSIX, so a test blocked on a
    deadlocked scheduler is interrupted too. Off the main thread there is no limit. If
    Hypothesis has found a failing example by then (it is shrinking it), it is told to stop
    shrinking instead, and gets REPLAY_GRACE more seconds to report that example.
    """
    if threading.current_thread() is not threading.main_thread() or seconds <= 0:
        yield
        return
    grace, found = [REPLAY_GRACE], [None]

    def on_alarm(signum, frame):
        # Once seen, the engine stays known: its final replay runs outside its own frames.
        runner = found[0] = failing_hypothesis_run(frame) or found[0]
        if runner is not None and grace[0] > 0:
            grace[0] -= 1
            # Hypothesis checks this deadline after every example; past it, it stops
            # shrinking and replays the smallest failing example found so far.
            runner.finish_shrinking_deadline = 0.0
            return
        raise KataTimeout(say("grade.timed_out", seconds=seconds),
                          found_failure=runner is not None, seconds=seconds)

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
    try:
        yield
    finally:
        while True:  # a repeat alarm may land here, before the timer stops: stop it all the same
            with suppress(KataTimeout):
                signal.setitimer(signal.ITIMER_REAL, 0)
                break
        signal.signal(signal.SIGALRM, previous)
