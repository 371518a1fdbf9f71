"""A class: a lecturer leads, the students who joined follow (no Streamlit here; ui/classroom.py draws it).

A class is kept under a short code (the key students are given: no accounts) in a store (session/class_store.py):
this process's memory by default, Redis for a lecture hall of several server processes; session/class_keys.py
names every key it is filed under. A `Classroom` is one class as this process sees it, in rooms of their own, each
written once over the store's interface (the class logic does not know which store it has), each change of shared
state one atomic change of the store:
- `names` (session/class_names.py): who is who, names bound to browsers, the roster's personal codes;
- `lectern` (session/class_lead.py): the lecturer's browsers and tab, and the `Lead` (what the lecturer shows);
- `polls` (session/class_polls.py): predict-then-reveal's questions and votes, the predictions' CSV;
- `submissions` (session/submissions.py): the assignments handed in, the gradebook;
- `coding` (session/coding.py): the coding assignments, the code handed in on them (graded: session/coding_grade.py);
- `seats` (session/class_seats.py): the open tabs, this process's and every process's as filed.
What needs several of them is here: a vote (a following tab's student's name), the roster, the question the class
is asked now and how far a follower may go, handing in, and the wake-ups: published on the store (`Registry`
hears them, in every process), each process wakes its own tabs.

With predict-then-reveal only a following student votes, and while a question about a frame ahead is open a
follower's stage goes no further than the lecturer's frame (`bound`); breaking away from any tab closes that
browser's, and its student's, vote on the questions open then, for good (`close_votes`, `vote_closed`).
"""

from __future__ import annotations

import functools
import json
import os
import secrets
import threading
import time
from dataclasses import dataclass

from session.class_error import ClassError, is_open
from session.class_keys import BRING_BACK, CLASSES, ENDED, ENDED_CLASSES, FOLLOWING, LEAD, LECTURER, ClassKeys, poll_id
from session.class_lead import Lead, Lectern, Recipes, clock, device_entry, play_ahead
from session.class_names import CODE_ALPHABET, MAX_NAMES, Names, drawn_code
from session.class_polls import Poll, Polls
from session.class_seats import MAX_SEATS, Alive, Seats, Wake
from session.class_store import ClassStore, MemoryStore, Tx, store_from_env
from session.coding import Coding, CodingAssignment, CodingError, HandIn
from session.submissions import Submission, Submissions
from session.tokens import Tokens

__all__ = ["CODE_ALPHABET", "MAX_NAMES", "MAX_SEATS", "Alive", "ClassError", "Lead", "Poll", "Wake", "play_ahead"]

LECTURER_ENV = "SCHEDLAB_LECTURER_KEY"
CODE_LENGTH = 5
MAX_CLASSES = 50  # classes whose lecturer has gone are closed beyond it, the oldest first: bounded memory
# The longest a process keeps what it read of whether a class is still open without looking again: a page run asks
# it many times over, once per tab each is enough.
FACTS_KEPT_S = 1.0
ENDED_KEPT_S = 12 * 3600.0  # an ended class's code is known as ended so long (its link is no wrong guess)
MAX_ENDED = 1000  # ended codes kept; the oldest are forgotten beyond
MAX_IDENTITIES = MAX_SEATS  # client identities a class remembers having been entered from


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


@dataclass(frozen=True)
class Heads:
    """People, not tabs: students with a tab open, of which following the lecturer, of which named (those who can
    answer a question)."""
    here: int
    following: int
    following_named: int


def heads_of(rows: list[RosterRow]) -> Heads:
    """The students of a roster who are here, each counted once whatever their tabs (a tab not named yet counts
    as one)."""
    here = [row for row in rows if row.tabs]
    return Heads(len(here), sum(row.following > 0 for row in here),
                 sum(row.following > 0 and row.name is not None for row in here))


