"""The engine: one scheduler, one runner, a workload, and a frame recorded for every step.

Step s (s >= 1): schedule, run the model, postprocess, queue the requests arriving at step s, record frame s.
Frame 0 shows the requests that arrive at the start (step 0) waiting. A run always ends: when every request is
done and none is still to arrive, when a step could change nothing any more ("stalled"), or at `max_steps`.

Replay and branches. A run is a pure function of its recipe (engine/run/recipe.py): a `RunSpec` (config,
workload, runner kind and seed, cost model, options, scheduler) and the changes made mid-run (`Change`: config
fields and options, or a request added by hand), each stamped with the frame it was made at. `Engine(spec)`
makes each of the spec's changes when it reaches its frame, so `replay(k)`, the recipe with the changes made
before frame k, re-runs to frame k with the same frames again; `follow` goes on from a copy of an engine
(a checkpoint) the same way. `branch(k, **changes)` replays to k and then applies `set_config(**changes)`:
frames 0..k are the old run's, what follows runs under the new config.

What a change can do mid-run (checked by `recipe.checked_change`):
- scheduling fields (`SWAPPABLE_FIELDS`) take effect at the next step, the queues and KV cache untouched
  (switching to the priority queue policy re-sorts the waiting queue);
- pool fields (`POOL_FIELDS`: block count or size, max_model_len, eos) rebuild the scheduler, its pool and
  the runner: every running request loses its KV cache and is queued again, ahead of the waiting ones, to
  be recomputed (like a server restarted with a new pool); a request that no longer fits is aborted.

Adaptive batch size (`adaptive=AdaptiveBatch(...)`, engine/run/adaptive.py): after every step that ran a batch,
the controller sets `max_num_seqs` for the next step from that step's latency (simulated on the fake runner,
wall time on the model); switched on mid-run, it first brings the limit within its bounds. Its choices are
kept in `adaptive_sizes`, one per step (None while it is off), and a replay follows them instead of deciding
again, so replaying a real-model run gives the same frames although wall times differ.

Overlapped scheduling (`overlap=True`, engine/run/overlap.py): step s is scheduled while the model still computes
step s - 1, whose tokens land right after; step s is then handed to the model's worker and postprocessed ahead
with placeholders, so its frame is recorded while its tokens are still being computed (they show as pending
until the next step lands them; a run that ends lands its last step before its last frame). A request whose
EOS lands after the next step was scheduled finishes one step late (a `finished_late` event) and is dropped
from that step's batch. Every request writes the tokens of a synchronous run. Each frame's `timing` lays the
step's work out in time: the cost model's on the fake runner (deterministic), the measured wall time of the
engine's own work on the model (time between steps excluded; overlapped, the model bar has the length of the
step that landed, the only one measured by then). `set_config(overlap=..., adaptive=...)` switches
either mid-run, like a config field; `options_at(k)` tells which were in effect after frame k.
"""

from __future__ import annotations

import time
from bisect import insort
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import replace

from engine.run.frame import AdmittedAfterRebuild, Arrived, FinishedLate, PoolRebuilt, StepHeader, TokenHistory
from engine.run.frame_store import FrameStore
from engine.run.overlap import Landed, Pipeline, StepClock, StepTiming, check_overlap
from engine.run.recipe import POOL_FIELDS, Change, CostModel, Options, Request, RunSpec, checked_change
from engine.run.recorder import Recorder, RequestRecord, batch_view
from engine.run.runner_factory import make_runner
from scheduler import Batch, Config, RequestRejected, Sequence, make_scheduler
from scheduler.events import Aborted, Event
from scheduler.factory import runner_config, runner_pools

PROGRESS = (FinishedLate.kind, "preempted", "aborted")  # events by which a step that ran nothing still moved on
KEEP = object()  # set_config's "leave the adaptive controller as it is"


