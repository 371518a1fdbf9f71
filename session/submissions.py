"""A class's handed-in assignments (no Streamlit): each student's latest judged run per assignment, under the name
the class knows them by (session/classroom.py binds it to their browser; session/names.py: how it is shown and
compared), with the link that reopens the run (built by the server from the run it judged: its parameters, put under
the class's address when the gradebook is exported); the export as CSV (one row per goal) and as a gradebook (one
row per student). Both CSVs start with a byte-order mark (Excel then reads UTF-8: 王小明, not mojibake) and neutralise a
cell a spreadsheet would run as a formula. A class holds at most MAX_NAMES names per assignment.
"""

from __future__ import annotations

import csv
import io
import json
import time
from dataclasses import dataclass
from urllib.parse import urlencode

from engine.inputs.assignment import Judgement
from engine.inputs.goals import FAIL, Verdict
from i18n import Message, MessageError, in_lang
from session.class_error import class_open
from session.class_keys import CLASSES, ClassKeys
from session.class_store import ClassStore, Tx

MAX_NAMES = 500  # per assignment in one class: a class's seats
FORMULA_START = "=+-@\t\r"  # a spreadsheet evaluates a cell starting so
BOM = "\ufeff"


class SubmissionError(MessageError):
    """A submission refused (too many names), with the reason in words."""


@dataclass(frozen=True)
class Submission:
    """One student's judged run: every goal's words and verdict, the rules it broke, when it was handed in."""
    name: str  # as shown (session/names.py)
    key: str  # the name's key: the student's latest per assignment counts
    assignment: str  # the scenario's name
    goals: tuple[tuple[Message, Verdict], ...]
    broken: tuple[Message, ...]
    passed: bool
    at: float  # time.time()
    run: str = ""  # the query string that reopens the run handed in, at its last frame (session/links.py)

    @classmethod
    def of(cls, name: str, key: str, assignment: str, judgement: Judgement, run: dict[str, str]) -> Submission:
        return cls(name, key, assignment, tuple((goal.words, verdict) for goal, verdict in judgement.verdicts),
                   judgement.broken, judgement.passed, time.time(), urlencode(run))

    def link(self, address: str) -> str:
        """The address that reopens the run handed in, under the class's `address` ("" without a run)."""
        return f"{address.rstrip('/')}/?{self.run}" if self.run else ""


    def filed(self) -> str:
        """As the class's store keeps it: JSON, each Message by its id and values (read again in any language)."""
        return json.dumps({"name": self.name, "key": self.key, "assignment": self.assignment,
                           "goals": [[message_data(goal), verdict.state, message_data(verdict.reason)]
                                     for goal, verdict in self.goals],
                           "broken": [message_data(rule) for rule in self.broken], "passed": self.passed, "at": self.at,
                           "run": self.run}, ensure_ascii=False)

    @classmethod
    def read(cls, filed: str) -> Submission:
        d = json.loads(filed)
        return cls(d["name"], d["key"], d["assignment"],
                   tuple((message_from(goal), Verdict(state, message_from(reason)))
                         for goal, state, reason in d["goals"]),
                   tuple(message_from(rule) for rule in d["broken"]), d["passed"], d["at"], d.get("run", ""))


def message_data(value):
    """A Message (its values may be Messages) as plain JSON data; any other value as it is."""
    if isinstance(value, Message):
        return {"message": value.key, "values": {k: message_data(v) for k, v in value.values.items()}}
    return value


def message_from(data):
    if isinstance(data, dict) and "message" in data:
        return Message(data["message"], **{k: message_from(v) for k, v in data["values"].items()})
    return data


