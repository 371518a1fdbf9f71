"""The class store's layout in one place (session/class_store.py: the store; session/classroom.py and its parts:
what is kept there): every key a class's state is filed under, what each holds, and the words a wake-up says.
Values are strings; JSON where a value has parts. Redis puts its own prefix before each (session/redis_store.py).
"""

from __future__ import annotations

import json

CLASSES = "classes"  # hash: class code -> JSON [started (clock), the class's secret]; a class is open while here
ENDED_CLASSES = "ended_classes"  # hash: code of a class ended lately -> when (clock): its link is no wrong guess
SERVER = "server"  # hash: what every server process shares outside any class
TOKEN_SECRET_FIELD = "token_secret"  # in SERVER: the secret browser tokens are signed with (session/tokens.py)

# What a wake-up published on a class's channel asks of each process: whom of its tabs to wake.
LEAD, FOLLOWING, LECTURER, BRING_BACK, ENDED = "lead", "following", "lecturer", "bring_back", "ended"


def heartbeat(process: str) -> str:
    """String that expires: a server process is up while its own is there (session/redis_store.py beats it)."""
    return f"process:{process}"


def ticket_key(nonce: str) -> str:
    """String that expires: the browser token a ticket hands to its page (session/tokens.py)."""
    return f"ticket:{nonce}"


def guesses_key(kind: str, who: str, name: str) -> str:
    """String that expires: JSON of the wrong guesses of a `kind` ("codes", "keys", "names") by one `who`
    ("session", "identity" or "class") named `name` (session/limits.py)."""
    return f"guesses:{kind}:{who}:{name}"


class ClassKeys:
    """The keys of one class, all under its prefix (ending the class deletes the prefix)."""

    def __init__(self, code: str):
        self.code = code
        self.prefix = p = f"class:{code}:"
        self.lecturers = p + "lecturers"  # hash: a lecturer's browser token -> JSON of its device (class_lead.py)
        self.lectern = p + "lectern"  # string: JSON [process, session] of the lecturer's tab
        self.lead = p + "lead"  # string: JSON of the lead (session/class_lead.py)
        self.version = p + "version"  # string: the last lead's version
        self.names = p + "names"  # hash: name key -> JSON [name as shown, browser token ("" for a roster name
        # unopened), 1 when that browser opened the name's personal code]
        self.by_token = p + "by_token"  # hash: browser token -> name key
        self.codes = p + "codes"  # hash: personal code -> name key (a roster class)
        self.dropped = p + "dropped"  # hash: browser token -> JSON [name it lost, why: a message id]
        self.polls = p + "polls"  # hash: poll id -> JSON {question, choices, answer}
        self.poll_flags = p + "poll_flags"  # hash: JSON [poll id, "revealed" or "closed"] -> "1"
        self.submissions = p + "submissions"  # hash: JSON [assignment, name key] -> the submission's JSON
        self.coding = p + "coding"  # hash: coding assignment's name -> its JSON (session/coding.py)
        self.handed = p + "handed"  # hash: hand-in id -> JSON of the code a student handed in (graded or being graded)
        self.grading = p + "grading"  # hash: name key -> JSON [hand-in id, since (clock), error or null]
        self.processes = p + "processes"  # hash: process -> "1", each process that has filed seats
        # hash: JSON [poll id, "browser" or "name", token or key] -> "1": broke away while the poll was open (the vote
        # on it closed)
        self.away = p + "away"
        # hash: JSON [run title, browser token] -> the furthest frame of that run a tab of the browser showed (or its
        # player held) while on its own: its student may not answer a question that frame is past (classroom.py)
        self.seen_alone = p + "seen_alone"
        self.identities = p + "identities"  # hash: client identity the class was entered from -> "1" (the room)
        self.most_names = p + "most_names"  # string: the most names the lecturer expects (a roster's size, or set)

    def votes(self, poll_id: str) -> str:
        """Hash: name key -> the choice's index."""
        return f"{self.prefix}votes:{poll_id}"

    def seats(self, process: str) -> str:
        """Hash: session id -> JSON [token, following, frame], a process's open tabs."""
        return f"{self.prefix}seats:{process}"


def poll_id(title: str, step: int) -> str:
    return json.dumps([title, step])


def poll_flag(poll: str, flag: str) -> str:
    return json.dumps([poll, flag])
