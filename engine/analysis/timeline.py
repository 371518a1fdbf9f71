"""A per-request timeline from frames: what each request was doing at every step, as runs of equal phases
(Gantt-like segments). Data only: viz/timeline.py draws it, session/history.py builds it frame by frame."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from engine.run.frame import Frame, RequestView


class Segment(NamedTuple):
    request_id: int
    phase: str
    start: int  # first step of the run of equal phases
    stop: int   # last step, inclusive


def phase_of(request: RequestView, frame: Frame, scheduled: dict[int, int], prefilled: set[int],
             speculated: set[int]) -> str | None:
    """What `request` did in `frame`'s step, or None once it is finished or aborted. `prefilled`: ids admitted
    or chunked this step; `speculated`: ids whose decode checked draft tokens."""
    if request.id in scheduled:
        if request.id in prefilled:
            return "prefill"
        # A decode computes one token (plus drafts when speculating), after some output already existed;
        # anything else is the last chunk of a prefill.
        is_decode = request.id in speculated or (scheduled[request.id] == 1 and request.num_output_tokens >= 2)
        return "decode" if is_decode else "prefill"
    if request.status == "waiting":
        return "preempted" if request.num_preemptions else "waiting"
    if request.status == "running":
        return "stalled"
    return None


class Segments:
    """Runs of equal phases per request, built one frame at a time (frame 0 has none), so a long run's
    timeline costs each frame once; `upto(step)` gives the runs of frames 0..step."""

    def __init__(self):
        self._open: dict[int, Segment] = {}
        self._done: list[Segment] = []
        self._over: set[int] = set()  # finished or aborted: they never run again

    def add(self, frame: Frame):
        scheduled = dict(zip(frame.batch.seq_ids, frame.batch.num_tokens, strict=True))
        prefilled = {e.seq_id for e in frame.events if e.kind in ("admitted", "chunk")}
        speculated = {e.seq_id for e in frame.events_of("speculated")}
        for request in frame.requests:
            if request.id in self._over:
                continue
            phase = phase_of(request, frame, scheduled, prefilled, speculated)
            current = self._open.get(request.id)
            if current is not None and (phase != current.phase or current.stop != frame.step - 1):
                self._done.append(self._open.pop(request.id))
                current = None
            if phase is None:
                self._over.add(request.id)
                continue
            self._open[request.id] = (current._replace(stop=frame.step) if current
                                      else Segment(request.id, phase, frame.step, frame.step))

    def upto(self, step: int | None = None) -> list[Segment]:
        runs = self._done + list(self._open.values())
        if step is not None:
            runs = [s._replace(stop=min(s.stop, step)) for s in runs if s.start <= step]
        return sorted(runs, key=lambda s: (s.request_id, s.start))


def segments(frames: Sequence[Frame]) -> list[Segment]:
    """Runs of equal phases per request, over the steps of `frames` (frame 0 has none)."""
    built = Segments()
    for frame in frames:
        built.add(frame)
    return built.upto()
