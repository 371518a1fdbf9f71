"""Keep long rows and long queues on screen: show the ends (and what matters) and say how much is hidden."""

from __future__ import annotations

from typing import NamedTuple

GAP = None  # stands for a run of hidden items in a condensed row


class Condensed(NamedTuple):
    shown: list  # items, with GAP where a run was left out
    hidden: int  # how many items the GAPs stand for


def condense_row(n: int, max_items: int, focus: range = range(0)) -> Condensed:
    """Indices 0..n-1 to draw in at most `max_items` cells: the first and last items, plus `focus` (e.g. the
    tokens computed this step) when it fits; runs left out become one GAP cell each."""
    if n <= max_items:
        return Condensed(list(range(n)), 0)
    budget = max(2, max_items - 2)  # cells left after two possible gaps
    keep: set[int] = set()
    focus = range(max(0, focus.start), min(n, focus.stop))
    focus_share = min(len(focus), budget // 3)
    if focus_share:
        keep.update(range(focus.stop - focus_share, focus.stop))  # the newest part of the focus
    rest = budget - len(keep)
    head = rest // 2
    keep.update(range(head))
    keep.update(range(n - (rest - head), n))
    shown, hidden, previous = [], 0, -1
    for i in sorted(keep):
        if i > previous + 1:
            shown.append(GAP)
            hidden += i - previous - 1
        shown.append(i)
        previous = i
    if previous < n - 1:
        shown.append(GAP)
        hidden += n - 1 - previous
    return Condensed(shown, hidden)


def condense_queue(ids: tuple[int, ...] | list[int], max_rows: int) -> Condensed:
    """The head of a queue (the part the scheduler looks at); the rest is counted, not drawn."""
    ids = list(ids)
    if len(ids) <= max_rows:
        return Condensed(ids, 0)
    return Condensed(ids[:max_rows], len(ids) - max_rows)
