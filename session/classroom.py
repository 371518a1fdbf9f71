"""A class: a lecturer leads, the students who joined follow (no Streamlit here; ui/classroom.py draws it).

A class is kept in a process-wide registry under a short code (the key students are given: no accounts). The
lecturer's controls need the lecturer's secret: $SCHEDLAB_LECTURER_KEY when the server has one (the key that
also pins runs in the "This server" panel), else a secret drawn for the class. What the lecturer shows is a
`Lead`: the shared run (session/run_cache.py: a follower holds the very run, nothing is recomputed), the frame,
the scenario picked and whether the lecturer's player is playing (followers then play along, from the frame the
lecturer is on, at the lecturer's speed, and land on the lecturer's frame at the pause); each new one gets the
next version, and every seat taken is woken (its `wake` callable: the page reruns that student's stage) so it
shows it within a second. A seat that breaks away keeps its place and is not woken until it follows again.

With predict-then-reveal, each question the class is asked is a `Poll` keyed by (run title, step): a student
answers once (by the index of the choice: students read the choices in their own languages), the lecturer
sees the counts before revealing, then reveals for everyone; `tallies_csv` exports them.
"""

from __future__ import annotations

import csv
import hmac
import io
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from i18n import MessageError
from session.submissions import Submission, Submissions

LECTURER_ENV = "SCHEDLAB_LECTURER_KEY"
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O or 1/I: a code is read off a projector
CODE_LENGTH = 5
MAX_CLASSES = 50  # the oldest class is closed beyond it: one server, bounded memory
MAX_SEATS = 500  # students per class

Wake = Callable[[], bool]  # reruns a session's stage; False when the session has gone


@dataclass(frozen=True)
class Lead:
    """What the lecturer shows: `run` (a session.run_cache.SharedRun), its `inputs`, the `frame`, the scenario
    picked in the sidebar, whether predict-then-reveal is on, and `playing`: the speed (steps per second) the
    lecturer's player plays at from `frame` since `at` (time.monotonic()), 0 while it stands still; `version`
    numbers the leads of a class."""
    run: Any
    inputs: Any
    frame: int
    scenario: str
    predicting: bool = False
    playing: float = 0.0
    version: int = 0
    at: float = field(default_factory=lambda: time.monotonic())  # read when made (a test sets the clock)

    def same_place(self, other: Lead | None) -> bool:
        return other is not None and (self.run, self.frame, self.scenario, self.predicting, self.playing) == (
            other.run, other.frame, other.scenario, other.predicting, other.playing)

    def frame_now(self, last: int) -> int:
        """The frame the lecturer's player shows now (it plays on by itself from `frame`), at most `last`: a
        follower woken late starts playing there, not where the lecturer started."""
        return min(last, self.frame + int((time.monotonic() - self.at) * self.playing))


@dataclass
class Poll:
    """One question put to the class: its words in the lecturer's language, each seat's choice (an index)."""
    title: str
    step: int
    question: str
    choices: tuple[str, ...]
    answer: int
    votes: dict[str, int] = field(default_factory=dict)
    revealed: bool = False

    def counts(self) -> list[int]:
        return [sum(1 for v in self.votes.values() if v == i) for i in range(len(self.choices))]


class ClassError(MessageError):
    """A class that cannot be joined (an unknown code, a full class), with the reason in words."""


