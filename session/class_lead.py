"""The lecturer of a class and what they show (no Streamlit).

The lecturer: the browser that started the class (its token), or one that gives the class's own secret (drawn for
each class; never the server's $SCHEDLAB_LECTURER_KEY, which only starts classes and pins runs). Each such browser
is a `Device` on the lecturer's desk: a lecturer revokes one, or rotates the secret (every other device loses its
rights, and this one is given a new token: a copy of its old one is worth nothing; students keep seats and names).
What the lecturer shows is a `Lead`: the shared run (session/run_cache.py: a follower holds the very run, nothing is
recomputed), the frame, the scenario picked and whether the lecturer's player is playing (followers then play
along); each new one gets the next version, and every seat following is woken. A lecturer's reload finds the lead
where it was and takes it up (the class does not move). In a lecture hall a lead carries its run's recipe
(`Recipes`): the other processes build the run from it.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from session.class_error import is_open
from session.class_keys import CLASSES, LEAD, ClassKeys
from session.class_store import ClassStore, Tx
from session.tokens import device_id

LEAD_KEPT_S = 2.0  # the longest a process keeps the lead it read without looking again
# The longest a process keeps what it read of whether a browser is a lecturer's without looking again: a page run
# asks it many times over, once per tab each is enough; a device revoked loses its rights within it.
FACTS_KEPT_S = 1.0
MAX_KEPT = 500  # browsers whose answer is kept

clock = time.time  # the wall clock (every process of a lecture hall reads the same one); a test sets it


def play_ahead(speed: float) -> int:
    """The frames a follower playing along is sent ahead of the lecturer's, when the run holds them: as many as
    its player asks for ahead while playing (player.js `lookahead`), so Play starts without a round trip."""
    return max(10, int(3 * speed)) if speed else 0


@dataclass(frozen=True)
class Device:
    """A browser with the lecturer's rights, as the desk lists it: `id` (session/tokens.py `device_id`: the page
    never holds a token), `agent` (its browser and system as it said when it got them), `since` (`clock`), `how`
    it got them ("started", "secret", "rotated")."""
    id: str
    agent: str
    since: float
    how: str


def device_entry(agent: str, how: str) -> str:
    """What the class's lecturers hash files for a device getting the rights now."""
    return json.dumps({"agent": agent[:80], "since": clock(), "how": how})


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


