"""A class's coding assignments (no Streamlit): the lecturer sets one (a starter, the workloads, the goals), each
student hands in the code of a scheduler of their own under the name the class knows them by, and the server
grades it (session/coding_grade.py). Everything is kept in the class's store (session/class_keys.py), each change
one atomic change of it:
- `coding`: the assignments by name (at most MAX_ASSIGNMENTS);
- `handed`: the code handed in, by a hand-in id the server draws: each student's graded one (the one the gradebook's
  link opens) and the one being graded, no more (MAX_SOURCE_BYTES each);
- `grading`: per student, the hand-in being graded: at most one at a time, whatever their tabs and the server
  processes (a mark older than GRADING_STALE_S is a process that stopped mid-grading, and counts no more).
A graded hand-in is filed as any assignment's submission (session/submissions.py): one verdict per goal and
workload, the latest counting, the link to it built by the server. Nothing a student's browser says is a verdict:
it sends code, the server grades it.
"""

from __future__ import annotations

import json
import secrets
import time
import unicodedata
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode

from engine.inputs.assignment import MAX_GOALS, Goal
from engine.inputs.goals import GOALS, PASS, Verdict
from i18n import Message
from session.class_error import ClassError, class_open
from session.class_keys import CLASSES, ClassKeys
from session.class_store import ClassStore, Tx
from session.submissions import Submission, Submissions, message_data, message_from

MAX_ASSIGNMENTS = 20  # coding assignments a class holds
MAX_WORKLOADS = 4  # workloads one assignment grades on (each a sandboxed run per hand-in)
MAX_SOURCE_BYTES = 64 * 1024  # a hand-in's code, UTF-8
MAX_TITLE = 60  # characters of an assignment's name
MAX_CLASS_NAME = 100  # characters of the class a hand-in names
GRADING_STALE_S = 600.0  # a grading mark this old is a process that stopped mid-grading
SUBMISSION_PARAM = "submission"  # the link's parameter naming a hand-in

clock = time.time  # every process of a lecture hall reads the same clock; a test sets it


class CodingError(ClassError):
    """A coding assignment or a hand-in refused, with the reason in words (a message id under "coding.")."""


@dataclass(frozen=True)
class CodingAssignment:
    """What the lecturer set: the starter students begin from (a starter's id, and the class their code names),
    the workloads (scenario presets' names) and the goals each workload's run must meet."""
    name: str
    starter: str
    class_name: str
    workloads: tuple[str, ...]
    goals: tuple[Goal, ...]

    def filed(self) -> str:
        return json.dumps({"name": self.name, "starter": self.starter, "class_name": self.class_name,
                           "workloads": list(self.workloads),
                           "goals": [[g.kind, [list(p) for p in g.params]] for g in self.goals]}, ensure_ascii=False)

    @classmethod
    def read(cls, filed: str) -> CodingAssignment:
        d = json.loads(filed)
        return cls(d["name"], d["starter"], d["class_name"], tuple(d["workloads"]),
                   tuple(Goal(kind, tuple((name, value) for name, value in params)) for kind, params in d["goals"]))


def checked(name: str, starter: str, class_name: str, workloads, goals) -> CodingAssignment:
    """An assignment as the lecturer typed it, or CodingError saying what to change."""
    name = " ".join(unicodedata.normalize("NFC", name or "").split())
    if not 1 <= len(name) <= MAX_TITLE or not name.isprintable():
        raise CodingError("coding.bad_name", most=MAX_TITLE)
    if not 1 <= len(workloads) <= MAX_WORKLOADS:
        raise CodingError("coding.workload_count", n=len(workloads), most=MAX_WORKLOADS)
    if not 1 <= len(goals) <= MAX_GOALS or any(g.kind not in GOALS for g in goals):
        raise CodingError("coding.goal_count", n=len(goals), most=MAX_GOALS)
    return CodingAssignment(name, starter, class_name, tuple(dict.fromkeys(workloads)), tuple(goals))


@dataclass(frozen=True)
class HandIn:
    """A student's code handed in on an assignment, under the id the server drew for it."""
    id: str
    assignment: str
    name: str  # as shown
    key: str  # the name's key
    source: str
    class_name: str  # the scheduler class in `source` that is run
    at: float

    def filed(self) -> str:
        return json.dumps(self.__dict__, ensure_ascii=False)

    @classmethod
    def read(cls, filed: str) -> HandIn:
        return cls(**json.loads(filed))


@dataclass(frozen=True)
class Grading:
    """A student's hand-in being graded (`error` None), or the reason the last one could not be."""
    id: str
    since: float
    error: Message | None


