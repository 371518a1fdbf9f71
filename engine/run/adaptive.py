"""Adaptive batch size: raise or lower `max_num_seqs` between steps from the step latency just measured.

The rule is the article's: a step faster than `low_s` means the batch can grow, a step slower than `high_s`
that it must shrink, anything in between keeps it. It grows only a batch that used the whole limit: a
fast step of a half-empty batch says nothing about a bigger one. The latency is the simulated step time (cost model) on
the fake runner, so runs stay deterministic, and the measured wall time of the step on the real model.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise

from engine.run.frame import Frame
from i18n import MessageError


@dataclass(frozen=True)
class AdaptiveBatch:
    low_s: float = 0.050  # grow below this step latency
    high_s: float = 0.200  # shrink above it
    step: int = 1  # requests added or removed per adjustment
    min_seqs: int = 1
    max_seqs: int = 64

    def __post_init__(self):
        if not 0 <= self.low_s < self.high_s:
            raise MessageError("adaptive.band", low=self.low_s, high=self.high_s)
        if self.step < 1 or not 1 <= self.min_seqs <= self.max_seqs:
            raise MessageError("adaptive.seqs", step=self.step, least=self.min_seqs, most=self.max_seqs)

    def next_max_num_seqs(self, current: int, latency_s: float, batch_size: int) -> int:
        """The batch limit for the next step, within [min_seqs, max_seqs], after a step of `batch_size`
        requests that took `latency_s` under the limit `current`."""
        if latency_s < self.low_s and batch_size >= current:
            current += self.step
        elif latency_s > self.high_s:
            current -= self.step
        return self.clamp(current)

    def clamp(self, max_num_seqs: int) -> int:
        """`max_num_seqs` brought within [min_seqs, max_seqs]."""
        return max(self.min_seqs, min(self.max_seqs, max_num_seqs))


def step_latencies(frames: Iterable[Frame], wall: bool = False) -> list[float]:
    """Each step's latency in seconds, frame 0 excluded: the simulated step time, or with `wall` the measured
    schedule + model time (what the controller reads on the fake and on the real runner)."""
    frames = list(frames)
    if wall:
        return [f.wall_schedule_s + f.wall_model_s for f in frames[1:]]
    return [f.sim_time_s - before.sim_time_s for before, f in pairwise(frames)]
