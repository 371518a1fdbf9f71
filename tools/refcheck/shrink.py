"""The shrinker: a differing workload made as small as it goes while it still differs, so a report shows the
fewest requests and tokens that part the twin from its system."""

from __future__ import annotations

from collections.abc import Callable, Iterator


def shrink(workload: dict, smaller: Callable[[dict], Iterator[dict]], differs: Callable[[dict], bool]) -> dict:
    """Greedy: take the first of `smaller(workload)` that still `differs`, and again from there, until none
    does. `differs(workload)` is assumed true on entry."""
    while True:
        workload_next = next((w for w in smaller(workload) if differs(w)), None)
        if workload_next is None:
            return workload
        workload = workload_next