class Engine:
    def __init__(self, spec: RunSpec, record: bool = True):
        """The run of `spec` at frame 0 (its changes made at frame 0 made); stepping on makes each of the spec's
        other changes at its frame."""
        config = spec.config
        check_overlap(config, spec.overlap)
        self.spec = replace(spec, changes=())  # the recipe so far: each change is added as it is made
        self._scheduled: deque[Change] = deque()  # changes still to make, at their frames (see follow)
        self.record = record
        self.adaptive = spec.adaptive
        self.adaptive_sizes: list[int | None] = []  # max_num_seqs the controller chose after each step
        self._adaptive_script: list[int | None] = []  # choices a replay repeats instead of deciding
        self.overlap = spec.overlap
        self._pipeline: Pipeline | None = None  # the model's worker thread, made at the first overlapped step
        self._sim_clock, self._wall_clock = StepClock(), StepClock()
        self._clock_origin = self._left_at = time.perf_counter()  # the wall clock skips the time between steps
        self.cost = spec.cost
        self.runner = make_runner(spec.runner, runner_config(spec.scheduler, config), spec.seed,
                                  runner_pools(spec.scheduler, config))
        if spec.runner != "fake" and config.eos != self.runner.eos_token_id:
            config = replace(config, eos=self.runner.eos_token_id)  # the model's own end-of-sequence token
        self.config = config
        self.scheduler = make_scheduler(spec.scheduler, config)
        self.step_count = 0
        self.sim_time_s = self._wall_time_s = 0.0  # the simulated clock, and the wall clock of engine work
        self.wall_schedule_s = self.wall_model_s = 0.0  # totals over the run, as in the frames
        self.requests: list[RequestRecord] = []  # by request id
        self._pending = deque(sorted(spec.workload, key=lambda r: r.arrival))  # stable: workload order in a step
        self._last_batch_idle = False
        self._events: list = []  # events that happened between steps, reported in the next frame
        self._requeued_by_rebuild: set[int] = set()  # their next admission is an AdmittedAfterRebuild
        self.frames = FrameStore(decided_by=self.scheduler.info.decided_under(spec.config))
        self._recorder = Recorder(self.frames, self.requests)
        self._recorder.reset_pool(self.scheduler.pool)
        arrived = self._admit_arrivals(through=0)  # frame 0 shows the requests that arrive at the start
        if record:
            idle = Batch([], (), "idle")
            self._record_frame(idle, batch_view(idle), arrived, 0.0, 0.0)
        self.follow(spec, 0)

    @property
    def runner_kind(self) -> str:
        return self.spec.runner

    @property
    def config_changes(self) -> list[tuple[int, dict]]:
        """The config changes made so far, as (frame, settings)."""
        return [(c.step, c.settings) for c in self.spec.changes if c.kind == "config"]

    # -- changes ---------------------------------------------------------------------------------------

    def change(self, change: Change):
        """Make `change` now, between steps (its `step` must be this frame): a request joins the waiting queue
        at the next step; config fields and options apply from the next step on (see the module docstring).
        Raises ChangeError or ConfigError for a change that cannot be made, changing nothing."""
        if change.step != self.step_count:
            raise ValueError(f"a change made at frame {change.step} reached the run at frame {self.step_count}")
        if change.kind == "request":
            insort(self._pending, change.payload, key=lambda r: r.arrival)
        else:
            self._reconfigure(change.settings)
            if self.step_count == 0:  # frame 0's settings are the run's own, the release it is decided under too
                self.frames.decided_by = self.scheduler.info.decided_under(self.config)
        self.spec = replace(self.spec, changes=(*self.spec.changes, change))

    def add_request(self, request: Request):
        """Add a request now, between steps: it joins the waiting queue at the next step."""
        self.change(Change.request(self.step_count, request))

    def set_config(self, cost: CostModel | None = None, overlap: bool | None = None, adaptive=KEEP, **changes):
        """Change config fields, the simulated clock's cost model, overlapped scheduling or the adaptive
        controller (None: off) from the next step on; see the module docstring for what a change does.
        Raises ConfigError for an invalid config, changing nothing."""
        options = {"cost": cost, "overlap": overlap} | ({} if adaptive is KEEP else {"adaptive": adaptive})
        self.change(Change.config(self.step_count, changes | {k: v for k, v in options.items()
                                                              if v is not None or k == "adaptive"}))

    def options_at(self, step: int) -> Options:
        """The options the step after frame `step` runs under: the initial ones, with the changes made up to then."""
        return self.spec.options_at(step)

    def _make_scheduled_changes(self):
        """Make the recipe's changes stamped with this frame."""
        while self._scheduled and self._scheduled[0].step == self.step_count:
            self.change(self._scheduled.popleft())

    def _reconfigure(self, settings: dict):
        new, options = checked_change(self.config, Options(self.overlap, self.adaptive), settings)
        self.cost = settings.get("cost") or self.cost
        self.overlap, self.adaptive = options
        self._land_in_flight()  # a change applies to a run with nothing in flight
        if any(getattr(new, f) != getattr(self.config, f) for f in POOL_FIELDS):
            self._rebuild(new)
        else:
            self._swap(new)

    def _swap(self, new: Config):
        """Change scheduling fields only: the queues and the KV cache stay as they are."""
        self.scheduler.reconfigure(new)
        self.config = new

    def _rebuild(self, config: Config):
        """A new pool: a new scheduler and runner; running requests, then waiting ones, are queued again."""
        old = self.scheduler
        self.runner = make_runner(self.runner_kind, runner_config(self.spec.scheduler, config), self.spec.seed,
                                  runner_pools(self.spec.scheduler, config))
        self.scheduler = make_scheduler(self.spec.scheduler, config)
        self._recorder.reset_pool(self.scheduler.pool)
        requeued = [*old.running_seqs, *old.waiting_seqs]
        self._events.append(PoolRebuilt(-1, config.num_kvcache_blocks, config.kvcache_block_size,
                                        tuple(s.seq_id for s in requeued), len(old.running_seqs)))
        self._requeued_by_rebuild.update(s.seq_id for s in old.running_seqs)
        self._events += self.scheduler.requeue(requeued)  # aborts of those that no longer fit, in the next frame
        self._recorder.touch(s.seq_id for s in requeued)
        self.config = config

    # -- stepping --------------------------------------------------------------------------------------

    @property
    def is_finished(self) -> bool:
        return not self._pending and self.scheduler.is_finished()

    def step(self):
        """Run one step: arrivals, schedule, run (or hand over, overlapped), clocks, record, adapt. Its frame is
        then `frames[-1]`."""
        self.step_count += 1
        self._clock_origin += time.perf_counter() - self._left_at
        events, self._events = self._events + self._admit_arrivals(through=self.step_count - 1), []  # added by hand
        overlapped = self._pipeline is not None and self._pipeline.busy
        t0 = self._now()
        batch = self.scheduler.schedule()  # overlapped: while the model still computes the step before
        schedule_s = self._now() - t0
        events += batch.events
        landed_model_s = None
        if overlapped:
            landed = self._land(batch)
            batch, landed_model_s = landed.batch, landed.model[1] - landed.model[0]
            events += [FinishedLate(seq.seq_id, freed) for seq, freed in landed.late]
        # Block tables as schedule() left them, copied: postprocess may change a table in place (rejected drafts, or
        # a row re-pointed at the tree's copy of its prefix: `SchedulerInfo.repoints_tables`); the recorder reads
        # the tables again after it.
        tables = [s.block_table[:] for s in batch.seqs]
        scheduled = batch_view(batch)
        post_events, post_s, model_s = self._run(batch, landed_model_s)
        events += post_events
        arrived = self._admit_arrivals(through=self.step_count)  # shown waiting in this frame, run from the next step
        events += arrived
        if self.overlap and self.is_finished:
            self._land_in_flight()  # the run ends here: its last tokens land before its last frame
        timing, latency_s = self._advance_clocks(batch, schedule_s, model_s, post_s, overlapped)
        self._tell_rebuild_admissions(events)
        # a step that preempted or aborted a request changed the queues and freed blocks, so the next may run: the
        # twin ends its loop over running requests when one preempts itself, and the article's aborts a request
        # that outgrew the pool in its decode loop, each in a step that may run nothing
        self._last_batch_idle = not batch.seqs and not arrived and not any(e.kind in PROGRESS for e in events)
        if self.record:
            self._record_frame(batch, scheduled, events, schedule_s + post_s, model_s, tables, timing)
        self._adapt(batch, latency_s)
        self._make_scheduled_changes()
        self._left_at = time.perf_counter()

    def _run(self, batch: Batch, landed_model_s: float | None) -> tuple[list, float, float]:
        """Run the batch: the model, then postprocess; overlapped, hand it to the model's worker and postprocess
        it ahead. Returns postprocess's events and the seconds of postprocess and of the model (overlapped:
        of the step that landed, as this one's is known only when it lands). The blocks it copies between pools are
        copied first (the step before has landed, overlapped too)."""
        start = self._now()
        if batch.block_copies:
            self.runner.copy_blocks(batch.block_copies)
        if self.overlap:
            self._pipeline = self._pipeline or Pipeline(self._now)
            events = self._pipeline.launch(self.scheduler, self.runner, batch) if batch.seqs else []
            return events, self._now() - start, landed_model_s or 0.0
        tokens = self.runner.run(batch.seqs)
        ran = self._now()
        events = self.scheduler.postprocess(batch.seqs, tokens)
        return events, self._now() - ran, ran - start

    def _advance_clocks(self, batch: Batch, schedule_s: float, model_s: float, post_s: float,
                        overlapped: bool) -> tuple[StepTiming, float]:
        """Lay the step out on the simulated and the wall clock. Returns the timing the frame shows and the
        step's latency the adaptive controller reads: the simulated ones on the fake runner, else the wall's."""
        cost = self.cost
        sim = self._sim_clock.step(self.step_count, cost.schedule_s, cost.model_time(batch.num_tokens),
                                   cost.postprocess_s, cost.handoff_s, self.overlap, overlapped)
        wall = self._wall_clock.step(self.step_count, schedule_s, model_s, post_s, 0.0, self.overlap, overlapped)
        sim_step_s, wall_step_s = sim.end - self.sim_time_s, wall.end - self._wall_time_s
        self.sim_time_s, self._wall_time_s = sim.end, wall.end
        self.wall_schedule_s += schedule_s + post_s
        self.wall_model_s += model_s
        return (sim, sim_step_s) if self.runner_kind == "fake" else (wall, wall_step_s)

    def _now(self) -> float:
        """Seconds the engine has spent stepping: the time between steps (a learner reading a frame) skipped."""
        return time.perf_counter() - self._clock_origin

    def _land(self, next_batch: Batch | None) -> Landed:
        assert self._pipeline is not None  # a step lands only after one was launched
        landed = self._pipeline.land(self.scheduler, next_batch)
        self._recorder.touch(seq.seq_id for seq in landed.eos_at_limit)  # finish reason now "eos"
        return landed

    def _land_in_flight(self):
        """Land the step in flight now; requests it finishes late are reported in the next frame."""
        if self._pipeline is not None and self._pipeline.busy:
            self._events += [FinishedLate(seq.seq_id, freed) for seq, freed in self._land(None).late]

    def run(self, steps: int | None = None, on_step: Callable[[int], None] | None = None) -> str:
        """Step until the run ends, or `steps` more steps. Calls `on_step(step)` after each step.
        Returns why it stopped: "finished", "steps", "stalled" or "max_steps"."""
        target = None if steps is None else self.step_count + steps
        while True:
            if self.is_finished:
                return "finished"
            if target is not None and self.step_count >= target:
                return "steps"
            if self.step_count >= self.spec.max_steps:
                return "max_steps"
            self.step()
            if on_step:
                on_step(self.step_count)
            if self.stalled:
                return "stalled"

    @property
    def stalled(self) -> bool:
        """Nothing ran and nothing will arrive, yet requests remain: every later step would be the same."""
        return self._last_batch_idle and not self._pending and not self.scheduler.is_finished()

    # -- replay ----------------------------------------------------------------------------------------

    def advance_to(self, k: int) -> Engine:
        """Step until frame k is recorded (making the recipe's changes at their frames); returns the engine."""
        while self.step_count < k:
            self.step()
        return self

    def follow(self, spec: RunSpec, k: int, adaptive_script: Iterable[int | None] = ()) -> Engine:
        """Go on as the run of `spec` up to frame k: the one way a run is replayed, from frame 0 (`Engine(spec)`)
        or from a copy of an engine standing on that run (a checkpoint). Such an engine has made the first of
        spec's changes and none of the others is stamped before its frame; else ValueError."""
        made, rest = spec.changes[:len(self.spec.changes)], spec.changes[len(self.spec.changes):]
        if (replace(spec, changes=made) != self.spec or any(c.step < self.step_count for c in rest)
                or not self.step_count <= k):
            raise ValueError(f"this engine, at frame {self.step_count}, is not on the run asked for")
        self._scheduled = deque(rest)
        self._adaptive_script = list(adaptive_script)
        self._make_scheduled_changes()
        return self.advance_to(k)

    def replay(self, k: int) -> Engine:
        """A new engine re-run from this run's recipe up to frame k (deterministic: same frames again), the
        changes made at frame k not yet made."""
        if not 0 <= k <= self.step_count:
            raise IndexError(f"frame {k} does not exist; the run is at frame {self.step_count}")
        return Engine(self.spec.until(k), self.record).follow(self.spec.until(k), k, self.adaptive_sizes[:k])

    def branch(self, k: int, **changes) -> Engine:
        """Frames 0..k of this run, then the rest under `changes` (config fields and/or `cost`, see set_config)."""
        engine = self.replay(k)
        if changes:
            engine.set_config(**changes)
        return engine

    # -- internals -------------------------------------------------------------------------------------

    def _admit_arrivals(self, through: int) -> list[Event]:
        """Queue the requests whose arrival step is `through` or earlier; one that can never run is aborted with
        the reason (by the scheduler), never lost. A request arriving at step a joins the waiting queue at the end
        of step a (frame a shows it waiting, as the InfraTech notebook's frames do) and can run from step a + 1;
        one added by hand after frame k joins at the start of step k + 1."""
        events: list[Event] = []
        while self._pending and self._pending[0].arrival <= through:
            seq = self._new_sequence(self._pending.popleft())
            events.append(Arrived(seq.seq_id, seq.num_prompt_tokens, seq.priority))
            try:
                self.scheduler.add(seq)
            except RequestRejected as rejected:
                events.append(Aborted(seq.seq_id, rejected.message))
        return events

    def _new_sequence(self, request: Request) -> Sequence:
        rid = len(self.requests)
        if request.prompt is not None:
            token_ids = self.runner.encode_prompt(request.prompt, chat=request.chat)
        else:
            assert request.prompt_token_ids is not None  # a request has one of them (Request.__post_init__)
            token_ids = list(request.prompt_token_ids)
        seq = Sequence(token_ids, request.sampling_params(), priority=request.priority, arrival=request.arrival,
                       seq_id=rid)
        with_text = request.prompt is not None or self.runner_kind != "fake"
        history = TokenHistory(seq.token_ids, self.runner.token_pieces if with_text else None)
        self.requests.append(RequestRecord(request, seq, history))
        return seq

    def _adapt(self, batch: Batch, latency_s: float):
        """Set max_num_seqs for the next step (an idle step measures nothing and changes nothing)."""
        if self.adaptive is None:
            self.adaptive_sizes.append(None)
            return
        size = self.config.max_num_seqs
        if len(self.adaptive_sizes) < len(self._adaptive_script):
            scripted = self._adaptive_script[len(self.adaptive_sizes)]
            assert scripted is not None  # the run it replays had the controller on at this step too
            size = scripted
        elif batch.seqs:
            size = min(self.adaptive.next_max_num_seqs(size, latency_s, len(batch.seqs)),
                       self.config.max_num_batched_tokens)
        self.adaptive_sizes.append(size)
        if size != self.config.max_num_seqs:
            self._swap(replace(self.config, max_num_seqs=size))

    def _tell_rebuild_admissions(self, events):
        """An admission the pool's rebuild caused is an AdmittedAfterRebuild: a recompute, not a preemption's."""
        for i, e in enumerate(events):
            if e.kind == "admitted" and e.seq_id in self._requeued_by_rebuild:
                self._requeued_by_rebuild.discard(e.seq_id)
                events[i] = AdmittedAfterRebuild(e.seq_id, e.num_tokens, e.num_cached_tokens, e.recompute)

    def _record_frame(self, batch, scheduled, events, wall_schedule_s, wall_model_s, tables=(), timing=None):
        header = StepHeader(self.step_count, self.sim_time_s, wall_schedule_s, wall_model_s, self.config,
                            scheduled, tuple(events), timing, self.scheduler.panels(), batch.block_copies)
        self._recorder.record(self.scheduler, batch, list(tables), header)
