"""Overlapped (asynchronous) scheduling: the scheduler prepares step N+1 while the model computes step N.

Like the async schedulers of production engines, the next batch is decided from lengths alone: right after
step N is handed to a worker thread, the main thread postprocesses it with a placeholder for every token
the model will write, then schedules step N+1 against that state. When step N returns, its real tokens
replace the placeholders before step N+1 is handed over (the model never reads a placeholder).

Lengths are all the scheduler needs, except for one thing it cannot know in advance: end-of-sequence. A
request whose step-N token is EOS may already sit in batch N+1; it is finished one step late and dropped
from that batch before it runs (vLLM computes the extra token and discards it; dropping it costs the same
batch slot and saves the compute). Everything else (max_tokens, max_model_len) is known from lengths and
finishes on time. So every request writes exactly the tokens of a synchronous run; the batches match too
unless an EOS lands early. Speculative decoding is refused: its drafts are read off the very tokens still
being computed.

`Pipeline` is the one implementation: the Engine (`Engine(..., overlap=True)`, frames and all) and the
standalone `run_loop()` (no frames, for the benchmark and tests) both launch and land batches through it.
`StepClock` lays a step's schedule, model and postprocess work out in time, synchronously or overlapped.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from runner.step_thread import StepThread
from scheduler import Batch, Config, ConfigError, Event, Sequence
from scheduler.contract import SchedulerProtocol
from scheduler.sequence import PLACEHOLDER

if TYPE_CHECKING:
    from runner.step_thread import Future  # the worker's, whose thread pool this layer never starts itself

Interval = tuple[float, float]  # (start, end) in seconds since the run began


@dataclass(frozen=True)
class StepTiming:
    """Where one step's work happened in time: scheduling it, the model computing it, postprocessing it.
    `overlapped`: the step was scheduled while the model was still computing the step before."""
    step: int
    schedule: Interval
    model: Interval
    postprocess: Interval
    overlapped: bool = False

    @property
    def end(self) -> float:
        return max(self.model[1], self.postprocess[1])

    def to_dict(self) -> dict:
        return {"step": self.step, "schedule": list(self.schedule), "model": list(self.model),
                "postprocess": list(self.postprocess), "overlapped": self.overlapped}

    @classmethod
    def from_dict(cls, data: dict) -> StepTiming:
        return cls(data["step"], tuple(data["schedule"]), tuple(data["model"]), tuple(data["postprocess"]),
                   data["overlapped"])


def check_overlap(config: Config, overlap: bool):
    """Overlap and speculative decoding exclude each other: raise ConfigError naming the fix."""
    if overlap and config.num_speculative_tokens:
        raise ConfigError("num_speculative_tokens", config.num_speculative_tokens, "config.overlap_speculative")


@dataclass
class StepClock:
    """Lays steps out on two timelines, the scheduler's thread and the model's. Synchronously a step is
    schedule + model + postprocess; overlapped, the step is scheduled while the model still computes the
    previous one, handed over (`handoff_s`) once that one returns, and postprocessed ahead while its own model
    work runs, so in the steady state a step takes max(schedule + postprocess, model) + handoff."""
    cpu: float = 0.0  # when the scheduler's thread is free
    model_free: float = 0.0  # when the model has finished its last step

    def step(self, step: int, schedule_s: float, model_s: float, postprocess_s: float, handoff_s: float,
             overlap: bool, in_flight: bool) -> StepTiming:
        """The next step's intervals; `overlap`: the pipelined layout, `in_flight`: the model was computing
        the step before when this one was scheduled."""
        schedule = (self.cpu, self.cpu + schedule_s)
        start = max(schedule[1], self.model_free) + handoff_s if overlap else schedule[1]
        model = (start, start + model_s)
        post_start = start if overlap else model[1]
        postprocess = (post_start, post_start + postprocess_s)
        self.cpu, self.model_free = postprocess[1], model[1]
        return StepTiming(step, schedule, model, postprocess, in_flight)


@dataclass
class Landed:
    """What landing a step gave: the next batch without the requests that finished late, those requests
    with the blocks freed for them, the requests whose length limit coincided with EOS (reason now "eos"),
    and when the model ran."""
    batch: Batch | None
    late: list[tuple[Sequence, tuple[int, ...]]] = field(default_factory=list)
    eos_at_limit: list[Sequence] = field(default_factory=list)
    model: Interval = (0.0, 0.0)


class Pipeline:
    """At most one step in flight on the runner's thread (runner/step_thread.py); the caller schedules the next one
    meanwhile."""

    def __init__(self, clock: Callable[[], float]):
        self._worker = StepThread(clock)
        # (future, placeholders) of the step the model is computing
        self._in_flight: tuple[Future, list[tuple[Sequence, int]]] | None = None

    @property
    def busy(self) -> bool:
        return self._in_flight is not None

    def launch(self, scheduler: SchedulerProtocol, runner, batch: Batch) -> list[Event]:
        """Hand `batch` to the worker and postprocess it ahead, a placeholder for each token it will write;
        returns postprocess's events."""
        future = self._worker.start(runner, [_snapshot(s) for s in batch.seqs])
        outputs = [None if s.num_computed_tokens + s.num_scheduled_tokens < len(s) else PLACEHOLDER
                   for s in batch.seqs]
        placeholders = [(s, len(s)) for s, out in zip(batch.seqs, outputs, strict=True) if out is not None]
        events = scheduler.launch(batch.seqs, outputs)
        self._in_flight = (future, placeholders)
        return events

    def land(self, scheduler: SchedulerProtocol, next_batch: Batch | None) -> Landed:
        """Wait for the step in flight and have the scheduler land its real tokens (it finishes, one step late,
        the requests that wrote EOS); take those out of `next_batch` before it runs."""
        assert self._in_flight is not None, "land() with no step in flight"
        (future, placeholders), self._in_flight = self._in_flight, None
        tokens, model = future.result()
        late, eos_at_limit = scheduler.land([(seq, index, token) for (seq, index), token
                                             in zip(placeholders, [t for t in tokens if t is not None], strict=True)])
        if late and next_batch is not None:
            next_batch = next_batch.without({seq.seq_id for seq, _ in late})
        return Landed(next_batch, late, eos_at_limit, model)


