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

This is a standalone driver over a Scheduler and a runner (no frames), for the benchmark and the timeline.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from scheduler import Batch, Scheduler, Sequence, SequenceStatus

PLACEHOLDER = -(2**31)  # a token no runner writes and no config uses as EOS

Interval = tuple[float, float]  # (start, end) in seconds since the run began


@dataclass(frozen=True)
class StepTiming:
    """Where one step's work happened in time: scheduling it, the model computing it, postprocessing it."""
    step: int
    schedule: Interval
    model: Interval
    postprocess: Interval


@dataclass(frozen=True)
class DriveResult:
    outputs: list[list[int]]  # completion token ids per sequence, in the order given
    batches: list[tuple[int, ...]]  # sequence ids run at each step
    timings: list[StepTiming]
    wall_s: float


def drive(scheduler: Scheduler, runner, seqs: list[Sequence], overlap: bool) -> DriveResult:
    """Run `seqs` to the end, synchronously or with the next step scheduled while the model runs."""
    if overlap and scheduler.config.num_speculative_tokens:
        raise ValueError("overlapped scheduling needs num_speculative_tokens=0: drafts come from the tokens "
                         "still being computed")
    for seq in seqs:
        scheduler.add(seq)
    start = time.perf_counter()
    clock = lambda: time.perf_counter() - start  # noqa: E731
    loop = _OverlappedLoop(scheduler, runner, clock) if overlap else _SynchronousLoop(scheduler, runner, clock)
    loop.run()
    return DriveResult([s.completion_token_ids for s in seqs], loop.batches, loop.timings, clock())


class _SynchronousLoop:
    def __init__(self, scheduler: Scheduler, runner, clock: Callable[[], float]):
        self.scheduler, self.runner, self.clock = scheduler, runner, clock
        self.batches: list[tuple[int, ...]] = []
        self.timings: list[StepTiming] = []

    def run(self):
        while not self.scheduler.is_finished():
            t0 = self.clock()
            batch = self.scheduler.schedule()
            t1 = self.clock()
            _check_progress(batch)
            tokens = self.runner.run(batch.seqs)
            t2 = self.clock()
            self.scheduler.postprocess(batch.seqs, tokens)
            self.batches.append(tuple(s.seq_id for s in batch.seqs))
            self.timings.append(StepTiming(len(self.timings) + 1, (t0, t1), (t1, t2), (t2, self.clock())))


class _OverlappedLoop(_SynchronousLoop):
    def run(self):
        sched = self.scheduler
        with ThreadPoolExecutor(max_workers=1) as worker:
            in_flight = None  # (future, placeholders, schedule interval, postprocess interval) of the step running
            while not sched.is_finished() or in_flight:
                t0 = self.clock()
                batch = sched.schedule()  # overlaps the model computing the step in flight
                t1 = self.clock()
                if in_flight is None:
                    _check_progress(batch)
                else:
                    batch = self._land(*in_flight, batch)
                    in_flight = None
                if not batch.seqs:  # all it had finished late, or the last step landed
                    continue
                future = worker.submit(self._timed_run, [_snapshot(s) for s in batch.seqs])
                t2 = self.clock()
                placeholders = self._postprocess_ahead(batch)
                in_flight = (future, placeholders, (t0, t1), (t2, self.clock()))
                self.batches.append(tuple(s.seq_id for s in batch.seqs))

    def _timed_run(self, seqs: list[Sequence]) -> tuple[list, Interval]:
        t = self.clock()
        tokens = self.runner.run(seqs)
        return tokens, (t, self.clock())

    def _postprocess_ahead(self, batch: Batch) -> list[tuple[Sequence, int]]:
        """Postprocess with a placeholder for each token the model will write; where they went."""
        outputs = [None if s.num_computed_tokens + s.num_scheduled_tokens < len(s) else PLACEHOLDER
                   for s in batch.seqs]
        slots = [(s, len(s)) for s, out in zip(batch.seqs, outputs, strict=True) if out is not None]
        self.scheduler.postprocess(batch.seqs, outputs)
        return slots

    def _land(self, future, placeholders, schedule: Interval, postprocess: Interval, next_batch: Batch) -> Batch:
        """Put the step's real tokens in place; finish (one step late) the requests that wrote EOS, and take
        them out of the next batch before it runs."""
        tokens, model = future.result()
        late = set()
        for (seq, index), token in zip(placeholders, [t for t in tokens if t is not None], strict=True):
            seq.token_ids[index] = token
            if token != self.scheduler.config.eos or seq.sampling_params.ignore_eos:
                continue
            if seq.is_done:  # it also hit max_tokens or max_model_len with this token: EOS is the reason
                seq.finish_reason = "eos"
            else:
                self._finish_late(seq, index)
                late.add(seq.seq_id)
        self.timings.append(StepTiming(len(self.timings) + 1, schedule, model, postprocess))
        if not late:
            return next_batch
        kept = [(s, n) for s, n in zip(next_batch.seqs, next_batch.num_scheduled_tokens, strict=True)
                if s.seq_id not in late]
        return Batch([s for s, _ in kept], tuple(n for _, n in kept), next_batch.kind if kept else "idle")

    def _finish_late(self, seq: Sequence, eos_index: int):
        sched = self.scheduler
        del seq.token_ids[eos_index + 1:]
        for queue in (sched.running, sched.waiting):
            if seq in queue:
                queue.remove(seq)
        sched.block_manager.deallocate(seq)
        seq.num_scheduled_tokens = 0
        seq.status, seq.finish_reason = SequenceStatus.FINISHED, "eos"


def _snapshot(seq: Sequence) -> Sequence:
    """A copy the worker can read while the main thread moves the live sequence on."""
    snapshot = copy.copy(seq)
    snapshot.token_ids, snapshot.block_table = seq.token_ids[:], seq.block_table[:]
    return snapshot


def _check_progress(batch: Batch):
    if not batch.seqs:
        raise RuntimeError("nothing can be scheduled although requests remain: the run is stalled")