class Submissions:
    """A class's latest submission per student and assignment, in the class's store (session/class_keys.py: a hash,
    one field per assignment and name's key)."""

    def __init__(self, store: ClassStore, keys: ClassKeys):
        self._store, self._keys, self._key = store, keys, keys.submissions

    @staticmethod
    def slot(assignment: str, key: str) -> str:
        """The field of the student's (by name's `key`) latest submission on `assignment`."""
        return json.dumps([assignment, key], ensure_ascii=False)

    def submit(self, name: str, key: str, assignment: str, judgement: Judgement, run: dict[str, str] | None = None
               ) -> Submission:
        """Keep this run (`run`: the parameters of its link, as session/links.py builds them from the run judged)
        as the latest of the student named `name` (compared by `key`) on `assignment`; SubmissionError for a new
        name beyond MAX_NAMES, ClassError once the class has ended."""
        submission = Submission.of(name, key, assignment, judgement, run or {})
        self._store.atomically((CLASSES, self._key), lambda tx: self.filing(tx, submission))
        return submission

    def filing(self, tx: Tx, submission: Submission):
        """Within a change watching CLASSES and the submissions: `submission` filed as its student's latest on its
        assignment (SubmissionError for a new name beyond MAX_NAMES, ClassError once the class has ended)."""
        class_open(tx, self._keys)
        slot, kept = self.slot(submission.assignment, submission.key), tx.hgetall(self._key)
        if slot not in kept and sum(json.loads(s)[0] == submission.assignment for s in kept) >= MAX_NAMES:
            raise SubmissionError("assignment.too_many", most=MAX_NAMES)
        tx.hset(self._key, slot, submission.filed())

    def delete(self, assignment: str, key: str) -> bool:
        """The lecturer drops a student's submission on `assignment`; whether there was one."""
        return self._store.hdel(self._key, self.slot(assignment, key))

    def of(self, assignment: str | None = None) -> list[Submission]:
        """The latest submission of each name (on `assignment`, or on every one), by assignment and name."""
        kept = [Submission.read(filed) for filed in self._store.hgetall(self._key).values()]
        return sorted((s for s in kept if assignment in (None, s.assignment)), key=lambda s: (s.assignment, s.key))

    def csv(self, code: str, lang: str) -> str:
        """One row per goal (and per rule broken) of each latest submission; words in `lang`."""
        out, rows = _sheet()
        rows.writerow(["class", "assignment", "name", "submitted_utc", "passed", "goal", "result", "reason"])
        for s in self.of():
            lines = [*((in_lang(lang, goal), verdict.state, verdict.reason) for goal, verdict in s.goals),
                     *(("rules", FAIL, rule) for rule in s.broken)]
            for goal, state, reason in lines:
                rows.writerow([_cell(v) for v in (code, s.assignment, s.name, _utc(s.at), int(s.passed), goal, state,
                                                  in_lang(lang, reason))])
        return out.getvalue()

    def gradebook(self, code: str, students: dict[str, str], address: str) -> str:
        """One row per student (`students`: name by key, each the class knows; and each who handed in): for each
        assignment handed in by anyone, whether theirs met every goal (1, 0, or empty: nothing handed in), when
        (UTC), and the link that reopens the very run, under the class's `address`."""
        latest = self.of()
        assignments = sorted({s.assignment for s in latest})
        by = {(s.assignment, s.key): s for s in latest}
        names = {s.key: s.name for s in latest} | students
        out, rows = _sheet()
        rows.writerow(["class", "name", *(f"{a}_{col}" for a in assignments for col in ("passed", "submitted_utc",
                                                                                       "link"))])
        for key, name in sorted(names.items()):
            cells = []
            for assignment in assignments:
                s = by.get((assignment, key))
                cells += ["", "", ""] if s is None else [int(s.passed), _utc(s.at), s.link(address)]
            rows.writerow([_cell(v) for v in (code, name, *cells)])
        return out.getvalue()


def _sheet():
    """A CSV being written, its byte-order mark first."""
    out = io.StringIO()
    out.write(BOM)
    return out, csv.writer(out)


def csv_text(header: list[str], rows) -> str:
    """A CSV of `rows` under `header`, as the exports write it: a byte-order mark, no cell run as a formula."""
    out, writer = _sheet()
    writer.writerow(header)
    writer.writerows([_cell(v) for v in row] for row in rows)
    return out.getvalue()


def _utc(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(at))


def _cell(value) -> str:
    """A CSV cell a spreadsheet shows as text (a leading quote keeps a formula from running)."""
    value = str(value)
    return f"'{value}" if value and value[0] in FORMULA_START else value
