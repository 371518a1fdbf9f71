"""A runner's step computed on a thread of its own while the caller goes on: what overlapped scheduling
(engine/run/overlap.py) hands the model, so that the scheduler prepares step N+1 meanwhile. The engine stays
single-threaded; its one concurrent part, the model computing, is the runner's side."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor


class StepThread:
    """One worker thread running a runner's steps one at a time, each timed by `clock` (seconds)."""

    def __init__(self, clock: Callable[[], float]):
        self.clock = clock
        self._thread = ThreadPoolExecutor(max_workers=1)

    def start(self, runner, seqs: list) -> Future:
        """`runner.run(seqs)` on the thread; the future gives (its tokens, (start, end) on `clock`)."""
        return self._thread.submit(self._timed_run, runner, seqs)

    def _timed_run(self, runner, seqs: list) -> tuple[list, tuple[float, float]]:
        start = self.clock()
        tokens = runner.run(seqs)
        return tokens, (start, self.clock())
