"""Limits on guessing (no Streamlit): wrong class codes and wrong keys, counted per browser session and per client
address. A few wrong guesses a minute pass; beyond, every guess is refused unchecked until the oldest leaves the
window, and the refusal says how long to wait. The address allows more than a session (a class behind one NAT
address shares it: one student's typos must not lock out the room), enough to stop a script that opens a new
session per guess. A right guess is never counted; a refused one is not checked, so a script learns nothing.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass

from i18n import MessageError

WINDOW_S = 60.0
PER_SESSION, PER_ADDRESS = 5, 20  # wrong guesses within WINDOW_S before a wait
MAX_TRACKED = 10_000  # sessions and addresses remembered; the least recently wrong are forgotten beyond


class TooManyGuesses(MessageError):
    """Refused without looking: too many wrong guesses lately (the message says how long to wait)."""


@dataclass(frozen=True)
class Guesser:
    """Who guesses: a browser session and the address its connection comes from (None where unknown)."""
    session: str
    address: str | None = None


class Guesses:
    """Wrong guesses of one kind (class codes, or keys) within the last `window_s` seconds, per session and per
    address."""

    def __init__(self, kind: str, per_session: int = PER_SESSION, per_address: int = PER_ADDRESS,
                 window_s: float = WINDOW_S):
        self.kind, self.window_s = kind, window_s
        self._most = {"session": per_session, "address": per_address}
        self._wrong: OrderedDict[tuple[str, str], deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def _whos(self, guesser: Guesser) -> list[tuple[str, str]]:
        return [("session", guesser.session), *([("address", guesser.address)] if guesser.address else [])]

    def wait_s(self, guesser: Guesser) -> float:
        """Seconds until this guesser may guess again (0: now)."""
        now, wait = time.monotonic(), 0.0
        with self._lock:
            for who in self._whos(guesser):
                times = self._wrong.get(who)
                if times is None:
                    continue
                while times and times[0] <= now - self.window_s:
                    times.popleft()
                if len(times) >= self._most[who[0]]:
                    wait = max(wait, times[0] + self.window_s - now)
        return wait

    def check(self, guesser: Guesser):
        """Raise TooManyGuesses while this guesser must wait."""
        if (wait := self.wait_s(guesser)) > 0:
            raise TooManyGuesses(f"limit.{self.kind}", seconds=max(1, round(wait)))

    def wrong(self, guesser: Guesser):
        """A wrong guess, counted for the session and the address."""
        now = time.monotonic()
        with self._lock:
            for who in self._whos(guesser):
                self._wrong.setdefault(who, deque()).append(now)
                self._wrong.move_to_end(who)
            while len(self._wrong) > MAX_TRACKED:
                self._wrong.popitem(last=False)


_codes, _keys = Guesses("codes"), Guesses("keys")


def code_guesses() -> Guesses:
    """The process's count of wrong class codes."""
    return _codes


def key_guesses() -> Guesses:
    """The process's count of wrong keys: the server's (starting a class, pinning a run) and a class's lecturer
    secret."""
    return _keys