class Coding:
    """A class's coding assignments and the code handed in on them (module docstring)."""

    def __init__(self, store: ClassStore, keys: ClassKeys, submissions: Submissions):
        self._store, self._keys, self._submissions = store, keys, submissions

    # -- the lecturer's ------------------------------------------------------------------------------------------

    def set(self, assignment: CodingAssignment):
        """Set an assignment (one of the same name is replaced; its hand-ins stay); CodingError beyond
        MAX_ASSIGNMENTS."""
        k = self._keys

        def change(tx: Tx):
            class_open(tx, k)
            if tx.hget(k.coding, assignment.name) is None and tx.hlen(k.coding) >= MAX_ASSIGNMENTS:
                raise CodingError("coding.too_many", most=MAX_ASSIGNMENTS)
            tx.hset(k.coding, assignment.name, assignment.filed())
        self._store.atomically((CLASSES, k.coding), change)

    def remove(self, name: str) -> bool:
        return self._store.hdel(self._keys.coding, name)

    def all(self) -> list[CodingAssignment]:
        return sorted((CodingAssignment.read(f) for f in self._store.hgetall(self._keys.coding).values()),
                      key=lambda a: a.name)

    def get(self, name: str) -> CodingAssignment | None:
        filed = self._store.hget(self._keys.coding, name)
        return None if filed is None else CodingAssignment.read(filed)

    # -- a student's ---------------------------------------------------------------------------------------------

    def hand_in(self, name: str, key: str, assignment: str, source: str, class_name: str | None = None) -> HandIn:
        """Keep `source` as the student's hand-in on `assignment`, to be graded now, its scheduler the class
        `class_name` (by default the assignment's starter's): CodingError when the code is too big, the class name
        is none, the assignment is gone, or their previous hand-in is still being graded."""
        if len(source.encode()) > MAX_SOURCE_BYTES:
            raise CodingError("coding.too_big", kb=len(source.encode()) // 1024, most=MAX_SOURCE_BYTES // 1024)
        if class_name is not None and not (class_name.isidentifier() and len(class_name) <= MAX_CLASS_NAME):
            raise CodingError("coding.bad_class", name=class_name[:MAX_CLASS_NAME])
        k, hand_id, at = self._keys, secrets.token_urlsafe(12), clock()

        def change(tx: Tx) -> HandIn:
            class_open(tx, k)
            filed = tx.hget(k.coding, assignment)
            if filed is None:
                raise CodingError("coding.no_assignment", name=assignment)
            if (now := _grading(tx.hget(k.grading, key))) is not None and now.error is None \
                    and clock() - now.since < GRADING_STALE_S:
                raise CodingError("coding.still_grading")
            if now is not None and now.id != self._graded_id(tx, assignment, key):
                tx.hdel(k.handed, now.id)  # a hand-in never graded (its process stopped, or its grading failed)
            hand = HandIn(hand_id, assignment, name, key, source, class_name or CodingAssignment.read(filed).class_name,
                          at)
            tx.hset(k.handed, hand.id, hand.filed())
            tx.hset(k.grading, key, json.dumps([hand.id, hand.at, None]))
            return hand
        return self._store.atomically((CLASSES, k.coding, k.grading, k.handed, k.submissions), change)

    def grading(self, key: str | None) -> Grading | None:
        """The student's hand-in being graded, or why the last one could not be (None: neither)."""
        return None if key is None else _grading(self._store.hget(self._keys.grading, key))

    def handed(self, hand_id: str) -> HandIn | None:
        """A hand-in by its id, while it is kept (the latest graded one per student and assignment, and the one
        being graded)."""
        filed = self._store.hget(self._keys.handed, hand_id) if hand_id else None
        return None if filed is None else HandIn.read(filed)

    # -- the grader's --------------------------------------------------------------------------------------------

    def file(self, hand: HandIn, verdicts: tuple[tuple[Message, Verdict], ...]) -> Submission:
        """The graded hand-in as the student's latest submission on its assignment (the code it replaces is dropped),
        with the link that opens it; the grading mark cleared. SubmissionError beyond the names a class holds."""
        k = self._keys
        submission = Submission(hand.name, hand.key, hand.assignment, verdicts, (),
                                all(v.state == PASS for _, v in verdicts), clock(),
                                urlencode({"class": k.code, SUBMISSION_PARAM: hand.id}))

        def change(tx: Tx):
            replaced = self._graded_id(tx, hand.assignment, hand.key)
            self._submissions.filing(tx, submission)
            if replaced not in (None, hand.id):
                tx.hdel(k.handed, replaced)
            if (now := _grading(tx.hget(k.grading, hand.key))) is not None and now.id == hand.id:
                tx.hdel(k.grading, hand.key)
        self._store.atomically((CLASSES, k.submissions, k.grading, k.handed), change)
        return submission

    def failed(self, hand: HandIn, why: Message):
        """The hand-in could not be graded (the student is told why); they may hand in again."""
        k = self._keys

        def change(tx: Tx):
            class_open(tx, k)
            if (now := _grading(tx.hget(k.grading, hand.key))) is not None and now.id == hand.id:
                tx.hset(k.grading, hand.key, json.dumps([hand.id, now.since, message_data(why)], ensure_ascii=False))
        self._store.atomically((CLASSES, k.grading), change)

    def drop(self, assignment: str, key: str) -> bool:
        """The lecturer drops a student's graded submission on `assignment`, and its code; whether there was one."""
        k, slot = self._keys, self._submissions.slot(assignment, key)

        def change(tx: Tx) -> bool:
            graded = self._graded_id(tx, assignment, key)
            if graded is not None:
                tx.hdel(k.handed, graded)
            tx.hdel(k.submissions, slot)
            return tx.hget(k.submissions, slot) is not None
        return self._store.atomically((k.submissions, k.handed), change)

    def _graded_id(self, tx: Tx, assignment: str, key: str) -> str | None:
        """The hand-in id of the student's graded submission on `assignment` (None: none)."""
        filed = tx.hget(self._keys.submissions, self._submissions.slot(assignment, key))
        return None if filed is None else hand_in_id(Submission.read(filed))


def hand_in_id(submission: Submission) -> str | None:
    """The hand-in a coding submission's link opens (None: a scenario assignment's run)."""
    return (parse_qs(submission.run).get(SUBMISSION_PARAM) or [None])[0]


def _grading(filed: str | None) -> Grading | None:
    if filed is None:
        return None
    hand_id, since, error = json.loads(filed)
    return Grading(hand_id, since, None if error is None else message_from(error))
