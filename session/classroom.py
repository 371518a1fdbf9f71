"""A class: a lecturer leads, the students who joined follow (no Streamlit here; ui/classroom.py draws it).

A class is kept in a process-wide registry under a short code (the key students are given: no accounts). Every
function of a class is a method here, so the class's state can move behind another store (Redis, issue 34)
without the page changing.

Who is who: each browser carries a token (a cookie the page sets, ui/class_identity.py); a student names
themselves once per class (`claim`), and the name is bound to that token: no other browser can vote or hand in
under it, and names a reader cannot tell apart (session/names.py: "alice smith", "Alice\\u200bSmith", Cyrillic
"Аlice Smith") are one name, refused to the second browser. A lecturer may instead give the class a roster: each
name gets a personal code (`roster_codes`) that binds it to the browser that opens it, and no other name is taken.

The lecturer: the browser that started the class (its token), or one that gives the class's own secret (drawn for
each class; never the server's $SCHEDLAB_LECTURER_KEY, which only starts classes and pins runs). What the lecturer
shows is a `Lead`: the shared run (session/run_cache.py: a follower holds the very run, nothing is recomputed),
the frame, the scenario picked and whether the lecturer's player is playing (followers then play along); each new
one gets the next version, and every seat following is woken (its `wake` callable: the page reruns that
student's stage). A lecturer's reload finds the lead where it was and takes it up (the class does not move).

Seats are open tabs: each has a `wake` and an `alive` callable; a seat whose tab has closed leaves at the next look
(`sweep`, which every count does first), so the head counts are the open tabs.

With predict-then-reveal, each question is a `Poll` keyed by (run title, step): each student (by name, whatever
tabs they have open) has one vote, their last before the reveal; only a following student votes (breaking away
closes their vote), and while a question about a frame ahead is open a follower's stage goes no further than the
lecturer's frame (`bound`). The lecturer sees the counts, reveals (the counts stay), closes or asks again;
`tallies_csv` exports them.
"""

from __future__ import annotations

import hmac
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from i18n import MessageError
from session.names import name_key, shown_name
from session.submissions import Submission, Submissions, csv_text

LECTURER_ENV = "SCHEDLAB_LECTURER_KEY"
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O or 1/I: a code is read off a projector
CODE_LENGTH = 5
PERSONAL_CODE_LENGTH = 8  # a roster name's code: a student types it, a script cannot guess it under the limits
MAX_CLASSES = 50  # classes whose lecturer has gone are closed beyond it, the oldest first: bounded memory
MAX_SEATS = 500  # open tabs per class
MAX_NAMES = 500  # students named per class

Wake = Callable[[], bool]  # reruns a session's stage; False when the session has gone
Alive = Callable[[], bool]  # whether the session's tab is still open (cheap: no rerun)


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
    """One question put to the class: its words in the lecturer's language, each student's choice (an index, by
    their name's key); `closed` by the lecturer (no more answers, the counts kept) or `revealed`."""
    title: str
    step: int
    question: str
    choices: tuple[str, ...]
    answer: int
    votes: dict[str, int] = field(default_factory=dict)
    revealed: bool = False
    closed: bool = False

    @property
    def open(self) -> bool:
        return not (self.revealed or self.closed)

    def counts(self) -> list[int]:
        return [sum(1 for v in self.votes.values() if v == i) for i in range(len(self.choices))]


@dataclass
class Seat:
    """One open tab in the class: how to wake it and tell it is open, its browser's token, whether it follows,
    and what its stage shows (for the roster)."""
    wake: Wake
    alive: Alive
    token: str
    following: bool = True
    frame: int = 0


@dataclass(frozen=True)
class RosterRow:
    """A student as the lecturer's roster shows them: `name` (None: a tab not named yet), tabs open, how many of
    them follow, the frame shown (the furthest of their tabs), whether they answered the open question (None: no
    question open), and each assignment's latest verdict (True passed, False not)."""
    name: str | None
    tabs: int
    following: int
    frame: int
    answered: bool | None
    assignments: dict[str, bool]


class ClassError(MessageError):
    """A class that cannot be joined (an unknown code, a full class, a name taken), with the reason in words."""


