"""The sessions this process serves, as the server panel shows them: each one's name, the run it looks at, how many
steps it has taken and how long its steps waited for the server.

Streamlit keeps a closed tab's session (and its Lab) in memory for a while, so counting Labs counted closed tabs
too; the page asks the Streamlit runtime which sessions are open (`live(is_open)`), and a closed one leaves the
roster the next time anyone's panel is drawn.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import quantiles

WAITS_KEPT = 200  # the latest waits of a session that its p50/p95 are taken over


@dataclass
class Attendee:
    """One session: `name` is what the model worker's passes call it (runner/share.py's `who`)."""
    name: str
    run: str = ""  # the scenario (or custom setup) it looks at
    steps: int = 0  # the last frame it has stepped to
    waits: deque = field(default_factory=lambda: deque(maxlen=WAITS_KEPT))  # seconds each request waited

    def wait_percentiles(self) -> tuple[float, float] | None:
        """(p50, p95) of its latest waits, None before two."""
        if len(self.waits) < 2:
            return None
        cuts = quantiles(self.waits, n=100, method="inclusive")
        return cuts[49], cuts[94]


class Roster:
    def __init__(self):
        self._attendees: dict[str, Attendee] = {}  # by Streamlit session id
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()

    def attendee(self, session_id: str) -> Attendee:
        """The session's entry, made on its first page (named s1, s2, ... in order of arrival)."""
        with self._lock:
            if session_id not in self._attendees:
                self._attendees[session_id] = Attendee(f"s{next(self._numbers)}")
            return self._attendees[session_id]

    def live(self, is_open: Callable[[str], bool]) -> list[Attendee]:
        """The sessions whose tabs are open, in order of arrival; the others leave the roster."""
        with self._lock:
            for session_id in [s for s in self._attendees if not is_open(s)]:
                del self._attendees[session_id]
            return list(self._attendees.values())


_roster = Roster()


def roster() -> Roster:
    """The process's one roster."""
    return _roster
