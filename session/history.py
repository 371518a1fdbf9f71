"""A run's history for the charts over time, without keeping frames: one small summary per frame (what the charts
read: the step's header and metrics, the frame store's own objects, so a summary costs a pair) and the request
timeline's runs of phases, both built once per frame in order.

A 100,000-frame run then holds 100,000 tuples, not 100,000 materialised frames with their pools and requests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from engine.analysis.timeline import Segment, Segments
from engine.run.frame import Frame, StepHeader, StepMetrics


class FrameSummary(NamedTuple):
    """What the charts over time read of a frame: its header (step, clocks, config, batch, events, timing, each
    readable as an attribute of the summary, as of a Frame) and its metrics; no queues, requests or pool."""
    header: StepHeader
    metrics: StepMetrics

    def __getattr__(self, name: str):
        return getattr(self.header, name)

    def events_of(self, kind: str) -> list:
        return [e for e in self.header.events if e.kind == kind]

    @classmethod
    def of(cls, frame: Frame) -> FrameSummary:
        return cls(frame.header, frame.metrics)


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