def _snapshot(seq: Sequence) -> Sequence:
    """A copy the worker can read while the main thread moves the live sequence on."""
    snapshot = copy.copy(seq)
    snapshot.token_ids, snapshot.block_table = seq.token_ids[:], seq.block_table[:]
    return snapshot


# -- the standalone loop ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class LoopResult:
    outputs: list[list[int]]  # completion token ids per sequence, in the order given
    batches: list[tuple[int, ...]]  # sequence ids run at each step
    timings: list[StepTiming]
    wall_s: float


def run_loop(scheduler: SchedulerProtocol, runner, seqs: list[Sequence], overlap: bool) -> LoopResult:
    """Run `seqs` to the end, synchronously or with the next step scheduled while the model runs (wall time)."""
    check_overlap(scheduler.config, overlap)
    for seq in seqs:
        scheduler.add(seq)
    start = time.perf_counter()
    clock = lambda: time.perf_counter() - start  # noqa: E731
    batches, timings = [], []
    pipeline = Pipeline(clock) if overlap else None
    in_flight = None  # (step, schedule interval, postprocess interval) of the step the model is computing
    while not scheduler.is_finished() or in_flight:
        t0 = clock()
        batch = scheduler.schedule()  # overlapped: while the model computes the step in flight
        t1 = clock()
        if in_flight and pipeline:
            landed = pipeline.land(scheduler, batch)
            batch = landed.batch or batch  # the batch it was given, less those that finished late
            timings.append(StepTiming(in_flight[0], in_flight[1], landed.model, in_flight[2], True))
            in_flight = None
        elif not batch.seqs:
            raise RuntimeError("nothing can be scheduled although requests remain: the run is stalled")
        if not batch.seqs:  # all it had finished late, or the last step landed
            continue
        batches.append(tuple(s.seq_id for s in batch.seqs))
        if batch.block_copies:  # the step in flight has landed
            runner.copy_blocks(batch.block_copies)
        if pipeline:
            t2 = clock()
            pipeline.launch(scheduler, runner, batch)
            in_flight = (len(batches), (t0, t1), (t2, clock()))
        else:
            tokens = runner.run(batch.seqs)
            t2 = clock()
            scheduler.postprocess(batch.seqs, tokens)
            timings.append(StepTiming(len(batches), (t0, t1), (t1, t2), (t2, clock())))
    return LoopResult([s.completion_token_ids for s in seqs], batches, timings, clock())
