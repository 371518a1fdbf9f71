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


def fewer_or_shorter(workload: dict, output_budget: str) -> Iterator[dict]:
    """Workloads one cut smaller, for `shrink`: a request dropped, then one request's output budget (the request
    field `output_budget`, under the system's name) or prompt halved."""
    requests = workload["requests"]
    if len(requests) > 1:
        for i in range(len(requests)):
            yield {**workload, "requests": requests[:i] + requests[i + 1:]}
    for i, r in enumerate(requests):
        for cut in ({output_budget: r[output_budget] // 2}, {"prompt": r["prompt"][:len(r["prompt"]) // 2]}):
            trial = {**r, **cut}
            if trial[output_budget] >= 1 and trial["prompt"] and trial != r:
                yield {**workload, "requests": [*requests[:i], trial, *requests[i + 1:]]}
