"""Limits on guessing (no Streamlit): wrong class codes and wrong keys, counted per browser session, per client
identity (its address as the deployment sees it: session/client_identity.py) and, for a personal code (it belongs
to one class), per class. A few wrong guesses a minute pass; the one that uses up the allowance makes that
session, identity or class wait, and each time it is used up again the wait doubles (back-off, up to MAX_WAIT_S;
forgotten after QUIET_S without a wrong guess). While waiting, a guess is refused unchecked (a script learns
nothing) and the refusal says how long to wait. A right guess is taken back: it is never counted.

The shared counts (identity, class) stop a script that opens a new session per guess, but a class behind one
address shares them: who must never wait because others guessed is decided by the callers (session/class_door.py)
before the shared counts are read: a browser the class knows, an identity the class already has (the room: its
code is on the projector) and a secret too strong to be found by guessing.

The counts are kept in the classes' store (session/class_store.py): in a lecture hall, Redis, so its N processes
give a guesser one allowance, not N; on a single server, its memory. Each count is a string that expires once it no
longer matters (session/class_keys.py: `guesses_key`), so nothing grows without bound.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field

from i18n import MessageError
from session.class_keys import guesses_key
from session.class_store import ClassStore, Tx

WINDOW_S = 60.0
PER_SESSION, PER_IDENTITY, PER_CLASS = 5, 20, 30  # wrong guesses within WINDOW_S before a wait
MAX_WAIT_S = 15 * 60.0  # the longest wait, however often the allowance is used up
QUIET_S = 10 * 60.0  # without a wrong guess for so long, the back-off starts again from one window


def clock() -> float:
    """Seconds of the wall clock: the processes of a lecture hall share it (each has its own time.monotonic)."""
    return time.time()


class TooManyGuesses(MessageError):
    """Refused without looking: too many wrong guesses lately (the message says how long to wait)."""


@dataclass(frozen=True)
class Guesser:
    """Who guesses: a browser session and the client identity its connection comes from."""
    session: str
    identity: str


@dataclass(frozen=True)
class Taken:
    """A guess let through to be checked: the counts it was counted in (their keys) and its id."""
    keys: tuple[str, ...]
    guess: str


@dataclass
class _Record:
    """One session's, identity's or class's guesses: those in the window ([time, id] each, wall clock: the
    processes of a lecture hall share it), how often the allowance was used up lately (`strikes`), until when it
    waits, when it last guessed and that guess's id, and `undo`: [id, strikes, until, times] before the guess
    that used up the allowance (if it was right after all, as it was). Filed as JSON in a string of the store that
    expires once it no longer matters."""
    times: list[list] = field(default_factory=list)
    strikes: int = 0
    until: float = 0.0
    last: float = 0.0
    guess: str = ""
    undo: list | None = None

    @classmethod
    def filed(cls, value: str | None) -> _Record:
        return cls() if value is None else cls(*json.loads(value))

    def value(self) -> str:
        return json.dumps([self.times, self.strikes, self.until, self.last, self.guess, self.undo])


class Guesses:
    """Guesses of one kind (class codes, keys, new names), per session, per identity and per class, counted in the
    class store: a lecture hall's processes share one allowance (Redis), a single server keeps it in its memory.
    A guess is counted as it is let through, in the same atomic change that sees whether the guesser must wait
    (`take`), so guessers at once on several processes get no more checked than the allowance; a right one is then
    taken back (`forgive`)."""

    def __init__(self, kind: str, store: ClassStore, per_session: int = PER_SESSION,
                 per_identity: int = PER_IDENTITY, per_class: int = PER_CLASS, window_s: float = WINDOW_S):
        self.kind, self.store, self.window_s = kind, store, window_s
        self._most = {"session": per_session, "identity": per_identity, "class": per_class}

    def _whos(self, guesser: Guesser, room: str | None, shared: bool) -> list[tuple[str, str]]:
        """(who, its key in the store) of each count this guess concerns."""
        whos = [("session", guesser.session)]
        if shared:
            whos.append(("identity", guesser.identity))
            if room is not None:
                whos.append(("class", room))
        return [(who, guesses_key(self.kind, who, name)) for who, name in whos]

    def wait_s(self, guesser: Guesser, room: str | None = None, shared: bool = True) -> float:
        """Seconds until this guesser (its session; with `shared`, its identity and the class `room`) may guess
        again (0: now)."""
        now = clock()
        return max([0.0, *(_Record.filed(self.store.get(key)).until - now
                           for _, key in self._whos(guesser, room, shared))])

    def check(self, guesser: Guesser, room: str | None = None, shared: bool = True):
        """Raise TooManyGuesses while this guesser must wait (`shared` False: only its own session's guesses)."""
        self._refuse_while(self.wait_s(guesser, room, shared))

    def _refuse_while(self, wait: float):
        if wait > 0:
            raise TooManyGuesses(f"limit.{self.kind}", seconds=max(1, round(wait)))

    def take(self, guesser: Guesser, room: str | None = None, shared: bool = True) -> Taken:
        """Let a guess through to be checked, counted at once for the session, the identity and the class `room`:
        TooManyGuesses (nothing counted) while this guesser must wait (`shared` False: only its own session's
        guesses decide). The guess that uses up an allowance makes that count wait; `forgive` a right one."""
        whos, now = self._whos(guesser, room, shared=True), clock()
        checked = {key for _, key in self._whos(guesser, room, shared)}
        taken = Taken(tuple(key for _, key in whos), secrets.token_hex(8))
        self._refuse_while(self.store.atomically(taken.keys, lambda tx: self._counted(tx, whos, checked, now,
                                                                                      taken.guess)))
        return taken

    def _counted(self, tx: Tx, whos: list[tuple[str, str]], checked: set[str], now: float, guess: str) -> float:
        """The guess counted in each record (0), or the wait of one it is checked against (nothing written)."""
        records = {key: _Record.filed(tx.get(key)) for _, key in whos}
        if any(record.guess == guess for record in records.values()):
            return 0.0  # this very guess, its change run again (session/class_store.py): counted once
        if (wait := max(records[key].until - now for key in checked)) > 0:
            return wait
        for who, key in whos:
            record = records[key]
            if now - record.last > QUIET_S:
                record.strikes = 0
            before = [guess, record.strikes, record.until, [t for t in record.times if t[0] > now - self.window_s]]
            record.last, record.guess, record.times = now, guess, [*before[3], [now, guess]]
            if len(record.times) >= self._most[who]:
                record.strikes += 1
                record.until = now + min(MAX_WAIT_S, self.window_s * 2 ** (record.strikes - 1))
                record.times, record.undo = [], before
            self._file(tx, key, record, now)
        return 0.0

    def forgive(self, taken: Taken):
        """The guess was right: taken back from every count (and the wait it started, if it used one up)."""
        now = clock()

        def change(tx: Tx):
            for key in taken.keys:
                record = _Record.filed(tx.get(key))
                if record.undo is not None and record.undo[0] == taken.guess:
                    _, record.strikes, record.until, record.times = record.undo
                    record.undo = None
                elif any(t[1] == taken.guess for t in record.times):
                    record.times = [t for t in record.times if t[1] != taken.guess]
                else:
                    continue  # not counted there any more (or taken back already)
                self._file(tx, key, record, now)
        self.store.atomically(taken.keys, change)

    def _file(self, tx: Tx, key: str, record: _Record, now: float):
        """Kept while it still matters: its wait, its strikes (QUIET_S) and its window."""
        tx.set(key, record.value(), ttl_s=max(record.until - now, QUIET_S, self.window_s))


NEW_NAMES = 60  # new names a minute from one client identity: a class behind one address names itself at once


def code_guesses(store: ClassStore) -> Guesses:
    """The count of wrong class codes and personal codes in `store` (the classes' store)."""
    return Guesses("codes", store)


def key_guesses(store: ClassStore) -> Guesses:
    """The count of wrong keys in `store`: the server's (starting a class, pinning a run) and a class's lecturer
    secret."""
    return Guesses("keys", store)


def new_names(store: ClassStore) -> Guesses:
    """The count of new names taken in a class, in `store`: each counts as a guess would (a flood of made-up
    names from one identity waits as a guesser does)."""
    return Guesses("names", store, NEW_NAMES, NEW_NAMES)
