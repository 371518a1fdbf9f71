"""A class's questions and votes (no Streamlit): with predict-then-reveal, each question is a `Poll` keyed by (run
title, step); each student (by name's key, whatever tabs they have open) has one vote, their last before the
reveal. The lecturer reveals (the counts stay), closes or asks again; `tallies_csv` exports them.

Each change is one atomic change of the store (session/class_store.py `atomically`): a vote is refused once the
question was closed or revealed, checked together with the write (no vote lands after `reveal` returned), and the
question's flags are fields of their own, each set or dropped by the change that owns it (two lecturer devices
acting at once lose nothing).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from session.class_error import is_open
from session.class_keys import CLASSES, ClassKeys, poll_flag, poll_id
from session.class_store import ClassStore, Tx
from session.submissions import csv_text

REVEALED, CLOSED = "revealed", "closed"


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


class Polls:
    def __init__(self, store: ClassStore, keys: ClassKeys):
        self.store, self.keys = store, keys

    def ask(self, title: str, step: int, question: str, choices: tuple[str, ...], answer: int) -> Poll:
        """The poll on this question, opened the first time the lecturer or a student is asked it."""
        self.store.hsetnx(self.keys.polls, poll_id(title, step), json.dumps(
            {"question": question, "choices": list(choices), "answer": answer}))
        return self.at(title, step)

    def at(self, title: str, step: int) -> Poll | None:
        """The poll on this question as it stands, with its votes; None when it was never asked."""
        poll = poll_id(title, step)
        filed = self.store.hget(self.keys.polls, poll)
        return None if filed is None else self._poll(poll, filed, self.store.hgetall(self.keys.poll_flags))

    def _poll(self, poll: str, filed: str, flags: dict[str, str]) -> Poll:
        (title, step), data = json.loads(poll), json.loads(filed)
        votes = {key: int(choice) for key, choice in self.store.hgetall(self.keys.votes(poll)).items()}
        return Poll(title, step, data["question"], tuple(data["choices"]), data["answer"], votes,
                    poll_flag(poll, REVEALED) in flags, poll_flag(poll, CLOSED) in flags)

    def all(self) -> list[Poll]:
        flags = self.store.hgetall(self.keys.poll_flags)
        return [self._poll(poll, filed, flags) for poll, filed in self.store.hgetall(self.keys.polls).items()]

    def vote(self, key: str, title: str, step: int, choice: int) -> bool:
        """The answer of the student whose name's key is `key` (their last before the reveal counts); whether it
        counts: False on a question not asked, closed or revealed, or a choice it does not have."""
        poll, k = poll_id(title, step), self.keys

        def change(tx: Tx) -> bool:
            filed = tx.hget(k.polls, poll)
            if not is_open(tx, k) or filed is None or not 0 <= choice < len(json.loads(filed)["choices"]):
                return False
            if tx.hget(k.poll_flags, poll_flag(poll, REVEALED)) or tx.hget(k.poll_flags, poll_flag(poll, CLOSED)):
                return tx.hget(k.votes(poll), key) == str(choice)  # this very vote, sent again after it counted
            tx.hset(k.votes(poll), key, str(choice))
            return True
        # the votes are not watched: another student's vote changes nothing of this one
        return self.store.atomically((CLASSES, k.polls, k.poll_flags), change)

    def vote_of(self, key: str | None, poll: Poll) -> int | None:
        """The answer on `poll` of the student whose name's key is `key`."""
        choice = None if key is None else self.store.hget(self.keys.votes(poll_id(poll.title, poll.step)), key)
        return None if choice is None else int(choice)

    def reveal(self, title: str, step: int) -> bool:
        """The answer for everyone (the counts stay); whether it was revealed now (not before)."""
        poll, k = poll_id(title, step), self.keys

        def change(tx: Tx) -> bool:
            if tx.hget(k.polls, poll) is None or tx.hget(k.poll_flags, poll_flag(poll, REVEALED)) is not None:
                return False
            tx.hset(k.poll_flags, poll_flag(poll, REVEALED), "1")
            return True
        return self.store.atomically((k.polls, k.poll_flags), change)

    def close(self, title: str, step: int):
        """No more answers on this question (the counts stay; not revealed)."""
        poll, k = poll_id(title, step), self.keys

        def change(tx: Tx):
            if tx.hget(k.polls, poll) is not None:
                tx.hset(k.poll_flags, poll_flag(poll, CLOSED), "1")
        self.store.atomically((k.polls,), change)

    def ask_again(self, title: str, step: int):
        """The question asked anew: every answer dropped, open again (and not revealed)."""
        poll, k = poll_id(title, step), self.keys

        def change(tx: Tx):
            if tx.hget(k.polls, poll) is not None:
                tx.delete(k.votes(poll))
                tx.hdel(k.poll_flags, poll_flag(poll, REVEALED))
                tx.hdel(k.poll_flags, poll_flag(poll, CLOSED))
        self.store.atomically((k.polls,), change)

    def tallies_csv(self) -> str:
        """One row per choice of every poll: what was asked, the choice, how many chose it, whether it was right;
        with a byte-order mark (Excel reads it as UTF-8)."""
        return csv_text(["class", "run", "step", "question", "choice", "count", "answered", "right", "revealed"],
                        [[self.keys.code, poll.title, poll.step, poll.question, choice, n, len(poll.votes),
                          int(i == poll.answer), int(poll.revealed)]
                         for poll in self.all() for i, (choice, n) in enumerate(zip(poll.choices, poll.counts(),
                                                                                    strict=True))])
