"""One side of a hammer test (tests/test_class_hammer.py): a server process of a lecture hall, spawned as a process
of its own, that makes one change of class state `n` times as fast as it can, from `start_at` (the other side
starts at the same moment), and says what each call returned and every exception it raised."""

from __future__ import annotations

import time
import traceback
from types import SimpleNamespace

from session.class_error import ClassError
from session.classroom import MAX_NAMES, Classroom, Registry
from session.redis_store import RedisStore

PASSED = SimpleNamespace(verdicts=(), broken=(), passed=True)  # a judged run as hand_in reads it


def big_class(registry: Registry) -> Classroom:
    """A class that takes MAX_NAMES names (a hammer names more than a class takes by default)."""
    room = registry.start()
    room.names.set_most(MAX_NAMES)
    return room


def hammer(url: str, timeout_s: float, code: str, job: str, side: str, n: int, start_at: float) -> dict:
    """{"results": what each call gave, in order, "errors": every unexpected exception, as text}."""
    registry = Registry(store=RedisStore(url, timeout_s=timeout_s))
    room = registry.get(code)
    results, errors = [], []
    if job == "vote":
        for i in range(n):  # each student of this side has a tab on this process
            room.seats.sit(f"{side}{i}", f"{side}-browser{i}", lambda: True)
    time.sleep(max(0.0, start_at - time.time()))
    for i in range(n):
        try:
            results.append(JOBS[job](room, side, i))
        except ClassError as e:
            results.append(e.message_id)
        except Exception:  # what a hammer test counts: none may happen
            errors.append(traceback.format_exc())
    registry.store.close()
    return {"results": results, "errors": errors}


def _vote(room, side: str, i: int):
    sent = time.monotonic()  # one clock for every process of the machine
    return sent, room.vote(f"{side}{i}", "T", 1, i % 2)


JOBS = {
    # the same browser names itself from both processes at once
    "claim_same": lambda room, side, i: room.names.claim(f"browser{i}", f"Student {i}"),
    # two browsers want the same name
    "claim_rival": lambda room, side, i: room.names.claim(f"{side}-browser{i}", f"Rival {i}"),
    "vote": _vote,
    # two lecturer devices: one reveals each question while the other closes it
    "flags": lambda room, side, i: (room.polls.reveal if side == "a" else room.polls.close)("T", 100 + i),
    "hand_in": lambda room, side, i: room.hand_in(f"{side}-browser{i}", "assignment", PASSED).key,
    "delete": lambda room, side, i: room.submissions.delete("assignment", f"student{i}"),
    # students naming themselves while the lecturer ends the class
    "claim_many": lambda room, side, i: room.names.claim(f"{side}-late{i}", f"{side} late {i}"),
    "roster": lambda room, side, i: room.names.set_roster([f"Pupil {j}" for j in range(i, i + 10)]) and None,
}
