"""Fakes for the scheduler suite: a recording, gateable run_batch and callers on daemon threads.

Ordering is made deterministic with events and `queue_depth` polling; time is only measured
where time is the subject, with margins of hundreds of milliseconds.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

WAIT_S = 3.0  # generous bound for "this should happen soon" on a loaded machine
EARLY_S = 0.002  # clock rounding allowed on lower bounds ("never before max_wait_ms")


def wait_until(predicate: Callable[[], bool], what: str, timeout: float = WAIT_S) -> float:
    """Poll until predicate() holds; return the time it was first seen to hold."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout:g} s waiting for: {what}")
        time.sleep(0.0005)
    return time.monotonic()


def wait_depth(scheduler, depth: int, timeout: float = WAIT_S) -> float:
    return wait_until(lambda: scheduler.queue_depth == depth, f"queue_depth == {depth}", timeout)


@dataclass
class Call:
    at: float  # time.monotonic() when run_batch was entered
    requests: list
    thread: threading.Thread


class Recorder:
    """A fake run_batch that records every call, checks no two overlap, and can be held shut.

    Closed by default only when `gated`: every call then blocks until `release()`. Used as a
    context manager after the scheduler (`with make(...) as s, rec:`), it opens its gate on the
    way out, before the scheduler's close, so a failing test never deadlocks its own teardown.
    """

    def __init__(self, respond: Callable[[Any], Any] | None = None, *, gated: bool = False,
                 seconds: float = 0.0, fail: Callable[[list], BaseException | None] | None = None,
                 answer: Callable[[list], Any] | None = None) -> None:
        self.respond = respond or (lambda r: ("done", r))
        self.answer = answer  # replaces the whole response list when given
        self.fail = fail
        self.seconds = seconds
        self.gate = threading.Event()
        if not gated:
            self.gate.set()
        self.calls: list[Call] = []
        self.lock = threading.Lock()
        self.active = 0
        self.overlaps = 0
        self.started = threading.Event()  # set at the first call

    def __call__(self, requests: list) -> Any:
        with self.lock:
            self.active += 1
            self.overlaps += self.active > 1
            self.calls.append(Call(time.monotonic(), list(requests), threading.current_thread()))
        self.started.set()
        try:
            self.gate.wait(WAIT_S * 3)
            if self.seconds:
                time.sleep(self.seconds)
            if self.fail is not None and (exc := self.fail(list(requests))) is not None:
                raise exc
            if self.answer is not None:
                return self.answer(list(requests))
            return [self.respond(r) for r in requests]
        finally:
            with self.lock:
                self.active -= 1

    def release(self) -> None:
        self.gate.set()

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    @property
    def batches(self) -> list[list]:
        with self.lock:
            return [c.requests for c in self.calls]

    def wait_calls(self, n: int, timeout: float = WAIT_S) -> list[Call]:
        wait_until(lambda: len(self.calls) >= n, f"{n} call(s) of run_batch", timeout)
        with self.lock:
            return list(self.calls)


@dataclass
class Caller:
    """One `submit` on a daemon thread, with the times around it and what it gave back."""

    scheduler: Any
    request: Any
    before: float = 0.0  # time.monotonic() just before submit was called
    after: float = 0.0
    response: Any = None
    error: BaseException | None = None
    thread: threading.Thread = field(init=False)

    def __post_init__(self) -> None:
        self.thread = threading.Thread(target=self.call, daemon=True)
        self.thread.start()

    def call(self) -> None:
        self.before = time.monotonic()
        try:
            self.response = self.scheduler.submit(self.request)
        except BaseException as exc:  # noqa: BLE001 - reported to the test, not swallowed
            self.error = exc
        self.after = time.monotonic()

    def join(self, timeout: float = WAIT_S) -> Caller:
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise AssertionError(f"submit({self.request!r}) never returned")
        return self

    def result(self, timeout: float = WAIT_S) -> Any:
        self.join(timeout)
        if self.error is not None:
            raise AssertionError(f"submit({self.request!r}) raised {self.error!r}")
        return self.response


