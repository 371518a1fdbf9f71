"""A class: a lecturer leads, the students who joined follow (no Streamlit here; ui/classroom.py draws it).

A class is kept under a short code (the key students are given: no accounts) in a store (session/class_store.py):
this process's memory by default, Redis for a lecture hall of several server processes. Every function of a class
is a method here, written once over the store's interface: the class logic does not know which store it has. What
is the process's own stays here: its tabs' seats (how to wake them, whether they are open: filed in the store too,
under the process, for the counts and the roster) and the runs it holds. A wake-up is published on the store
(`Registry` hears it, in every process) and each process wakes its own tabs.

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
import json
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from i18n import MessageError
from session.class_store import ClassStore, MemoryStore, store_from_env
from session.names import name_key, shown_name
from session.submissions import Submission, Submissions, csv_text

LECTURER_ENV = "SCHEDLAB_LECTURER_KEY"
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O or 1/I: a code is read off a projector
CODE_LENGTH = 5
PERSONAL_CODE_LENGTH = 8  # a roster name's code: a student types it, a script cannot guess it under the limits
MAX_CLASSES = 50  # classes whose lecturer has gone are closed beyond it, the oldest first: bounded memory
MAX_SEATS = 500  # open tabs per class
MAX_NAMES = 500  # students named per class
LEAD_KEPT_S = 2.0  # the longest a process keeps the lead it read without looking again
# The longest a process keeps what it read of a class's standing (whether it is still open, whether a browser is
# not a lecturer's) without looking again: a page run asks it many times over, once per tab each is enough.
FACTS_KEPT_S = 1.0
# What a wake-up published on the store asks of each process: whom of its tabs to wake.
LEAD, FOLLOWING, LECTURER, BRING_BACK, ENDED = "lead", "following", "lecturer", "bring_back", "ended"

clock = time.time  # the wall clock (every process of a lecture hall reads the same one); a test sets it
Wake = Callable[[], bool]  # reruns a session's stage; False when the session has gone
Alive = Callable[[], bool]  # whether the session's tab is still open (cheap: no rerun)


def play_ahead(speed: float) -> int:
    """The frames a follower playing along is sent ahead of the lecturer's, when the run holds them: as many as
    its player asks for ahead while playing (player.js `lookahead`), so Play starts without a round trip."""
    return max(10, int(3 * speed)) if speed else 0


class Recipes:
    """How a lead's run travels between processes: `of` gives a run's recipe as plain data, `run` builds (or finds)
    a run from one, as (run, inputs); None where it cannot. The default knows none: one process holds its runs."""

    def of(self, run, inputs) -> dict | None:
        return None

    def run(self, recipe: dict) -> tuple[Any, Any] | None:
        return None

    def reach(self, run, frame: int):
        """Compute a run built from a recipe as far as `frame`."""


@dataclass(frozen=True)
class Lead:
    """What the lecturer shows: `run` (a session.run_cache.SharedRun, found in this process or built from
    `recipe`; None while it cannot be), its `inputs`, the `frame`, the scenario picked in the sidebar, whether
    predict-then-reveal is on, and `playing`: the speed (steps per second) the lecturer's player plays at from
    `frame` since `at` (`clock`, the wall clock: every process reads the same one), 0 while it stands still; `version`
    numbers the leads of a class; `address` names the run in every process."""
    run: Any
    inputs: Any
    frame: int
    scenario: str
    predicting: bool = False
    playing: float = 0.0
    version: int = 0
    at: float = field(default_factory=lambda: clock())  # read when made
    address: str = ""

    def place(self) -> tuple:
        return self.address, self.frame, self.scenario, self.predicting, self.playing

    def frame_now(self, last: int) -> int:
        """The frame the lecturer's player shows now (it plays on by itself from `frame`), at most `last`: a
        follower woken late starts playing there, not where the lecturer started."""
        return min(last, self.frame + int((clock() - self.at) * self.playing))


@dataclass
class Poll:
    """One question put to the class: its words in the lecturer's language, each student's choice (an index, by
    their name's key); `closed` by the lecturer (no more answers, the counts kept) or `revealed`. A copy of the
    poll as the store held it when read."""
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
    def __init__(self, code: str, store: ClassStore, secret: str, started: float, recipes: Recipes | None = None):
        self.code, self._secret, self.started = code, secret, started
        self.store, self._recipes = store, recipes or Recipes()
        self._key = f"class:{code}:"
        self._seats: dict[str, Seat] = {}  # this process's tabs, by session id
        self._lecturer: tuple[str, Wake, Alive] | None = None  # the lecturer's tab, when on this process
        self._runs: dict[str, tuple[Any, Any]] = {}  # address -> (run, inputs): the lead's run this process holds
        self._built: set[str] = set()  # of those, built here from the lead's recipe (another process's run)
        # The lead as last read from the store, kept until a lead change is heard (or LEAD_KEPT_S): every tab of the
        # process reads it several times a page run; (generation read at, when read, the lead's filed data).
        self._lead_read: tuple[int, float, dict] | None = None
        self._lead_generation = 0  # counts the lead changes heard
        self._ended: bool | float | None = None  # True: over; a time.monotonic(): open when read then (FACTS_KEPT_S)
        self._lecturers: dict[str, bool | float] = {}  # token -> True (a lecturer's), or when read as not
        self.submissions = Submissions(store, self._key + "submissions")  # handed in (session/submissions.py)
        self._lock = threading.Lock()

    @property
    def ended(self) -> bool:
        """Whether the class is over (read again at most every FACTS_KEPT_S; over is for good)."""
        self.store.check()
        with self._lock:
            if self._ended is True or (self._ended is not None and time.monotonic() - self._ended < FACTS_KEPT_S):
                return self._ended is True
        over = self.store.hget("classes", self.code) is None or self.store.hget(self._key + "meta", "ended") == "1"
        with self._lock:
            self._ended = True if over else time.monotonic()
        return over

    def open_lately(self) -> bool:
        """Whether the class was read as open less than FACTS_KEPT_S ago."""
        with self._lock:
            return self._ended not in (None, True) and time.monotonic() - self._ended < FACTS_KEPT_S

    # -- the lecturer ----------------------------------------------------------------------------------

    @property
    def secret(self) -> str:
        """The class's own lecturer secret (shown to the lecturer only, for another device)."""
        return self._secret

    def is_lecturer(self, token: str | None) -> bool:
        """Whether this browser is a lecturer's (for good once it is; not, read again after FACTS_KEPT_S)."""
        if not token:
            return False
        self.store.check()
        with self._lock:
            known = self._lecturers.get(token)
        if known is True or (known is not None and time.monotonic() - known < FACTS_KEPT_S):
            return known is True
        lecturer = self.store.hget(self._key + "lecturers", token) is not None
        with self._lock:
            self._lecturers[token] = True if lecturer else time.monotonic()
            if len(self._lecturers) > MAX_SEATS:  # bounded: the oldest answers go
                self._lecturers.pop(next(iter(self._lecturers)))
        return lecturer

    def take_lectern(self, token: str, given_secret: str | None) -> bool:
        """A browser that gives the class's secret becomes a lecturer's too; whether the secret was right."""
        if not given_secret or not hmac.compare_digest(given_secret.encode(), self._secret.encode()):
            return False
        self.store.hset(self._key + "lecturers", token, "1")
        with self._lock:
            self._lecturers[token] = True
        return True

    def lecture(self, session: str, wake: Wake, alive: Alive = lambda: True):
        """The lecturer's session (woken when the class answers a poll, a seat is taken or hands in)."""
        with self._lock:
            self._lecturer = (session, wake, alive)
        self.store.set(self._key + "lectern", json.dumps([self.store.process, session]))

    def lecturer_here(self) -> bool:
        """Whether a lecturer's tab is open (on this process, or on another that is still up)."""
        lectern = self.store.get(self._key + "lectern")
        if lectern is None:
            return False
        process, _ = json.loads(lectern)
        if process != self.store.process:
            return self.store.is_up(process)
        lecturer = self._lecturer
        return lecturer is not None and lecturer[2]()

    @property
    def lead(self) -> Lead | None:
        """What the lecturer shows now, its run found in this process or built from its recipe."""
        data = self._lead_data()
        if data is None:
            return None
        run, inputs, built = self._run_of(data["address"], data.get("recipe"))
        lead = Lead(run, inputs, data["frame"], data["scenario"], data["predicting"], data["playing"],
                    data["version"], data["at"], data["address"])
        if built:  # computed here as far as the lecturer's process has it, and the frames a follower plays ahead
            self._recipes.reach(run, lead.frame_now(10**9) + play_ahead(lead.playing))
        return lead

    def _lead_data(self) -> dict | None:
        """The lead as filed, read from the store once per lead change heard by this process (and at least every
        LEAD_KEPT_S, should a wake-up be missed), not once per tab."""
        self.store.check()
        with self._lock:
            generation, read = self._lead_generation, self._lead_read
        if read is not None and read[0] == generation and time.monotonic() - read[1] < LEAD_KEPT_S:
            return read[2]
        filed = self.store.get(self._key + "lead")
        data = None if filed is None else json.loads(filed)
        with self._lock:
            if self._lead_generation == generation:  # no change heard meanwhile: what was read is still the lead
                self._lead_read = (generation, time.monotonic(), data)
        return data

    def _lead_changed(self):
        with self._lock:
            self._lead_generation += 1
            self._lead_read = None

    def _run_of(self, address: str, recipe: dict | None) -> tuple[Any, Any, bool]:
        """(run, inputs, whether built here from the recipe) of the lead's run; (None, None, False) while no run."""
        with self._lock:
            held, built = self._runs.get(address), address in self._built
        if held is None and recipe is not None and (held := self._recipes.run(recipe)) is not None:
            built = True
            with self._lock:  # the lead's run only: an older one is not held for the class
                self._runs, self._built = {address: held}, {address}
        return (*(held or (None, None)), built and held is not None)

    def publish(self, run, inputs, frame: int, scenario: str, predicting: bool, playing: float = 0.0) -> bool:
        """The lecturer shows this (`playing`: plays on from `frame` at that speed): when it is new, every seat
        following is woken, on every process. Whether it was new."""
        address = run.address
        with self._lock:
            self._runs, self._built = {address: (run, inputs)}, set()
        now, place = self.lead, (address, frame, scenario, predicting, playing)
        if now is not None and now.place() == place:
            return False
        version = self.store.incr(self._key + "version")
        self.store.set(self._key + "lead", json.dumps({
            "address": address, "frame": frame, "scenario": scenario, "predicting": predicting, "playing": playing,
            "version": version, "at": clock(), "recipe": self._recipes.of(run, inputs)}))
        self._lead_changed()  # this process reads the new lead at once (its own wake-up may come later)
        self.store.publish(self.code, LEAD)
        return True

    def bring_back(self):
        """Every student follows the lecturer again, and is woken to the lecturer's place (on every process)."""
        self.store.publish(self.code, BRING_BACK)

    def end(self):
        """The class is over: every seat is woken to leave it (the registry forgets it: Registry.close)."""
        self.store.hset(self._key + "meta", "ended", "1")
        with self._lock:
            self._ended = True
        self.store.publish(self.code, ENDED)

    # -- names -----------------------------------------------------------------------------------------

    def _name(self, key: str) -> tuple[str, str] | None:
        """(name as shown, the token it is bound to: "" for a roster name not opened yet)."""
        filed = self.store.hget(self._key + "names", key)
        return None if filed is None else tuple(json.loads(filed))

    def claim(self, token: str, raw_name) -> str:
        """Bind a name to this browser (its token) for the class; the name as shown. ClassError: no usable
        name, one that reads as a name another browser holds, a second name for this browser, a roster class
        (names come with personal codes), or a class with MAX_NAMES names."""
        name = shown_name(raw_name)
        if name is None:
            raise ClassError("class.bad_name")
        key = name_key(name)
        if (mine := self.store.hget(self._key + "by_token", token)) is not None:
            if mine == key:
                return self._name(key)[0]
            raise ClassError("class.named_already", name=self._name(mine)[0])
        if self.store.hgetall(self._key + "codes"):
            raise ClassError("class.roster_only")
        if len(self.store.hgetall(self._key + "names")) >= MAX_NAMES:
            raise ClassError("class.too_many_names", most=MAX_NAMES)
        if not self.store.hsetnx(self._key + "names", key, json.dumps([name, token])):  # first browser wins
            taken = self._name(key)
            if taken[1] != token:
                raise ClassError("class.name_taken", name=taken[0])
        if not self.store.hsetnx(self._key + "by_token", token, key):  # this browser named itself meanwhile
            self.store.hdel(self._key + "names", key)
            return self.claim(token, raw_name)
        self._wake_lecturer()
        return name

    def set_roster(self, raw_names: list[str]) -> dict[str, str]:
        """The lecturer's list of the class's students: each new name gets a personal code (names a reader cannot
        tell apart are one); from then on a student is named only by opening their code. {name: code}, every
        roster name's."""
        given = set(self.store.hgetall(self._key + "codes").values())
        for raw in raw_names[:MAX_NAMES]:
            name = shown_name(raw)
            if name is None or (key := name_key(name)) in given:
                continue
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(PERSONAL_CODE_LENGTH))
            self.store.hset(self._key + "codes", code, key)
            self.store.hsetnx(self._key + "names", key, json.dumps([name, ""]))
            given.add(key)
        return self.roster_codes()

    def roster_codes(self) -> dict[str, str]:
        names = self.names()
        return {names[key]: code for code, key in self.store.hgetall(self._key + "codes").items()}

    def claim_code(self, token: str, code: str) -> str | None:
        """A student opens their personal code: their roster name is bound to this browser (the first browser to
        open it keeps it). The name, or None for a code that is no roster name's."""
        key = self.store.hget(self._key + "codes", (code or "").strip().upper())
        if key is None:
            return None
        name, holder = self._name(key)
        if holder and holder != token:
            raise ClassError("class.name_taken", name=name)
        if (mine := self.store.hget(self._key + "by_token", token)) not in (None, key):
            raise ClassError("class.named_already", name=self._name(mine)[0])
        if not self.store.hsetnx(self._key + "by_token", token, key) and \
                self.store.hget(self._key + "by_token", token) != key:
            raise ClassError("class.named_already", name=name)
        self.store.hset(self._key + "names", key, json.dumps([name, token]))
        self._wake_lecturer()
        return name

    def name_of(self, token: str | None) -> str | None:
        """The name this browser goes by in the class, if any."""
        key = self._key_of(token)
        return None if key is None else self._name(key)[0]

    def _key_of(self, token: str | None) -> str | None:
        return self.store.hget(self._key + "by_token", token) if token else None

    def names(self) -> dict[str, str]:
        """Every student's name, by key (named, or on the roster)."""
        return {key: json.loads(filed)[0] for key, filed in self.store.hgetall(self._key + "names").items()}

    # -- the students' tabs ----------------------------------------------------------------------------

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
        if before is None and self.seats()[0] >= MAX_SEATS:
            raise ClassError("class.full", seats=MAX_SEATS)
        with self._lock:
            self._seats[session] = seat
        if seat.filed() != before:
            self._file(session, seat)
        if before is None:
            self._wake_lecturer()

    def _file(self, session: str, seat: Seat | None):
        """This process's seat as the store keeps it (None: gone)."""
        seats = f"{self._key}seats:{self.store.process}"
        if seat is None:
            self.store.hdel(seats, session)
        else:
            self.store.hset(self._key + "processes", self.store.process, "1")
            self.store.hset(seats, session, seat.filed())

    def set_following(self, session: str, on: bool):
        """A student breaks away (their vote on an open question closes) or follows again."""
        with self._lock:
            seat = self._seats.get(session)
            if seat is not None:
                seat.following = on
        if seat is not None:
            self._file(session, seat)
        self._wake_lecturer()

    def is_following(self, session: str) -> bool:
        """Whether this tab follows the lecturer (a tab not seated yet will, when it sits)."""
        with self._lock:
            seat = self._seats.get(session)
            return seat is None or seat.following

    def seats(self) -> tuple[int, int]:
        """(tabs open, of which following), on every process, once closed tabs have left."""
        every = self._every_seat()
        return len(every), sum(1 for _, following, _ in every if following)

    def _every_seat(self) -> list[tuple[str, bool, int]]:
        """(token, following, frame) of every tab open in the class, on every process that is up (the seats of a
        process that has gone leave with it)."""
        self.sweep()
        every = []
        for process in self.store.hgetall(self._key + "processes"):
            seats = f"{self._key}seats:{process}"
            if self.store.is_up(process):
                every += [tuple(json.loads(filed)) for filed in self.store.hgetall(seats).values()]
            else:
                self.store.hdel(self._key + "processes", process)
                self.store.delete(seats)
        return every

    def tabs_by_process(self) -> dict[str, int]:
        """Tabs open in the class on each server process that has any (by the store's name of the process)."""
        return {process: len(self.store.hgetall(f"{self._key}seats:{process}"))
                for process in self.store.hgetall(self._key + "processes") if self.store.is_up(process)}

    def leave(self, session: str):
        with self._lock:
            self._seats.pop(session, None)
        self._file(session, None)
        self._wake_lecturer()

    def sweep(self) -> int:
        """Seats of this process whose tab has closed leave; how many left."""
        with self._lock:
            gone = [session for session, seat in self._seats.items() if not seat.alive()]
            for session in gone:
                del self._seats[session]
        for session in gone:
            self._file(session, None)
        return len(gone)

    def roster(self) -> list[RosterRow]:
        """Every student named and every tab open (unnamed tabs last), for the lecturer."""
        asking = self.open_poll()
        by_token = self.store.hgetall(self._key + "by_token")
        tabs: dict[str | None, list[tuple[str, bool, int]]] = {}
        for seat in self._every_seat():
            tabs.setdefault(by_token.get(seat[0]), []).append(seat)
        verdicts: dict[str, dict[str, bool]] = {}
        for s in self.submissions.of():
            verdicts.setdefault(s.key, {})[s.assignment] = s.passed
        rows = [RosterRow(name, len(tabs.get(key, [])), sum(s[1] for s in tabs.get(key, [])),
                          max((s[2] for s in tabs.get(key, [])), default=0),
                          None if asking is None else key in asking.votes, verdicts.get(key, {}))
                for key, name in sorted(self.names().items())]
        rows += [RosterRow(None, 1, int(following), frame, None, {}) for _, following, frame in tabs.get(None, [])]
        return rows

    # -- predictions -----------------------------------------------------------------------------------

    @staticmethod
    def _poll_id(title: str, step: int) -> str:
        return json.dumps([title, step])

    def poll(self, title: str, step: int, question: str, choices: tuple[str, ...], answer: int) -> Poll:
        """The poll on this question, opened the first time the lecturer or a student is asked it."""
        self.store.hsetnx(self._key + "polls", self._poll_id(title, step), json.dumps(
            {"question": question, "choices": list(choices), "answer": answer, "revealed": False, "closed": False}))
        return self.poll_at(title, step)

    def poll_at(self, title: str, step: int) -> Poll | None:
        """The poll on this question as it stands, with its votes; None when it was never asked."""
        poll_id = self._poll_id(title, step)
        filed = self.store.hget(self._key + "polls", poll_id)
        return None if filed is None else self._poll(poll_id, filed)

    def _poll(self, poll_id: str, filed: str) -> Poll:
        (title, step), data = json.loads(poll_id), json.loads(filed)
        votes = {key: int(choice) for key, choice in self.store.hgetall(f"{self._key}votes:{poll_id}").items()}
        return Poll(title, step, data["question"], tuple(data["choices"]), data["answer"], votes, data["revealed"],
                    data["closed"])

    def polls(self) -> list[Poll]:
        return [self._poll(poll_id, filed) for poll_id, filed in self.store.hgetall(self._key + "polls").items()]

    def _set_poll(self, poll: Poll, **changes):
        data = {"question": poll.question, "choices": list(poll.choices), "answer": poll.answer,
                "revealed": poll.revealed, "closed": poll.closed, **changes}
        self.store.hset(self._key + "polls", self._poll_id(poll.title, poll.step), json.dumps(data))

    def open_poll(self, title: str | None = None) -> Poll | None:
        """The question the class is asked now: an open poll on a frame past the lecturer's (on `title`'s run)."""
        lead = self.lead
        if lead is None or not lead.predicting:
            return None
        asked = [p for p in self.polls() if p.open and p.step > lead.frame and title in (None, p.title)]
        return min(asked, key=lambda p: p.step, default=None)

    def bound(self, title: str) -> int | None:
        """The furthest frame a follower's stage may show: the lecturer's, while a question about a frame ahead is
        open (the answer is in the frames after it); None otherwise."""
        return None if self.open_poll(title) is None else self.lead.frame

    def vote(self, session: str, title: str, step: int, choice: int) -> bool:
        """A following student's answer (their last before the reveal counts, one per name whatever the tabs);
        the lecturer is woken to see the count. Whether it counted."""
        with self._lock:
            seat = self._seats.get(session)
        poll = self.poll_at(title, step)
        key = None if seat is None else self._key_of(seat.token)
        if poll is None or not poll.open or key is None or not seat.following or not 0 <= choice < len(poll.choices):
            return False
        self.store.hset(f"{self._key}votes:{self._poll_id(title, step)}", key, str(choice))
        self._wake_lecturer()
        return True

    def vote_of(self, token: str | None, poll: Poll) -> int | None:
        """This browser's student's answer on `poll`."""
        key = self._key_of(token)
        choice = None if key is None else self.store.hget(
            f"{self._key}votes:{self._poll_id(poll.title, poll.step)}", key)
        return None if choice is None else int(choice)

    def reveal(self, title: str, step: int) -> bool:
        """The answer for everyone (the counts stay): the lecturer then goes to the step, and the class follows."""
        poll = self.poll_at(title, step)
        if poll is None or poll.revealed:
            return False
        self._set_poll(poll, revealed=True)
        return True

    def close_poll(self, title: str, step: int):
        """No more answers on this question (the counts stay; not revealed)."""
        if (poll := self.poll_at(title, step)) is not None:
            self._set_poll(poll, closed=True)
        self.store.publish(self.code, FOLLOWING)

    def ask_again(self, title: str, step: int):
        """The question asked anew: every answer dropped, open again (and not revealed)."""
        if (poll := self.poll_at(title, step)) is not None:
            self.store.delete(f"{self._key}votes:{self._poll_id(title, step)}")
            self._set_poll(poll, closed=False, revealed=False)
        self.store.publish(self.code, FOLLOWING)

    def tallies_csv(self) -> str:
        """One row per choice of every poll: what was asked, the choice, how many chose it, whether it was right;
        with a byte-order mark (Excel reads it as UTF-8)."""
        return csv_text(["class", "run", "step", "question", "choice", "count", "answered", "right", "revealed"],
                        [[self.code, poll.title, poll.step, poll.question, choice, n, len(poll.votes),
                          int(i == poll.answer), int(poll.revealed)]
                         for poll in self.polls() for i, (choice, n) in enumerate(zip(poll.choices, poll.counts(),
                                                                                      strict=True))])

    # -- assignments -----------------------------------------------------------------------------------

    def hand_in(self, token: str, assignment: str, judgement, link: str = "") -> Submission:
        """The named student's judged run (ClassError: this browser has no name in the class; SubmissionError: too
        many names); the lecturer is woken to see it."""
        key = self._key_of(token)
        if key is None:
            raise ClassError("class.name_first")
        submission = self.submissions.submit(self._name(key)[0], key, assignment, judgement, link)
        self._wake_lecturer()
        return submission

    def gradebook_csv(self) -> str:
        return self.submissions.gradebook(self.code, self.names())

    # -- waking: published on the store, each process wakes its own tabs ------------------------------------

    def _wake_lecturer(self):
        self.store.publish(self.code, LECTURER)

    def heard(self, what: str):
        """A wake-up published on the store (by any process): wake this process's tabs it asks for."""
        if what == LEAD:
            self._lead_changed()
        with self._lock:
            if what == LECTURER:
                woken = [self._lecturer[:2]] if self._lecturer else []
            elif what in (LEAD, FOLLOWING):
                woken = [(session, seat.wake) for session, seat in self._seats.items() if seat.following]
            else:  # BRING_BACK, ENDED: everyone
                for seat in self._seats.values():
                    seat.following = True
                woken = [(session, seat.wake) for session, seat in self._seats.items()]
                if what == ENDED:
                    self._seats.clear()
                    self._ended = True
        if what == BRING_BACK:
            for session, _ in woken:
                self._file(session, self._seats.get(session))
        gone = [session for session, wake in woken if not wake()]
        with self._lock:
            for session in gone:
                self._seats.pop(session, None)
        for session in gone:
            if what != ENDED:
                self._file(session, None)


