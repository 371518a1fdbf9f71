"""A class's handed-in assignments (no Streamlit): each student's latest judged run per assignment, under the name
they typed (no accounts: a name is what the lecturer reads), and their export as CSV.

A name is cleaned where it enters (`clean_name`): letters of any script, digits, spaces and `.-'`, whitespace
collapsed, at most MAX_NAME characters, so it can be shown as it is; the CSV neutralises a cell a spreadsheet
would run as a formula. A class holds at most MAX_NAMES names per assignment.
"""

from __future__ import annotations

import csv
import io
import threading
import time
from dataclasses import dataclass

from engine.inputs.assignment import Judgement
from engine.inputs.goals import FAIL, Verdict
from i18n import Message, MessageError, in_lang

MAX_NAME = 40
MAX_NAMES = 500  # per assignment in one class: a class's seats
NAME_PUNCTUATION = " .-'"
FORMULA_START = "=+-@\t\r"  # a spreadsheet evaluates a cell starting so


class SubmissionError(MessageError):
    """A submission refused (no usable name, too many names), with the reason in words."""


def clean_name(raw) -> str | None:
    """The name as kept: letters, digits, spaces and `.-'` only, whitespace collapsed, at most MAX_NAME
    characters; None when nothing is left."""
    kept = "".join(c if c.isalnum() or c in NAME_PUNCTUATION else " " for c in str(raw or ""))
    return " ".join(kept.split())[:MAX_NAME].strip() or None


@dataclass(frozen=True)
class Submission:
    """One student's judged run: every goal's words and verdict, the rules it broke, when it was handed in."""
    name: str
    assignment: str  # the scenario's name
    goals: tuple[tuple[Message, Verdict], ...]
    broken: tuple[Message, ...]
    passed: bool
    at: float  # time.time()

    @classmethod
    def of(cls, name: str, assignment: str, judgement: Judgement) -> Submission:
        return cls(name, assignment, tuple((goal.words, verdict) for goal, verdict in judgement.verdicts),
                   judgement.broken, judgement.passed, time.time())


class Submissions:
    def __init__(self):
        self._latest: dict[tuple[str, str], Submission] = {}  # (assignment, name casefolded) -> the latest
        self._lock = threading.Lock()

    def submit(self, raw_name, assignment: str, judgement: Judgement) -> Submission:
        """Keep this run as the student's latest on `assignment`; SubmissionError for a name that is empty once
        cleaned, or a new name beyond MAX_NAMES."""
        name = clean_name(raw_name)
        if name is None:
            raise SubmissionError("assignment.bad_name", most=MAX_NAME)
        key, submission = (assignment, name.casefold()), Submission.of(name, assignment, judgement)
        with self._lock:
            if key not in self._latest and sum(a == assignment for a, _ in self._latest) >= MAX_NAMES:
                raise SubmissionError("assignment.too_many", most=MAX_NAMES)
            self._latest[key] = submission
        return submission

    def of(self, assignment: str | None = None) -> list[Submission]:
        """The latest submission of each name (on `assignment`, or on every one), by assignment and name."""
        with self._lock:
            kept = [s for s in self._latest.values() if assignment in (None, s.assignment)]
        return sorted(kept, key=lambda s: (s.assignment, s.name.casefold()))

    def csv(self, code: str, lang: str) -> str:
        """One row per goal (and per rule broken) of each latest submission; words in `lang`."""
        out = io.StringIO()
        rows = csv.writer(out)
        rows.writerow(["class", "assignment", "name", "submitted_utc", "passed", "goal", "result", "reason"])
        for s in self.of():
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(s.at))
            lines = [*((in_lang(lang, goal), verdict.state, verdict.reason) for goal, verdict in s.goals),
                     *(("rules", FAIL, rule) for rule in s.broken)]
            for goal, state, reason in lines:
                rows.writerow([_cell(v) for v in (code, s.assignment, s.name, when, int(s.passed), goal, state,
                                                  in_lang(lang, reason))])
        return out.getvalue()


def _cell(value) -> str:
    """A CSV cell a spreadsheet shows as text (a leading quote keeps a formula from running)."""
    value = str(value)
    return f"'{value}" if value[:1] in FORMULA_START else value
