"""The live view: follow the open session from a second process, reading the store and never
writing it. The candidate's commands (`kata mock submit`, `kata mock watch`) write the session;
this only polls it, so both can run at once on one machine."""

from __future__ import annotations

import time

from rich.console import Console

from harness import catalog
from harness.countdown import Countdown
from harness.interviewer import say
from harness.interviewer.timeline import Timeline
from harness.screen import Screen
from harness.session import interview
from harness.session.clock import clock
from harness.session.log import Mode, Session, SessionError, Sessions
from harness.store import StoreError

sleep = time.sleep  # tests replace it
INTERVAL = 1.0  # seconds between two looks at the store


def wait(console: Console, sessions: Sessions, lang: str, interval: float = INTERVAL) -> Session:
    """The open pair session, waiting for the candidate to start one (saying so once)."""
    told = False
    while True:
        try:
            session = sessions.current()
        except StoreError:  # a candidate's command is writing right now
            session = None
        if session is not None and session.mode == Mode.PAIR:
            return session
        if not told:
            Screen(console, lang, wrap=True).text(say("waiting", lang), "yellow")
            told = True
        sleep(interval)


def follow(console: Console, sessions: Sessions, session: Session, kata: catalog.Kata,
           lang: str, interval: float = INTERVAL) -> bool:
    """Print every event of the session as it lands, with a clock line between; return when the
    session ends (True) or disappears from the store (False)."""
    printer, timeline = Screen(console, lang, wrap=True), Timeline(session, kata, lang, detail=True)
    seen = 0  # events printed so far

    def line() -> str:
        s = timeline.session  # the latest look at it
        n, left = min(s.level, s.levels), s.left(interview.now())
        if left <= 0:
            return say("watch_late", lang, n=n, total=s.levels)
        return say("watch_line", lang, n=n, total=s.levels, left=clock(left))

    countdown = Countdown(console, line, lambda: timeline.session.left(interview.now()))
    with countdown:
        while True:
            try:
                fresh = sessions.get(session.id)
            except StoreError:  # a candidate's command is writing right now: look again later
                fresh = None
            except SessionError:  # the store was replaced (a corrupt file moved aside)
                return False
            if fresh is not None:
                timeline.session, new, seen = fresh, fresh.events[seen:], len(fresh.events)
                if new or not fresh.is_open:
                    with countdown.paused():
                        for event in new:
                            for entry in timeline.lines(event):
                                printer.text(entry.text, entry.style)
                        if not fresh.is_open:
                            end = timeline.end()
                            printer.text(end.text, end.style)
                            return True
            countdown.show()
            sleep(interval)