class Classroom:
    def __init__(self, code: str, store: ClassStore, started: float, recipes: Recipes | None = None):
        self.code, self.started, self.store = code, started, store
        self.keys = ClassKeys(code)
        self.names = Names(store, self.keys, self._wake_lecturer)
        self.lectern = Lectern(store, self.keys, recipes or Recipes())
        self.polls = Polls(store, self.keys)
        self.submissions = Submissions(store, self.keys)
        self.coding = Coding(store, self.keys, self.submissions)
        self.seats = Seats(store, self.keys, self._wake_lecturer)
        self._ended: bool | float | None = None  # True: over; a time.monotonic(): open when read then (FACTS_KEPT_S)
        self._lock = threading.Lock()

    @property
    def ended(self) -> bool:
        """Whether the class is over (read again at most every FACTS_KEPT_S; over is for good)."""
        self.store.check()
        with self._lock:
            if self._ended is True or (self._ended is not None and time.monotonic() - self._ended < FACTS_KEPT_S):
                return self._ended is True
        over = self.store.hget(CLASSES, self.code) is None
        with self._lock:
            self._ended = True if over else time.monotonic()
        return over

    def open_lately(self) -> bool:
        """Whether the class was read as open less than FACTS_KEPT_S ago."""
        with self._lock:
            return self._ended not in (None, True) and time.monotonic() - self._ended < FACTS_KEPT_S

    @property
    def secret(self) -> str:
        """The class's own lecturer secret (shown to the lecturer only, for another device; rotated by a lecturer)."""
        return self.lectern.secret

    @property
    def lead(self) -> Lead | None:
        return self.lectern.lead

    def is_lecturer(self, token: str | None) -> bool:
        return self.lectern.is_lecturer(token)

    def bring_back(self):
        """Every student follows the lecturer again, and is woken to the lecturer's place (on every process)."""
        self.store.publish(self.code, BRING_BACK)

    def end(self):
        """The class is over, at once for every change of its state (session/class_error.py `is_open`); every
        seat is woken to leave it; its keys are deleted (the registry forgets it: Registry.close)."""
        self.store.hdel(CLASSES, self.code)
        self._file_ended()
        with self._lock:
            self._ended = True
        self.store.publish(self.code, ENDED)
        self.store.delete_prefix(self.keys.prefix)

    def _file_ended(self):
        """The code is known as ended (ENDED_KEPT_S; the oldest forgotten beyond MAX_ENDED)."""
        self.store.hset(ENDED_CLASSES, self.code, json.dumps(clock()))
        if self.store.hlen(ENDED_CLASSES) > MAX_ENDED:
            ended = self.store.hgetall(ENDED_CLASSES)
            self.store.hdel(ENDED_CLASSES, min(ended, key=lambda code: json.loads(ended[code])))

    def knows(self, token: str | None) -> bool:
        """Whether this browser is the class's already: a lecturer's, or a student's named here (a reload is no
        guess)."""
        return self.is_lecturer(token) or self.names.key_of(token) is not None

    def knows_identity(self, identity: str) -> bool:
        """Whether the class has been entered from this client identity (the room: the code is on its projector)."""
        return self.store.hget(self.keys.identities, identity) is not None

    def met(self, identity: str):
        """The class was entered from this client identity (the first MAX_IDENTITIES are remembered)."""
        if not self.knows_identity(identity) and self.store.hlen(self.keys.identities) < MAX_IDENTITIES:
            self.store.hset(self.keys.identities, identity, "1")

    def heads(self) -> Heads:
        return heads_of(self.roster())

    # -- what needs several rooms --------------------------------------------------------------------------------

    def question(self, token: str | None, title: str, step: int, question: str, choices: tuple[str, ...],
                 answer: int) -> Poll | None:
        """The class's poll on this question, while the lecturer's predictions are on: the lecturer's page opens
        it (its words in the lecturer's language); a student's page only finds the one the lecturer opened (a
        student's browser asks the class nothing). None otherwise."""
        lead = self.lead
        if lead is None or not lead.predicting:
            return None
        if (known := self.polls.at(title, step)) is not None or not self.is_lecturer(token):
            return known
        poll = self.polls.ask(title, step, question, choices, answer)
        self.store.publish(self.code, FOLLOWING)  # asked now: the followers' pages show it
        return poll

    def vote(self, session: str, title: str, step: int, choice: int) -> bool:
        """A following student's answer (their last before the reveal counts, one per name whatever the tabs) on a
        question the lecturer asks about a frame ahead of theirs, while their predictions are on; the lecturer is
        woken to see the count. Whether it counted; ClassError when the browser's vote on it is closed
        (`vote_closed`: a tab of it also went past the lecturer's frame on its own), or a tab of it is on its own
        now."""
        seat, lead = self.seats.seat(session), self.lead
        asking = lead is not None and lead.predicting and step > lead.frame
        key = None if seat is None or not seat.following or not asking else self.names.key_of(seat.token)
        if key is not None and (self.vote_closed(seat.token, title, step) or self._away_now(seat.token)):
            raise ClassError("class.vote_closed")
        if key is None or not self.polls.vote(key, title, step, choice):
            return False
        self._wake_lecturer()
        return True

    def set_following(self, session: str, token: str, on: bool):
        """A tab breaks away (its browser's votes on the questions open now close: `close_votes`) or follows
        again. The votes close before the tab is free to go on: a vote checked before then was sent unseen."""
        if not on:
            self.close_votes(token)
        self.seats.set_following(session, on)

    def close_votes(self, token: str):
        """A tab of this browser is on its own: its browser's, and its student's, votes on every question open now
        are closed for good (following again does not unsee what it showed)."""
        who = concerned(token, self.names.key_of(token))
        marks = [(self.keys.away, away_mark(p.title, p.step, w), "1") for p in self.polls.all() if p.open for w in who]
        if marks:
            self.store.hset_while((CLASSES, self.code), marks)

    def saw_alone(self, token: str, title: str, frame: int):
        """A tab of this browser, on its own, has shown `title`'s run up to `frame` (or sent its player frames so
        far): kept, the furthest, while the class lasts. A tab that broke away before a question was asked and
        follows again before its page ran once more is not away when the question is asked, yet it ran ahead:
        its browser's student may not answer a question on a frame it has passed (`vote`)."""
        k, field = self.keys, json.dumps([title, token])
        if int(self.store.hget(k.seen_alone, field) or -1) >= frame:
            return  # known already (a page run of a tab on its own asks at each run)

        def change(tx: Tx):
            if is_open(tx, k) and int(tx.hget(k.seen_alone, field) or -1) < frame:
                tx.hset(k.seen_alone, field, str(frame))
        self.store.atomically((CLASSES, k.seen_alone), change)

    def vote_closed(self, token: str, title: str, step: int) -> bool:
        """Whether this browser's student may no longer answer the question on (`title`, `step`): a tab of the
        browser, or of another browser under the same name, broke away while it was open (the breaking away of any
        tab closes the browser's vote: its other tabs follow, that one may show the answer), or went past the
        lecturer's frame on its own (`_ran_ahead`). A few reads: the page asks it before drawing the question; a
        vote also asks `_away_now`."""
        if any(self.store.hget(self.keys.away, away_mark(title, step, w))
               for w in concerned(token, self.names.key_of(token))):
            return True
        lead = self.lead
        return lead is not None and self._ran_ahead(token, title, lead.frame)

    def _away_now(self, token: str) -> bool:
        """Whether a tab of this browser, or of another browser under the same name, is on its own now (on any
        process): one that broke away before the question was asked may show its answer already."""
        key, by_token = self.names.key_of(token), self.store.hgetall(self.keys.by_token)
        return any(not following and (seat_token == token or (key is not None and by_token.get(seat_token) == key))
                   for seat_token, following, _ in self.seats.every())

    def _ran_ahead(self, token: str, title: str, frame: int) -> bool:
        """Whether a tab of this browser, or of another browser under the same name, has shown `title`'s run past
        `frame` (the lecturer's) while on its own (`saw_alone`)."""
        key = self.names.key_of(token)
        by_token = self.store.hgetall(self.keys.by_token) if key is not None else {}
        tokens = {token, *(other for other, its_key in by_token.items() if its_key == key)}
        return any(int(self.store.hget(self.keys.seen_alone, json.dumps([title, t])) or -1) > frame for t in tokens)

    def vote_of(self, token: str | None, poll: Poll) -> int | None:
        """This browser's student's answer on `poll`."""
        return self.polls.vote_of(self.names.key_of(token), poll)

    def open_poll(self, title: str | None = None) -> Poll | None:
        """The question the class is asked now: an open poll on a frame past the lecturer's (on `title`'s run)."""
        lead = self.lead
        if lead is None or not lead.predicting:
            return None
        asked = [p for p in self.polls.all() if p.open and p.step > lead.frame and title in (None, p.title)]
        return min(asked, key=lambda p: p.step, default=None)

    def bound(self, title: str) -> int | None:
        """The furthest frame a follower's stage may show: the lecturer's, while a question about a frame ahead is
        open (the answer is in the frames after it); None otherwise."""
        return None if self.open_poll(title) is None else self.lead.frame

    def close_poll(self, title: str, step: int):
        """No more answers on this question; the followers are woken (their stages may go on)."""
        self.polls.close(title, step)
        self.store.publish(self.code, FOLLOWING)

    def ask_again(self, title: str, step: int):
        """The question asked anew (every answer dropped); the followers are woken to answer again."""
        self.polls.ask_again(title, step)
        self.store.publish(self.code, FOLLOWING)

    def roster(self) -> list[RosterRow]:
        """Every student named (by name) and every tab open (unnamed tabs last), for the lecturer."""
        asking = self.open_poll()
        by_token = self.store.hgetall(self.keys.by_token)
        tabs: dict[str | None, list[tuple[str, bool, int]]] = {}
        for seat in self.seats.every():
            tabs.setdefault(by_token.get(seat[0]), []).append(seat)
        verdicts: dict[str, dict[str, bool]] = {}
        for s in self.submissions.of():
            verdicts.setdefault(s.key, {})[s.assignment] = s.passed
        rows = [RosterRow(name, len(tabs.get(key, [])), sum(s[1] for s in tabs.get(key, [])),
                          max((s[2] for s in tabs.get(key, [])), default=0),
                          None if asking is None else key in asking.votes, verdicts.get(key, {}))
                for key, name in sorted(self.names.all().items())]  # by name's key: a look-alike beside its likeness
        rows += [RosterRow(None, 1, int(following), frame, None, {}) for _, following, frame in tabs.get(None, [])]
        return rows

    def hand_in(self, token: str, assignment: str, judgement, run: dict[str, str] | None = None) -> Submission:
        """The named student's judged run, with its link's parameters as the server built them from the run judged
        (ClassError: this browser has no name in the class; SubmissionError: too many names); the lecturer is woken
        to see it."""
        key = self.names.key_of(token)
        name = None if key is None else self.names.name(key)
        if name is None:
            raise ClassError("class.name_first")
        submission = self.submissions.submit(name, key, assignment, judgement, run)
        self._wake_lecturer()
        return submission

    def hand_in_code(self, token: str, assignment: str, source: str, class_name: str | None = None,
                     grader=None) -> HandIn:
        """The named student's code on the coding `assignment` (its scheduler the class `class_name`, by default the
        starter's), graded by the server off this call (`grader`: session/coding_grade.py's, by default the
        process's); the lecturer is woken when it is graded. ClassError: no name in the class; CodingError: see
        `Coding.hand_in`."""
        key = self.names.key_of(token)
        name = None if key is None else self.names.name(key)
        if name is None:
            raise ClassError("class.name_first")
        hand = self.coding.hand_in(name, key, assignment, source, class_name)
        if grader is None:
            from session.coding_grade import grader as process_grader  # the sandbox: once a class grades code
            grader = process_grader()
        grader.start(self.coding, hand, self._wake_lecturer)
        return hand

    def opened(self, token: str | None, hand_id: str) -> tuple[HandIn, CodingAssignment]:
        """The hand-in a gradebook's link names, for the lecturer or its author only (CodingError in words for
        anyone else, and for a hand-in replaced since or an assignment removed)."""
        hand = self.coding.handed(hand_id)
        if hand is None:
            raise CodingError("coding.gone")
        if not self.is_lecturer(token) and self.names.key_of(token) != hand.key:
            raise CodingError("coding.not_yours")
        assignment = self.coding.get(hand.assignment)
        if assignment is None:
            raise CodingError("coding.no_assignment", name=hand.assignment)
        return hand, assignment

    def gradebook_csv(self, address: str) -> str:
        """The gradebook, each run's link under the class's `address` (the lecturer's desk's: ui/class_desk.py)."""
        return self.submissions.gradebook(self.code, self.names.all(), address)

    # -- waking: published on the store, each process wakes its own tabs ------------------------------------

    def _wake_lecturer(self):
        self.store.publish(self.code, LECTURER)

    def heard(self, what: str):
        """A wake-up published on the store (by any process): wake this process's tabs it asks for."""
        if what == LEAD:
            self.lectern.changed()
        if what == LECTURER:
            tab = self.lectern.lecturer_tab()
            woken = [tab] if tab else []
        else:  # LEAD, FOLLOWING: the tabs following; BRING_BACK, ENDED: everyone
            woken = self.seats.woken(everyone=what in (BRING_BACK, ENDED), ended=what == ENDED)
        if what == ENDED:
            with self._lock:
                self._ended = True
        if what == BRING_BACK:
            self.seats.refile([session for session, _ in woken])
        gone = [session for session, wake in woken if not wake()]
        if what != LECTURER:
            self.seats.gone(gone, ended=what == ENDED)

    def beat(self):
        """Every few seconds (a lecture hall's store beats): this process's closed tabs leave their seats, and so do
        the seats of a process that stopped answering (the lecturer's counts are woken)."""
        self.seats.sweep()
        if self.seats.drop_the_silent():
            self._wake_lecturer()


