"""A run's history for the charts over time, without keeping frames: one small summary per frame (what the charts
read: step, clocks, config, batch, events, metrics, timing; the objects are the frame store's own, so a summary
costs a tuple) and the request timeline's runs of phases, both built once per frame in order.

A 100,000-frame run then holds 100,000 tuples, not 100,000 materialised frames with their pools and requests.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence

from engine.frame import Frame
from viz.timeline import Segment, Segments


class FrameSummary(namedtuple("FrameSummary", ("step", "sim_time_s", "wall_schedule_s", "wall_model_s", "config",
                                                "batch", "events", "metrics", "timing"))):
    """What the charts over time read of a frame: its attributes of the same names (no queues, requests, pool)."""
    __slots__ = ()

    def events_of(self, kind: str) -> list:
        return [e for e in self.events if e.kind == kind]

    @classmethod
    def of(cls, frame: Frame) -> FrameSummary:
        return cls._make(getattr(frame, name) for name in cls._fields)


class RunHistory:
    """Summaries and timeline runs of frames 0..n of one run; a branched run starts a new one."""

    def __init__(self):
        self.summaries: list[FrameSummary] = []
        self._segments = Segments()

    def extend(self, frames: Sequence[Frame], upto: int):
        """Take in frames len(summaries)..upto of `frames` (each rebuilt once, then dropped)."""
        for k in range(len(self.summaries), upto + 1):
            frame = frames[k]
            self.summaries.append(FrameSummary.of(frame))
            self._segments.add(frame)

    def segments(self, step: int) -> list[Segment]:
        """The request timeline's runs up to frame `step` (taken in already)."""
        return self._segments.upto(step)
