"""The open tabs of a class (no Streamlit): each tab of this process that shows the class has a `Seat`: how to wake
it (its `wake` callable reruns that student's stage; False once its session has gone) and whether it is still open
(`alive`: cheap, no rerun). A seat whose tab has closed leaves at the next look (`sweep`, which every count does
first), so the head counts are the open tabs. Each process files its seats in the store under its own name (the
counts and the roster read every process's); the seats of a process that stopped answering (its heartbeat
expired: session/redis_store.py) leave with it, by whichever process notices first.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass

from session.class_error import ClassError
from session.class_keys import CLASSES, ClassKeys, heartbeat
from session.class_store import ClassStore, Tx

MAX_SEATS = 500  # open tabs per class
Wake = Callable[[], bool]  # reruns a session's stage; False when the session has gone
Alive = Callable[[], bool]  # whether the session's tab is still open (cheap: no rerun)


@dataclass
class Seat:
    """One open tab of this process in the class: how to wake it and tell it is open, its browser's token,
    whether it follows, and what its stage shows (for the roster)."""
    wake: Wake
    alive: Alive
    token: str
    following: bool = True
    frame: int = 0

    def filed(self) -> str:
        """What the store keeps of it (every process counts it)."""
        return json.dumps([self.token, self.following, self.frame])


class Seats:
    """This process's seats in a class, and every process's as filed; `changed` is called when a seat is taken,
    left or changes what it follows (the lecturer's counts)."""

    def __init__(self, store: ClassStore, keys: ClassKeys, changed: Callable[[], None]):
        self.store, self.keys, self._changed = store, keys, changed
        self._seats: dict[str, Seat] = {}  # this process's tabs, by session id
        self._lock = threading.Lock()

    def sit(self, session: str, token: str, wake: Wake, alive: Alive = lambda: True, frame: int = 0):
        """A tab's seat (taken again by each of its page's runs: `frame` is what it shows). The lecturer is woken
        when a seat is taken (the banner and roster count them). A run of a tab already closed (a rerun queued
        before it closed) takes none."""
        if not alive():
            return
        with self._lock:
            seat = self._seats.get(session)
            before = None if seat is None else seat.filed()
            if seat is None:
                seat = Seat(wake, alive, token, frame=frame)
            else:
                seat.wake, seat.alive, seat.token, seat.frame = wake, alive, token, frame
        if before is None and self.counts()[0] >= MAX_SEATS:
            raise ClassError("class.full", seats=MAX_SEATS)
        with self._lock:
            self._seats[session] = seat
        if seat.filed() != before:
            self._file(session, seat)
        if before is None:
            self._changed()

    def _file(self, session: str, seat: Seat | None):
        """This process's seat as the store keeps it (None: gone); nothing is filed once the class has ended."""
        k, process = self.keys, self.store.process
        if seat is None:
            self.store.hdel(k.seats(process), session)
            return
        self.store.hset_while((CLASSES, k.code), [(k.processes, process, "1"), (k.seats(process), session,
                                                                                    seat.filed())])

    def leave(self, session: str):
        with self._lock:
            self._seats.pop(session, None)
        self._file(session, None)
        self._changed()

    def set_following(self, session: str, on: bool):
        """A student breaks away (their vote on an open question closes) or follows again."""
        with self._lock:
            seat = self._seats.get(session)
            if seat is not None:
                seat.following = on
        if seat is not None:
            self._file(session, seat)
        self._changed()

    def is_following(self, session: str) -> bool:
        """Whether this tab follows the lecturer (a tab not seated yet will, when it sits)."""
        with self._lock:
            seat = self._seats.get(session)
            return seat is None or seat.following

    def seat(self, session: str) -> Seat | None:
        with self._lock:
            return self._seats.get(session)

    def sweep(self) -> int:
        """Seats of this process whose tab has closed leave; how many left."""
        with self._lock:
            gone = [session for session, seat in self._seats.items() if not seat.alive()]
            for session in gone:
                del self._seats[session]
        for session in gone:
            self._file(session, None)
        return len(gone)

    def counts(self) -> tuple[int, int]:
        """(tabs open, of which following), on every process that answers, once closed tabs have left."""
        every = self.every()
        return len(every), sum(1 for _, following, _ in every if following)

    def every(self) -> list[tuple[str, bool, int]]:
        """(token, following, frame) of every tab open in the class, on every process that answers (the seats of a
        process that has gone leave with it)."""
        self.sweep()
        every = []
        for process in self.store.hgetall(self.keys.processes):
            if self.store.is_up(process):
                every += [tuple(json.loads(filed)) for filed in self.store.hgetall(self.keys.seats(process)).values()]
            elif self.store.settled():  # (just after Redis came back, a silent process may only not have beaten yet)
                self.drop(process)
        return every

    def drop(self, process: str) -> bool:
        """The seats of a process that stopped answering (its heartbeat expired) leave the class; whether they were
        still filed (the process that drops them wakes the lecturer)."""
        k = self.keys

        def change(tx: Tx) -> bool:
            if tx.get(heartbeat(process)) is not None or tx.hget(k.processes, process) is None:
                return False  # it answers again, or another process dropped its seats first
            tx.hdel(k.processes, process)
            tx.delete(k.seats(process))
            return True
        return self.store.atomically((heartbeat(process), k.processes), change)

    def drop_the_silent(self) -> bool:
        """Every process's seats whose process stopped answering leave (each store beat); whether any left."""
        return self.store.settled() and any([self.drop(process) for process in self.store.hgetall(self.keys.processes)
                    if not self.store.is_up(process)])

    def tabs_by_process(self) -> dict[str, int]:
        """Tabs open in the class on each server process that has any (by the store's name of the process)."""
        return {process: self.store.hlen(self.keys.seats(process))
                for process in self.store.hgetall(self.keys.processes) if self.store.is_up(process)}

    def woken(self, everyone: bool, ended: bool = False) -> list[tuple[str, Wake]]:
        """(session, wake) of this process's tabs to wake: the following ones, or `everyone` (who then follow
        again); `ended`: the class is over, every seat is let go."""
        with self._lock:
            if everyone:
                for seat in self._seats.values():
                    seat.following = True
            woken = [(session, seat.wake) for session, seat in self._seats.items() if everyone or seat.following]
            if ended:
                self._seats.clear()
        return woken

    def refile(self, sessions: list[str]):
        """These seats as they are now, filed again (after everyone was brought back)."""
        for session in sessions:
            if (seat := self.seat(session)) is not None:
                self._file(session, seat)

    def gone(self, sessions: list[str], ended: bool = False):
        """These tabs' sessions have gone: their seats leave (not filed again once the class has ended)."""
        with self._lock:
            for session in sessions:
                self._seats.pop(session, None)
        if not ended:
            for session in sessions:
                self._file(session, None)