class Classroom:
    def __init__(self, code: str, secret: str):
        self.code, self._secret = code, secret
        self.started = time.time()
        self.lead: Lead | None = None
        self._seats: dict[str, tuple[Wake, bool]] = {}  # session id -> (wake, following)
        self._lecturer: tuple[str, Wake] | None = None
        self.polls: dict[tuple[str, int], Poll] = {}
        self.submissions = Submissions()  # the assignments handed in (session/submissions.py)
        self._lock = threading.Lock()

    # -- the lecturer ----------------------------------------------------------------------------------

    def is_lecturer_secret(self, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(given.encode(), self._secret.encode())

    @property
    def secret(self) -> str:
        return self._secret

    def lecture(self, session: str, wake: Wake):
        """The lecturer's session (woken when the class answers a poll)."""
        with self._lock:
            self._lecturer = (session, wake)

    def publish(self, run, inputs, frame: int, scenario: str, predicting: bool, playing: float = 0.0) -> bool:
        """The lecturer shows this (`playing`: plays on from `frame` at that speed): when it is new, every seat
        following is woken. Whether it was new."""
        lead = Lead(run, inputs, frame, scenario, predicting, playing)
        with self._lock:
            if lead.same_place(self.lead):
                return False
            self.lead = Lead(run, inputs, frame, scenario, predicting, playing,
                             (self.lead.version + 1) if self.lead else 1)
            following = [(session, wake) for session, (wake, on) in self._seats.items() if on]
        self._wake(following)
        return True

    # -- the students ----------------------------------------------------------------------------------

    def sit(self, session: str, wake: Wake, following: bool = True):
        """A student's seat (taken again by each of its page's runs); `following` or broken away. The lecturer is
        woken when a seat is taken or changes (the class banner counts them)."""
        with self._lock:
            before = self._seats.get(session)
            if before is None and len(self._seats) >= MAX_SEATS:
                raise ClassError("class.full", seats=MAX_SEATS)
            self._seats[session] = (wake, following)
            lecturer = [self._lecturer] if self._lecturer and (before is None or before[1] != following) else []
        self._wake(lecturer)

    def is_following(self, session: str) -> bool:
        with self._lock:
            return self._seats.get(session, (None, False))[1]

    def seats(self) -> tuple[int, int]:
        """(seats taken, of which following)."""
        with self._lock:
            return len(self._seats), sum(1 for _, on in self._seats.values() if on)

    def leave(self, session: str):
        with self._lock:
            self._seats.pop(session, None)

    # -- predictions -----------------------------------------------------------------------------------

    def poll(self, title: str, step: int, question: str, choices: tuple[str, ...], answer: int) -> Poll:
        """The poll on this question, opened the first time the lecturer or a student is asked it."""
        with self._lock:
            return self.polls.setdefault((title, step), Poll(title, step, question, tuple(choices), answer))

    def vote(self, session: str, title: str, step: int, choice: int) -> bool:
        """A student's answer (their last before the reveal counts); the lecturer is woken to see the count."""
        with self._lock:
            poll = self.polls.get((title, step))
            if poll is None or poll.revealed or not 0 <= choice < len(poll.choices):
                return False
            poll.votes[session] = choice
            lecturer = [self._lecturer] if self._lecturer else []
        self._wake(lecturer)
        return True

    def reveal(self, title: str, step: int) -> bool:
        """The answer for everyone: the lecturer then goes to the step, and the class follows (publish)."""
        with self._lock:
            poll = self.polls.get((title, step))
            if poll is None or poll.revealed:
                return False
            poll.revealed = True
        return True

    def tallies_csv(self) -> str:
        """One row per choice of every poll: what was asked, the choice, how many chose it, whether it was right."""
        out = io.StringIO()
        rows = csv.writer(out)
        rows.writerow(["class", "run", "step", "question", "choice", "count", "answered", "right", "revealed"])
        with self._lock:
            polls = list(self.polls.values())
        for poll in polls:
            for i, (choice, n) in enumerate(zip(poll.choices, poll.counts(), strict=True)):
                rows.writerow([self.code, poll.title, poll.step, poll.question, choice, n, len(poll.votes),
                               int(i == poll.answer), int(poll.revealed)])
        return out.getvalue()

    # -- assignments -----------------------------------------------------------------------------------

    def hand_in(self, name: str, assignment: str, judgement) -> Submission:
        """A student's judged run (SubmissionError: a name refused); the lecturer is woken to see it."""
        submission = self.submissions.submit(name, assignment, judgement)
        with self._lock:
            lecturer = [self._lecturer] if self._lecturer else []
        self._wake(lecturer)
        return submission

    # -- waking ----------------------------------------------------------------------------------------

    def _wake(self, sessions: list[tuple[str, Wake]]):
        """Wake each session (outside the lock); a session that has gone leaves its seat."""
        gone = [session for session, wake in sessions if not wake()]
        if gone:
            with self._lock:
                for session in gone:
                    self._seats.pop(session, None)


class Registry:
    """Every class of this process, by code."""

    def __init__(self, max_classes: int = MAX_CLASSES):
        self.max_classes = max_classes
        self._classes: dict[str, Classroom] = {}
        self._lock = threading.Lock()

    def start(self, lecturer_key: str | None = None) -> Classroom:
        """A new class under a fresh code; its secret is `lecturer_key` (the server's) or one drawn for it."""
        with self._lock:
            while (code := "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))) in self._classes:
                pass
            room = Classroom(code, lecturer_key or secrets.token_urlsafe(12))
            self._classes[code] = room
            while len(self._classes) > self.max_classes:
                del self._classes[min(self._classes, key=lambda c: self._classes[c].started)]
            return room

    def get(self, code: str | None) -> Classroom:
        room = self._classes.get((code or "").strip().upper())
        if room is None:
            raise ClassError("class.unknown", code=repr(code or ""))
        return room

    def close(self, code: str):
        with self._lock:
            self._classes.pop(code, None)


def server_lecturer_key() -> str | None:
    """$SCHEDLAB_LECTURER_KEY, when the server has one: only who gives it may start a class."""
    return os.environ.get(LECTURER_ENV) or None


_registry = Registry()


def classes() -> Registry:
    """The process's classes."""
    return _registry