def submit_in_order(scheduler, requests: list, start_depth: int = 0) -> list[Caller]:
    """Submit one at a time, each after the previous is seen waiting: a known submit order."""
    callers = []
    for i, r in enumerate(requests):
        callers.append(Caller(scheduler, r))
        wait_depth(scheduler, start_depth + i + 1)
    return callers


def hold_full_batch(scheduler, rec: Recorder, size: int) -> list[Caller]:
    """Submit `size` requests, a full batch when max_batch_size == size: it leaves at once and
    the gated `rec` holds it running, so the worker is busy until `rec.release()`."""
    callers = [Caller(scheduler, f"x{i}") for i in range(size)]
    rec.wait_calls(1)
    return callers


def sleep_until(moment: float) -> None:
    """Sleep until time.monotonic() reaches `moment`: a lower bound on elapsed time, however
    slow the machine."""
    while (left := moment - time.monotonic()) > 0:
        time.sleep(left)


def close_soon(scheduler, timeout: float = WAIT_S, *, cleanup: bool = False) -> None:
    """close() on a helper thread, so a close that never returns fails instead of hanging; a
    close that raises fails with its exception. `cleanup`: a Level 1 test's way out, which a
    file without Level 2's close yet (NotImplementedError) must pass too."""
    raised: list[BaseException] = []

    def close() -> None:
        try:
            scheduler.close()
        except BaseException as exc:  # noqa: BLE001 - reported to the test, not swallowed
            raised.append(exc)

    thread = threading.Thread(target=close, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise AssertionError("close() never returned")
    if raised and not (cleanup and isinstance(raised[0], NotImplementedError)):
        raise AssertionError(f"close() raised {raised[0]!r}")


@contextlib.contextmanager
def scheduler(impl, run_batch, *, level: int = 2, **settings) -> Iterator[Any]:
    """A scheduler that is closed (within a bound) however the test ends; at Level 1, where
    close is not asked for yet, only if the file has it."""
    s = impl.BatchScheduler(run_batch, **settings)
    try:
        yield s
    finally:
        if isinstance(run_batch, Recorder):
            run_batch.release()
        close_soon(s, cleanup=level == 1)


def check_oldest_leaves_1600ms_after_its_submit(impl, level: int = 2, **settings) -> None:
    """A second request arrives 800 ms after the first. A wait measured from that arrival, or
    restarted by it, would end 2.4 s after the first submit or later: far from 1.6 s. The second
    may arrive up to 0.8 s late on a loaded machine and still tell the two apart."""
    rec = Recorder()
    with scheduler(impl, rec, level=level, **settings) as s:
        first = Caller(s, "first")
        seen = wait_depth(s, 1)
        time.sleep(0.800)
        second = Caller(s, "second")
        call = rec.wait_calls(1)[0]
        assert first.before + 1.600 - EARLY_S <= call.at <= seen + 1.600 + 0.400
        assert "first" in call.requests
        first.result(), second.result()


def interrupted(impl, target: Callable[[], Any], k: int, action: Callable[[], Any]):
    """Run `target` on a thread; when the implementation's own `submit` reaches its k-th line
    there, run `action` on another thread and let it go on for up to 0.3 s first.

    Tried at each k in turn, this puts `action` at every point of submit, whatever the code looks
    like. An action that needs a lock submit holds just waits, so every interleaving it makes is
    a legal one: a correct implementation passes at every k. Returns (thread, lines): `lines[0]`
    is how many lines submit ran (fewer than k: `action` never ran).
    """
    lines = [0]

    def line(frame, event, arg):
        if event == "line":
            lines[0] += 1
            if lines[0] == k:
                other = threading.Thread(target=action, daemon=True)
                other.start()
                other.join(0.3)
        return line

    def call(frame, event, arg):
        code = frame.f_code
        return line if (code.co_name, code.co_filename) == ("submit", impl.__file__) else None

    threading.settrace(call)
    try:
        thread = threading.Thread(target=target, daemon=True)
        thread.start()
    finally:
        threading.settrace(None)
    return thread, lines
