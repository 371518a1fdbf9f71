"""The checks of what a hook of the article's scheduler returned (scheduler/article/scheduler.py: `choose_victim`,
`waiting_key`, `max_num_seqs_now`, `extra_blocks`, `chunk_size`): an answer the scheduler cannot use is a
`BadDecision` naming the hook, the answer and what it may be, before anything changed, never an error deep inside."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from scheduler.interface import BadDecision
from scheduler.sequence import Sequence

SHOWN = 60  # characters of an answer quoted back


def shown(answer: object) -> str:
    """An answer as the learner reads it: a request by its id, anything else by its repr, shortened."""
    if isinstance(answer, Sequence):
        return f"request {answer.seq_id}"
    text = repr(answer)
    return text if len(text) <= SHOWN else text[:SHOWN - 3] + "..."


def whole_number(hook: str, answer: object, low: int, high: int | None = None) -> int:
    """`answer` if it is a whole number from `low` (up to `high`, where given)."""
    if type(answer) is not int or answer < low or (high is not None and answer > high):
        if high is None:
            raise BadDecision("article.hook.number_from", hook=hook, answer=shown(answer), low=low)
        raise BadDecision("article.hook.number", hook=hook, answer=shown(answer), low=low, high=high)
    return answer


def victim(answer: object, running: Iterable[Sequence], requester: Sequence) -> Sequence | None:
    """`answer` if it is None or a request of `running` other than `requester`."""
    running = list(running)
    chosen = next((seq for seq in running if seq is answer and seq is not requester), None)
    if answer is not None and chosen is None:
        raise BadDecision("article.hook.victim", answer=shown(answer), requester=requester.seq_id,
                          running=", ".join(str(seq.seq_id) for seq in running) or "-")
    return chosen


def in_key_order(hook: str, seqs: Iterable[Sequence], key: Callable[[Sequence], Any]) -> list[Sequence]:
    """`seqs` sorted by `key` (stable: equal keys keep their order); keys that cannot be compared are a bad answer."""
    seqs = list(seqs)
    keys = [key(seq) for seq in seqs]
    try:
        order = sorted(range(len(seqs)), key=keys.__getitem__)
    except TypeError:
        a, b = _unordered_pair(keys)
        raise BadDecision("article.hook.unordered", hook=hook, a=shown(a), b=shown(b)) from None
    return [seqs[i] for i in order]


def _unordered_pair(keys: list) -> tuple:
    """Two of `keys` that cannot be compared."""
    for i, a in enumerate(keys):
        for b in keys[i:]:
            try:
                a < b  # noqa: B015 (the comparison is the test)
                b < a  # noqa: B015
            except TypeError:
                return a, b
    return keys[0], keys[-1]
