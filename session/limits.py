"""Limits on guessing (no Streamlit): wrong class codes and wrong keys, counted per browser session, per client
identity (its address as the deployment sees it: session/client_identity.py) and, for a personal code (it belongs
to one class), per class. A few wrong guesses a minute pass; the one that uses up the allowance makes that
session, identity or class wait, and each time it is used up again the wait doubles (back-off, up to MAX_WAIT_S;
forgotten after QUIET_S without a wrong guess). While waiting, a guess is refused unchecked (a script learns
nothing) and the refusal says how long to wait. A right guess is never counted.

The shared counts (identity, class) stop a script that opens a new session per guess, but a class behind one
address shares them: who must never wait because others guessed is decided by the callers (session/class_door.py)
before the shared counts are read: a browser the class knows, an identity the class already has (the room: its
code is on the projector) and a secret too strong to be found by guessing.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field

from i18n import MessageError

WINDOW_S = 60.0
PER_SESSION, PER_IDENTITY, PER_CLASS = 5, 20, 30  # wrong guesses within WINDOW_S before a wait
MAX_WAIT_S = 15 * 60.0  # the longest wait, however often the allowance is used up
QUIET_S = 10 * 60.0  # without a wrong guess for so long, the back-off starts again from one window
MAX_TRACKED = 10_000  # sessions, identities and classes remembered; the least recently wrong are forgotten beyond


class TooManyGuesses(MessageError):
    """Refused without looking: too many wrong guesses lately (the message says how long to wait)."""


@dataclass(frozen=True)
class Guesser:
    """Who guesses: a browser session and the client identity its connection comes from."""
    session: str
    identity: str


@dataclass
class _Record:
    """One session's, identity's or class's wrong guesses: their times in the window, how often the allowance
    was used up lately (`strikes`), and until when it waits."""
    times: deque = field(default_factory=deque)
    strikes: int = 0
    until: float = 0.0
    last: float = 0.0


class Guesses:
    """Wrong guesses of one kind (class codes, or keys), per session, per identity and per class."""

    def __init__(self, kind: str, per_session: int = PER_SESSION, per_identity: int = PER_IDENTITY,
                 per_class: int = PER_CLASS, window_s: float = WINDOW_S):
        self.kind, self.window_s = kind, window_s
        self._most = {"session": per_session, "identity": per_identity, "class": per_class}
        self._records: OrderedDict[tuple[str, str], _Record] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _whos(guesser: Guesser, room: str | None, shared: bool) -> list[tuple[str, str]]:
        whos = [("session", guesser.session)]
        if shared:
            whos.append(("identity", guesser.identity))
            if room is not None:
                whos.append(("class", room))
        return whos

    def wait_s(self, guesser: Guesser, room: str | None = None, shared: bool = True) -> float:
        """Seconds until this guesser (its session; with `shared`, its identity and the class `room`) may guess
        again (0: now)."""
        now = time.monotonic()
        with self._lock:
            return max([0.0, *(record.until - now for who in self._whos(guesser, room, shared)
                               if (record := self._records.get(who)) is not None)])

    def check(self, guesser: Guesser, room: str | None = None, shared: bool = True):
        """Raise TooManyGuesses while this guesser must wait (`shared` False: only its own session's guesses)."""
        if (wait := self.wait_s(guesser, room, shared)) > 0:
            raise TooManyGuesses(f"limit.{self.kind}", seconds=max(1, round(wait)))

    def wrong(self, guesser: Guesser, room: str | None = None):
        """A wrong guess, counted for the session, the identity and the class `room`."""
        now = time.monotonic()
        with self._lock:
            for who in self._whos(guesser, room, shared=True):
                record = self._records.setdefault(who, _Record())
                self._records.move_to_end(who)
                if now - record.last > QUIET_S:
                    record.strikes = 0
                record.last = now
                while record.times and record.times[0] <= now - self.window_s:
                    record.times.popleft()
                record.times.append(now)
                if len(record.times) >= self._most[who[0]]:
                    record.strikes += 1
                    record.until = now + min(MAX_WAIT_S, self.window_s * 2 ** (record.strikes - 1))
                    record.times.clear()
            while len(self._records) > MAX_TRACKED:
                self._records.popitem(last=False)


NEW_NAMES = 60  # new names a minute from one client identity: a class behind one address names itself at once
_codes, _keys, _names = Guesses("codes"), Guesses("keys"), Guesses("names", NEW_NAMES, NEW_NAMES)


def code_guesses() -> Guesses:
    """The process's count of wrong class codes and personal codes."""
    return _codes


def key_guesses() -> Guesses:
    """The process's count of wrong keys: the server's (starting a class, pinning a run) and a class's lecturer
    secret."""
    return _keys


def new_names() -> Guesses:
    """The process's count of new names taken in a class: each counts as a guess would (a flood of made-up names
    from one identity waits as a guesser does)."""
    return _names