class Lectern:
    """Who leads a class, their tab on this process, and the lead (read from the store once per change heard)."""

    def __init__(self, store: ClassStore, keys: ClassKeys, recipes: Recipes):
        self.store, self.keys, self._recipes = store, keys, recipes
        self._lecturer: tuple[str, Any, Any] | None = None  # (session, wake, alive) of the lecturer's tab here
        self._lecturers: dict[str, tuple[bool, float]] = {}  # token -> (whether a lecturer's, when read)
        self._runs: dict[str, tuple[Any, Any]] = {}  # address -> (run, inputs): the lead's run this process holds
        self._built: set[str] = set()  # of those, built here from the lead's recipe (another process's run)
        # The lead as last read from the store, kept until a lead change is heard (or LEAD_KEPT_S): every tab of the
        # process reads it several times a page run; (generation read at, when read, the lead's filed data).
        self._lead_read: tuple[int, float, dict | None] | None = None
        self._generation = 0  # counts the lead changes heard
        self._lock = threading.Lock()

    @property
    def secret(self) -> str:
        """The class's secret as filed now (a lecturer may rotate it, on any process); "" once the class is over."""
        filed = self.store.hget(CLASSES, self.keys.code)
        return "" if filed is None else json.loads(filed)[1]

    def is_lecturer(self, token: str | None, fresh: bool = False) -> bool:
        """Whether this browser is a lecturer's: read again after FACTS_KEPT_S (a device revoked loses its rights
        within that), or now when `fresh` (ending the class)."""
        if not token:
            return False
        self.store.check()
        with self._lock:
            known = self._lecturers.get(token)
        if not fresh and known is not None and time.monotonic() - known[1] < FACTS_KEPT_S:
            return known[0]
        lecturer = self.store.hget(self.keys.lecturers, token) is not None
        with self._lock:
            self._lecturers[token] = (lecturer, time.monotonic())
            if len(self._lecturers) > MAX_KEPT:  # bounded: the oldest answers go
                self._lecturers.pop(next(iter(self._lecturers)))
        return lecturer

    def take_lectern(self, token: str, given_secret: str | None, agent: str = "") -> bool:
        """A browser that gives the class's secret becomes a lecturer's too; whether the secret was right."""
        secret = self.secret
        if not given_secret or not secret or not hmac.compare_digest(given_secret.encode(), secret.encode()):
            return False
        self.store.hset(self.keys.lecturers, token, device_entry(agent, "secret"))
        self._forget()
        return True

    def devices(self) -> dict[str, Device]:
        """Every browser with the lecturer's rights, by device id, oldest first."""
        devices = []
        for token, filed in self.store.hgetall(self.keys.lecturers).items():
            entry = json.loads(filed) if filed.startswith("{") else {}
            devices.append(Device(device_id(token), entry.get("agent", ""), entry.get("since", 0.0),
                                  entry.get("how", "started")))
        return {device.id: device for device in sorted(devices, key=lambda d: d.since)}

    def revoke(self, by: str, device: str) -> bool:
        """The lecturer of `by` (a token) takes the rights of another device away; whether it had them."""
        k = self.keys

        def change(tx: Tx) -> bool:
            lecturers = tx.hgetall(k.lecturers)
            if by not in lecturers:
                return False
            gone = [token for token in lecturers if device_id(token) == device and token != by]
            for token in gone:
                tx.hdel(k.lecturers, token)
            return bool(gone)
        revoked = self.store.atomically((CLASSES, k.lecturers), change)
        self._forget()
        return revoked

    def rotate(self, by: str, new_token: str, agent: str = "") -> str | None:
        """The lecturer of `by` draws a new secret for the class: every device loses the lecturer's rights, and
        this browser keeps them under `new_token` (its old token, should it have been copied, is worth nothing).
        The new secret; None when `by` is no lecturer's (or the class is over)."""
        k, secret = self.keys, secrets.token_urlsafe(12)

        def change(tx: Tx) -> str | None:
            filed = tx.hget(CLASSES, k.code)
            if filed is None or tx.hget(k.lecturers, by) is None:
                return None
            tx.hset(CLASSES, k.code, json.dumps([json.loads(filed)[0], secret]))
            tx.delete(k.lecturers)
            tx.hset(k.lecturers, new_token, device_entry(agent, "rotated"))
            return secret
        rotated = self.store.atomically((CLASSES, k.lecturers), change)
        self._forget()
        return rotated

    def _forget(self):
        """What this process kept of who is a lecturer's is read again (the other processes: within
        FACTS_KEPT_S)."""
        with self._lock:
            self._lecturers.clear()

    def lecture(self, session: str, wake, alive=lambda: True):
        """The lecturer's session (woken when the class answers a poll, a seat is taken or hands in)."""
        with self._lock:
            self._lecturer = (session, wake, alive)
        self.store.set(self.keys.lectern, json.dumps([self.store.process, session]))

    def lecturer_tab(self) -> tuple[str, Any] | None:
        """(session, wake) of the lecturer's tab on this process, if it is here."""
        with self._lock:
            return None if self._lecturer is None else self._lecturer[:2]

    def lecturer_here(self) -> bool:
        """Whether a lecturer's tab is open (on this process, or on another that is still up)."""
        lectern = self.store.get(self.keys.lectern)
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
            generation, read = self._generation, self._lead_read
        if read is not None and read[0] == generation and time.monotonic() - read[1] < LEAD_KEPT_S:
            return read[2]
        filed = self.store.get(self.keys.lead)
        data = None if filed is None else json.loads(filed)
        with self._lock:
            if self._generation == generation:  # no change heard meanwhile: what was read is still the lead
                self._lead_read = (generation, time.monotonic(), data)
        return data

    def changed(self):
        """A lead change was heard: the next look reads the store."""
        with self._lock:
            self._generation += 1
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
        lead = {"address": address, "frame": frame, "scenario": scenario, "predicting": predicting,
                "playing": playing, "at": clock(), "recipe": self._recipes.of(run, inputs)}
        k = self.keys

        def change(tx: Tx) -> bool:
            if not is_open(tx, k):  # ended meanwhile: nothing to lead
                return False
            version = int(tx.get(k.version) or 0) + 1
            tx.set(k.version, str(version))
            tx.set(k.lead, json.dumps({**lead, "version": version}))
            return True
        if not self.store.atomically((CLASSES, k.version), change):
            return False
        self.changed()  # this process reads the new lead at once (its own wake-up may come later)
        self.store.publish(k.code, LEAD)
        return True