class Registry:
    """Every class in the store (this process's memory, or the lecture hall's Redis), by code; this process's side
    of each (its tabs) made the first time the class is looked up here."""

    def __init__(self, max_classes: int = MAX_CLASSES, store: ClassStore | None = None,
                 recipes: Recipes | None = None):
        self.max_classes, self.store, self.recipes = max_classes, store or MemoryStore(), recipes
        self.tokens = Tokens(self.store)  # the browser tokens this server issues (its processes share the store's)
        self._rooms: dict[str, Classroom] = {}
        self._lock = threading.Lock()
        self.store.listen(self._heard)
        self.store.on_beat(self._sweep)
        self.store.on_resume(self._resumed)

    def start(self, lecturer_token: str = "", agent: str = "", identity: str = "") -> Classroom:
        """A new class under a fresh code, led by the browser of `lecturer_token` (`agent`: its browser and system,
        for the desk's devices; entered from the client `identity`: the room), with a secret of its own.
        Beyond max_classes the oldest class whose lecturer's tab has closed is closed; ClassError when every class
        still has its lecturer."""
        started = self.store.hgetall(CLASSES)
        if len(started) >= self.max_classes:
            idle = [code for code in started if (room := self.find(code)) is None or not room.lectern.lecturer_here()]
            if not idle:
                raise ClassError("class.server_full", most=self.max_classes)
            self.close(min(idle, key=lambda code: json.loads(started[code])[0]))
        info = json.dumps([clock(), secrets.token_urlsafe(12)])
        lecturer = (lecturer_token, device_entry(agent, "started"))
        while (code := self.store.atomically((CLASSES,), functools.partial(
                _opened, code=drawn_code(CODE_LENGTH), info=info, lecturer=lecturer))) is None:
            pass
        here = self.get(code)
        if identity:
            here.met(identity)
        return here

    def ended_lately(self, code: str | None) -> bool:
        """Whether `code` is a class's that ended within ENDED_KEPT_S."""
        filed = self.store.hget(ENDED_CLASSES, (code or "").strip().upper()) if code else None
        return filed is not None and clock() - json.loads(filed) < ENDED_KEPT_S

    def find(self, code: str | None) -> Classroom | None:
        code = (code or "").strip().upper()
        self.store.check()
        with self._lock:
            known = self._rooms.get(code)
        if known is not None and known.open_lately():
            return known
        filed = self.store.hget(CLASSES, code) if code else None
        with self._lock:
            if filed is None:
                self._rooms.pop(code, None)
                return None
            if code not in self._rooms:
                self._rooms[code] = Classroom(code, self.store, json.loads(filed)[0], self.recipes)
            return self._rooms[code]

    def get(self, code: str | None) -> Classroom:
        room = self.find(code)
        if room is None:
            raise ClassError("class.unknown")
        return room

    def close(self, code: str):
        """End the class and forget it, in the store (every process)."""
        room = self.find(code)
        if room is None:
            return
        room.end()
        with self._lock:
            self._rooms.pop(code, None)
        room.heard(ENDED)  # this process's tabs: its store's thread may hear the wake-up only once the room is gone

    def _heard(self, code: str, what: str):
        with self._lock:
            room = self._rooms.get(code)
        if room is not None:
            room.heard(what)

    def _resumed(self):
        """The store is heard again (Redis back): what was published meanwhile was not heard, so every tab of this
        process looks again; the lecturer's page publishes where it stands (a step taken while Redis was down)."""
        with self._lock:
            rooms = list(self._rooms.values())
        for room in rooms:
            room.heard(LEAD)
            room.heard(LECTURER)

    def _sweep(self):
        """Every few seconds (a lecture hall's store beats): each class's closed and silent seats leave."""
        with self._lock:
            rooms = list(self._rooms.values())
        for room in rooms:
            room.beat()