class Classroom:
    def __init__(self, code: str, lecturer_token: str = "", secret: str | None = None):
        self.code, self._secret = code, secret or secrets.token_urlsafe(12)
        self.started = time.time()
        self.lead: Lead | None = None
        self.ended = False
        self._seats: dict[str, Seat] = {}  # by session id
        self._lecturer_tokens = {lecturer_token} if lecturer_token else set()
        self._lecturer: tuple[str, Wake, Alive] | None = None
        self._names: dict[str, tuple[str, str]] = {}  # name's key -> (name as shown, token it is bound to)
        self._by_token: dict[str, str] = {}  # token -> name's key
        self._roster_codes: dict[str, str] = {}  # a roster name's personal code -> its key (roster classes only)
        self.polls: dict[tuple[str, int], Poll] = {}
        self.submissions = Submissions()  # the assignments handed in (session/submissions.py)
        self._lock = threading.Lock()

    # -- the lecturer ----------------------------------------------------------------------------------

    @property
    def secret(self) -> str:
        """The class's own lecturer secret (shown to the lecturer only, for another device)."""
        return self._secret

    def is_lecturer(self, token: str | None) -> bool:
        return bool(token) and token in self._lecturer_tokens

    def take_lectern(self, token: str, given_secret: str | None) -> bool:
        """A browser that gives the class's secret becomes a lecturer's too; whether the secret was right."""
        if not given_secret or not hmac.compare_digest(given_secret.encode(), self._secret.encode()):
            return False
        with self._lock:
            self._lecturer_tokens.add(token)
        return True

    def lecture(self, session: str, wake: Wake, alive: Alive = lambda: True):
        """The lecturer's session (woken when the class answers a poll, a seat is taken or hands in)."""
        with self._lock:
            self._lecturer = (session, wake, alive)

    def lecturer_here(self) -> bool:
        """Whether a lecturer's tab is open."""
        lecturer = self._lecturer
        return lecturer is not None and lecturer[2]()

    def publish(self, run, inputs, frame: int, scenario: str, predicting: bool, playing: float = 0.0) -> bool:
        """The lecturer shows this (`playing`: plays on from `frame` at that speed): when it is new, every seat
        following is woken. Whether it was new."""
        lead = Lead(run, inputs, frame, scenario, predicting, playing)
        with self._lock:
            if lead.same_place(self.lead):
                return False
            self.lead = Lead(run, inputs, frame, scenario, predicting, playing,
                             (self.lead.version + 1) if self.lead else 1)
            following = [(session, seat.wake) for session, seat in self._seats.items() if seat.following]
        self._wake(following)
        return True

    def bring_back(self):
        """Every student follows the lecturer again, and is woken to the lecturer's place."""
        with self._lock:
            for seat in self._seats.values():
                seat.following = True
            everyone = [(session, seat.wake) for session, seat in self._seats.items()]
        self._wake(everyone)

    def end(self):
        """The class is over: every seat is woken to leave it (the registry forgets it: Registry.close)."""
        with self._lock:
            self.ended = True
            everyone = [(session, seat.wake) for session, seat in self._seats.items()]
            self._seats.clear()
        self._wake(everyone)

    # -- names -----------------------------------------------------------------------------------------

    def claim(self, token: str, raw_name) -> str:
        """Bind a name to this browser (its token) for the class; the name as shown. ClassError: no usable
        name, one that reads as a name another browser holds, a second name for this browser, a roster class
        (names come with personal codes), or a class with MAX_NAMES names."""
        name = shown_name(raw_name)
        if name is None:
            raise ClassError("class.bad_name")
        key = name_key(name)
        with self._lock:
            if (mine := self._by_token.get(token)) is not None:
                if mine == key:
                    return self._names[key][0]
                raise ClassError("class.named_already", name=self._names[mine][0])
            if self._roster_codes:
                raise ClassError("class.roster_only")
            if key in self._names:
                raise ClassError("class.name_taken", name=self._names[key][0])
            if len(self._names) >= MAX_NAMES:
                raise ClassError("class.too_many_names", most=MAX_NAMES)
            self._names[key], self._by_token[token] = (name, token), key
        self._wake_lecturer()
        return name

    def set_roster(self, raw_names: list[str]) -> dict[str, str]:
        """The lecturer's list of the class's students: each new name gets a personal code (names a reader cannot
        tell apart are one); from then on a student is named only by opening their code. {name: code}, every
        roster name's."""
        with self._lock:
            for raw in raw_names[:MAX_NAMES]:
                name = shown_name(raw)
                if name is None or (key := name_key(name)) in self._roster_codes.values():
                    continue
                code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(PERSONAL_CODE_LENGTH))
                self._roster_codes[code] = key
                self._names.setdefault(key, (name, ""))
            return {self._names[key][0]: code for code, key in self._roster_codes.items()}

    def roster_codes(self) -> dict[str, str]:
        with self._lock:
            return {self._names[key][0]: code for code, key in self._roster_codes.items()}

    def claim_code(self, token: str, code: str) -> str | None:
        """A student opens their personal code: their roster name is bound to this browser (the first browser to
        open it keeps it). The name, or None for a code that is no roster name's."""
        with self._lock:
            key = self._roster_codes.get((code or "").strip().upper())
            if key is None:
                return None
            name, holder = self._names[key]
            if holder and holder != token:
                raise ClassError("class.name_taken", name=name)
            if (mine := self._by_token.get(token)) not in (None, key):
                raise ClassError("class.named_already", name=self._names[mine][0])
            self._names[key], self._by_token[token] = (name, token), key
        self._wake_lecturer()
        return name

    def name_of(self, token: str | None) -> str | None:
        """The name this browser goes by in the class, if any."""
        with self._lock:
            key = self._by_token.get(token or "")
            return None if key is None else self._names[key][0]

    def names(self) -> dict[str, str]:
        """Every student's name, by key (named, or on the roster)."""
        with self._lock:
            return {key: name for key, (name, _) in self._names.items()}

    # -- the students' tabs ----------------------------------------------------------------------------

    def sit(self, session: str, token: str, wake: Wake, alive: Alive = lambda: True, frame: int = 0):
        """A tab's seat (taken again by each of its page's runs: `frame` is what it shows). The lecturer is woken
        when a seat is taken (the banner and roster count them). A run of a tab already closed (a rerun queued
        before it closed) takes none."""
        if not alive():
            return
        with self._lock:
            seat = self._seats.get(session)
            if seat is None:
                if len(self._seats) >= MAX_SEATS:
                    self._sweep_locked()
                if len(self._seats) >= MAX_SEATS:
                    raise ClassError("class.full", seats=MAX_SEATS)
                self._seats[session] = Seat(wake, alive, token, frame=frame)
            else:
                seat.wake, seat.alive, seat.token, seat.frame = wake, alive, token, frame
        if seat is None:
            self._wake_lecturer()

    def set_following(self, session: str, on: bool):
        """A student breaks away (their vote on an open question closes) or follows again."""
        with self._lock:
            if (seat := self._seats.get(session)) is not None:
                seat.following = on
        self._wake_lecturer()

    def is_following(self, session: str) -> bool:
        """Whether this tab follows the lecturer (a tab not seated yet will, when it sits)."""
        with self._lock:
            seat = self._seats.get(session)
            return seat is None or seat.following

    def seats(self) -> tuple[int, int]:
        """(tabs open, of which following), once closed tabs have left."""
        with self._lock:
            self._sweep_locked()
            return len(self._seats), sum(1 for seat in self._seats.values() if seat.following)

    def leave(self, session: str):
        with self._lock:
            self._seats.pop(session, None)
        self._wake_lecturer()

    def sweep(self) -> int:
        """Seats whose tab has closed leave; how many left."""
        with self._lock:
            return self._sweep_locked()

    def _sweep_locked(self) -> int:
        gone = [session for session, seat in self._seats.items() if not seat.alive()]
        for session in gone:
            del self._seats[session]
        return len(gone)

    def roster(self) -> list[RosterRow]:
        """Every student named and every tab open (unnamed tabs last), for the lecturer."""
        asking = self.open_poll()
        with self._lock:
            self._sweep_locked()
            tabs: dict[str | None, list[Seat]] = {}
            for seat in self._seats.values():
                tabs.setdefault(self._by_token.get(seat.token), []).append(seat)
            names = dict(self._names)
        verdicts: dict[str, dict[str, bool]] = {}
        for s in self.submissions.of():
            verdicts.setdefault(s.key, {})[s.assignment] = s.passed
        rows = [RosterRow(name, len(tabs.get(key, [])), sum(s.following for s in tabs.get(key, [])),
                          max((s.frame for s in tabs.get(key, [])), default=0),
                          None if asking is None else key in asking.votes, verdicts.get(key, {}))
                for key, (name, _) in sorted(names.items())]
        rows += [RosterRow(None, 1, int(s.following), s.frame, None, {}) for s in tabs.get(None, [])]
        return rows

    # -- predictions -----------------------------------------------------------------------------------

    def poll(self, title: str, step: int, question: str, choices: tuple[str, ...], answer: int) -> Poll:
        """The poll on this question, opened the first time the lecturer or a student is asked it."""
        with self._lock:
            return self.polls.setdefault((title, step), Poll(title, step, question, tuple(choices), answer))

    def poll_at(self, title: str, step: int) -> Poll | None:
        """The poll on this question, if it was asked."""
        with self._lock:
            return self.polls.get((title, step))

    def open_poll(self, title: str | None = None) -> Poll | None:
        """The question the class is asked now: an open poll on a frame past the lecturer's (on `title`'s run)."""
        lead = self.lead
        if lead is None or not lead.predicting:
            return None
        with self._lock:
            asked = [p for p in self.polls.values() if p.open and p.step > lead.frame and title in (None, p.title)]
        return min(asked, key=lambda p: p.step, default=None)

    def bound(self, title: str) -> int | None:
        """The furthest frame a follower's stage may show: the lecturer's, while a question about a frame ahead is
        open (the answer is in the frames after it); None otherwise."""
        return None if self.open_poll(title) is None else self.lead.frame

    def vote(self, session: str, title: str, step: int, choice: int) -> bool:
        """A following student's answer (their last before the reveal counts, one per name whatever the tabs);
        the lecturer is woken to see the count. Whether it counted."""
        with self._lock:
            poll, seat = self.polls.get((title, step)), self._seats.get(session)
            key = None if seat is None else self._by_token.get(seat.token)
            if poll is None or not poll.open or key is None or not seat.following or \
                    not 0 <= choice < len(poll.choices):
                return False
            poll.votes[key] = choice
        self._wake_lecturer()
        return True

    def vote_of(self, token: str | None, poll: Poll) -> int | None:
        """This browser's student's answer on `poll`."""
        with self._lock:
            key = self._by_token.get(token or "")
        return None if key is None else poll.votes.get(key)

    def reveal(self, title: str, step: int) -> bool:
        """The answer for everyone (the counts stay): the lecturer then goes to the step, and the class follows."""
        with self._lock:
            poll = self.polls.get((title, step))
            if poll is None or poll.revealed:
                return False
            poll.revealed = True
        return True

    def close_poll(self, title: str, step: int):
        """No more answers on this question (the counts stay; not revealed)."""
        with self._lock:
            if (poll := self.polls.get((title, step))) is not None:
                poll.closed = True
        self._wake_following()

    def ask_again(self, title: str, step: int):
        """The question asked anew: every answer dropped, open again (and not revealed)."""
        with self._lock:
            if (poll := self.polls.get((title, step))) is not None:
                poll.votes.clear()
                poll.closed = poll.revealed = False
        self._wake_following()

    def tallies_csv(self) -> str:
        """One row per choice of every poll: what was asked, the choice, how many chose it, whether it was right;
        with a byte-order mark (Excel reads it as UTF-8)."""
        with self._lock:
            polls = list(self.polls.values())
        return csv_text(["class", "run", "step", "question", "choice", "count", "answered", "right", "revealed"],
                        [[self.code, poll.title, poll.step, poll.question, choice, n, len(poll.votes),
                          int(i == poll.answer), int(poll.revealed)]
                         for poll in polls for i, (choice, n) in enumerate(zip(poll.choices, poll.counts(),
                                                                                strict=True))])

    # -- assignments -----------------------------------------------------------------------------------

    def hand_in(self, token: str, assignment: str, judgement, link: str = "") -> Submission:
        """The named student's judged run (ClassError: this browser has no name in the class; SubmissionError: too
        many names); the lecturer is woken to see it."""
        with self._lock:
            key = self._by_token.get(token)
            name = None if key is None else self._names[key][0]
        if key is None:
            raise ClassError("class.name_first")
        submission = self.submissions.submit(name, key, assignment, judgement, link)
        self._wake_lecturer()
        return submission

    def gradebook_csv(self) -> str:
        return self.submissions.gradebook(self.code, self.names())

    # -- waking ----------------------------------------------------------------------------------------

    def _wake_lecturer(self):
        with self._lock:
            lecturer = [self._lecturer[:2]] if self._lecturer else []
        self._wake(lecturer)

    def _wake_following(self):
        with self._lock:
            following = [(session, seat.wake) for session, seat in self._seats.items() if seat.following]
        self._wake(following)

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

    def start(self, lecturer_token: str = "") -> Classroom:
        """A new class under a fresh code, led by the browser of `lecturer_token`, with a secret of its own.
        Beyond max_classes the oldest class whose lecturer's tab has closed is closed; ClassError when every class
        still has its lecturer."""
        with self._lock:
            while (code := "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))) in self._classes:
                pass
            if len(self._classes) >= self.max_classes:
                idle = [c for c, room in self._classes.items() if not room.lecturer_here()]
                if not idle:
                    raise ClassError("class.server_full", most=self.max_classes)
                self._classes.pop(min(idle, key=lambda c: self._classes[c].started)).end()
            room = Classroom(code, lecturer_token)
            self._classes[code] = room
            return room

    def find(self, code: str | None) -> Classroom | None:
        return self._classes.get((code or "").strip().upper())

    def get(self, code: str | None) -> Classroom:
        room = self.find(code)
        if room is None:
            raise ClassError("class.unknown")
        return room

    def close(self, code: str):
        with self._lock:
            room = self._classes.pop(code, None)
        if room is not None:
            room.end()


def server_lecturer_key() -> str | None:
    """$SCHEDLAB_LECTURER_KEY, when the server has one: only who gives it may start a class (or pin a run)."""
    return os.environ.get(LECTURER_ENV) or None


_registry = Registry()


def classes() -> Registry:
    """The process's classes."""
    return _registry
