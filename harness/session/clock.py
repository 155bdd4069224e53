"""Times as a session shows them."""

from __future__ import annotations

import time


def clock(seconds: float) -> str:
    """mm:ss (h:mm:ss past an hour), rounded down to the second."""
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def when(at: float) -> str:
    """A wall-clock time, to the minute."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at))