def _opened(tx: Tx, code: str, info: str, lecturer: tuple[str, str]) -> str | None:
    """A new class under `code` (None: the code is another class's), led by the browser of `lecturer`: (its
    token, its device's entry)."""
    if (filed := tx.hget(CLASSES, code)) is not None:
        return code if filed == info else None  # this very class (the change sent again) or another
    tx.hset(CLASSES, code, info)
    if lecturer[0]:
        tx.hset(ClassKeys(code).lecturers, *lecturer)
    return code


def concerned(token: str, key: str | None) -> list[tuple[str, str]]:
    """Whom a browser's breaking away concerns: the browser, and the student its name (`key`) is."""
    return [("browser", token), *([("name", key)] if key else [])]


def away_mark(title: str, step: int, who: tuple[str, str]) -> str:
    """The field of `away` saying that `who` (("browser", its token) or ("name", its key)) broke away while the
    question on (`title`, `step`) was open."""
    return json.dumps([poll_id(title, step), *who])


def server_lecturer_key() -> str | None:
    """$SCHEDLAB_LECTURER_KEY, when the server has one: only who gives it may start a class (or pin a run)."""
    return os.environ.get(LECTURER_ENV) or None


_registry: Registry | None = None
_registry_lock = threading.Lock()


def classes() -> Registry:
    """The process's classes, in the store $SCHEDLAB_REDIS_URL names (else in memory), made at first use; in Redis,
    a lead carries its run's recipe (the other processes build the run from it)."""
    global _registry
    with _registry_lock:
        if _registry is None:
            store = store_from_env()
            if isinstance(store, MemoryStore):
                _registry = Registry(store=store)
            else:
                from session.lead_recipe import LeadRecipes  # the run cache and scenarios: not for a bare Registry
                _registry = Registry(store=store, recipes=LeadRecipes())
        return _registry