class Registry:
    """Every class in the store (this process's memory, or the lecture hall's Redis), by code; this process's side
    of each (its tabs) made the first time the class is looked up here."""

    def __init__(self, max_classes: int = MAX_CLASSES, store: ClassStore | None = None,
                 recipes: Recipes | None = None):
        self.max_classes, self.store, self.recipes = max_classes, store or MemoryStore(), recipes
        self._rooms: dict[str, Classroom] = {}
        self._lock = threading.Lock()
        self.store.listen(self._heard)
        self.store.on_beat(self._sweep)
        self.store.on_resume(self._resumed)

    def start(self, lecturer_token: str = "") -> Classroom:
        """A new class under a fresh code, led by the browser of `lecturer_token`, with a secret of its own.
        Beyond max_classes the oldest class whose lecturer's tab has closed is closed; ClassError when every class
        still has its lecturer."""
        started = self.store.hgetall("classes")
        if len(started) >= self.max_classes:
            idle = [code for code in started if (room := self.find(code)) is None or not room.lecturer_here()]
            if not idle:
                raise ClassError("class.server_full", most=self.max_classes)
            self.close(min(idle, key=lambda code: json.loads(started[code])[0]))
        info = [clock(), secrets.token_urlsafe(12)]
        while not self.store.hsetnx("classes", code := "".join(secrets.choice(CODE_ALPHABET)
                                                               for _ in range(CODE_LENGTH)), json.dumps(info)):
            pass
        if lecturer_token:
            self.store.hset(f"class:{code}:lecturers", lecturer_token, "1")
        return self.get(code)

    def find(self, code: str | None) -> Classroom | None:
        code = (code or "").strip().upper()
        self.store.check()
        with self._lock:
            known = self._rooms.get(code)
        if known is not None and known.open_lately():
            return known
        filed = self.store.hget("classes", code) if code else None
        with self._lock:
            if filed is None:
                self._rooms.pop(code, None)
                return None
            if code not in self._rooms:
                started, secret = json.loads(filed)
                self._rooms[code] = Classroom(code, self.store, secret, started, self.recipes)
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
        self.store.hdel("classes", code)
        self.store.delete_prefix(f"class:{code}:")
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
        """Every few seconds (a lecture hall's store beats): this process's closed tabs leave their seats."""
        with self._lock:
            rooms = list(self._rooms.values())
        for room in rooms:
            room.sweep()


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
