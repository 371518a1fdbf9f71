"""An assignment's goals: what a student's run must show, each kind a small checker registered in `GOALS`.

A goal is judged on a run's frames up to the one shown, gathered once into `Evidence`. A run is judged on its
end: a goal that only the end can decide is `OPEN` until then, with a reason saying how it stands so far; one
that the frames already decide (a request preempted, a deadline passed) is `PASS` or `FAIL` at once. Every
reason is a `Message`, so it reads in the student's language ("request 3 finished at step 24, after step 20").

A kind declares its parameters (`Param`: type, range, the words of a choice) and its check
`check(evidence, **params) -> Verdict`; engine/inputs/assignment.py reads them from a scenario file.

A coding assignment (session/coding.py) judges a learner's scheduler run in the sandbox: its evidence says why the
run stopped short (`stopped`: an invariant broken, their code raised, a limit reached: the `contract` goal), and
carries the runs of built-in kinds on the same workload (`baselines`, run in-process by the grader) that a goal
relative to one (`latency_vs`) reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from engine.run.frame import Frame
from engine.run.metrics import LATENCY_SPANS, RequestMetrics, RunMetrics, percentile, run_metrics
from i18n import Message
from scheduler.factory import SCHEDULER_KINDS, scheduler_info

PASS, FAIL, OPEN = "pass", "fail", "open"


@dataclass(frozen=True)
class Verdict:
    state: str  # PASS, FAIL or OPEN (the run has not ended and the frames so far do not decide it)
    reason: Message


@dataclass(frozen=True)
class Evidence:
    """What the goals read of a run, frames 0..step: each request's metrics, the run's, the preemptions and the
    most KV blocks held at once; `ended` when nothing more can happen after `step`."""
    step: int
    ended: bool
    run: RunMetrics
    requests: tuple[RequestMetrics, ...]
    preemptions: tuple[tuple[int, int], ...]  # (step, request preempted), in order
    peak_blocks: int  # blocks held by requests (a free cached block is not held)
    peak_step: int
    stopped: Message | None = None  # why the run stopped before its end (a learner's run: session/coding.py)
    baselines: dict[str, Evidence] = field(default_factory=dict)  # built-in kind -> its run on the same workload

    def request(self, rid: int) -> RequestMetrics | None:
        """Request `rid`'s metrics; None before it arrives."""
        return self.requests[rid] if rid < len(self.requests) else None


def gather(frames: Iterable[Frame], ended: bool, stopped: Message | None = None,
           baselines: dict[str, Evidence] | None = None) -> Evidence:
    """The evidence of `frames` (0..n, in order) in one pass; `ended` says the run is over at frame n (`stopped`:
    why it stopped there short of its end); `baselines`: the evidence of built-in kinds' runs of the workload."""
    preemptions, peak = [], [0, 0]

    def noting(frames):
        for frame in frames:
            preemptions.extend((frame.step, e.seq_id) for e in frame.events_of("preempted"))
            held = frame.config.num_kvcache_blocks - frame.metrics.num_free_blocks
            if held > peak[0]:
                peak[:] = held, frame.step
            yield frame

    run, requests = run_metrics(noting(frames))
    return Evidence(run.num_steps, ended, run, tuple(requests), tuple(preemptions), peak[0], peak[1], stopped,
                    baselines or {})


@dataclass(frozen=True)
class Param:
    """A goal's parameter: its type, its range (`high` None: bounded elsewhere, e.g. a request id by the workload)
    and, for a choice, the values allowed."""
    type: type
    low: float = 0
    high: float | None = None
    choices: tuple[str, ...] = ()
    required: bool = True


@dataclass(frozen=True)
class GoalKind:
    params: dict[str, Param]
    check: Callable[..., Verdict]
    words: Callable[..., Message]  # what the goal asks, from its parameters
    coding: bool = False  # judged only on a learner's sandboxed run (why it stopped, the baselines' runs)


GOALS: dict[str, GoalKind] = {}  # kind -> its parameters, checker and words (by default `goal.<kind>` in i18n/)
STATS = ("p50", "p90", "p95", "p99", "mean", "max")
MOST_STEPS = 100_000


def goal(kind: str, words: Callable[..., Message] | None = None, coding: bool = False, **params: Param):
    """Register `check` as the checker of goals of `kind`, said by `words(**params)` (`coding`: a coding
    assignment's only)."""
    def register(check):
        GOALS[kind] = GoalKind(params, check, words or (lambda **values: Message(f"goal.{kind}", **values)), coding)
        return check
    return register


def _not_yet(ev: Evidence, so_far: Message) -> Verdict:
    return Verdict(OPEN, Message("goal.open", step=ev.step, so_far=so_far))


@goal("finish_by", request=Param(int), step=Param(int, 1, MOST_STEPS))
def finish_by(ev: Evidence, request: int, step: int) -> Verdict:
    r = ev.request(request)
    if r is not None and r.status == "finished" and r.finish_step is not None:
        state = PASS if r.finish_step <= step else FAIL
        return Verdict(state, Message(f"goal.finished_{state}", request=request, at=r.finish_step, step=step))
    if r is not None and r.status == "aborted":
        return Verdict(FAIL, Message("goal.aborted", request=request, at=r.finish_step))
    if ev.step >= step or ev.ended:
        return Verdict(FAIL, Message("goal.not_finished_by", request=request, step=step))
    return _not_yet(ev, Message("goal.still_running", request=request))


@goal("all_finish_by", step=Param(int, 1, MOST_STEPS))
def all_finish_by(ev: Evidence, step: int) -> Verdict:
    if aborted := [r for r in ev.requests if r.status == "aborted"]:
        return Verdict(FAIL, Message("goal.aborted", request=aborted[0].id, at=aborted[0].finish_step))
    finished_at = {r.id: r.finish_step for r in ev.requests if r.status == "finished" and r.finish_step is not None}
    late = {rid: at for rid, at in finished_at.items() if at > step}
    if late:
        last = max(late, key=late.__getitem__)
        return Verdict(FAIL, Message("goal.finished_fail", request=last, at=late[last], step=step))
    unfinished = [r.id for r in ev.requests if r.status != "finished"]
    if ev.ended and not unfinished:
        return Verdict(PASS, Message("goal.all_finished", at=max(finished_at.values(), default=0), step=step))
    if ev.step >= step or ev.ended:
        return Verdict(FAIL, Message("goal.not_all_finished", ids=", ".join(map(str, unfinished)) or "-",
                                     step=step))
    return _not_yet(ev, Message("goal.unfinished_so_far", n=len(unfinished)))


@goal("no_preemption", request=Param(int, required=False),
      words=lambda request=None: Message("goal.no_preemption") if request is None
      else Message("goal.no_preemption_of", request=request))
def no_preemption(ev: Evidence, request: int | None = None) -> Verdict:
    hits = [(at, rid) for at, rid in ev.preemptions if request is None or rid == request]
    if hits:
        return Verdict(FAIL, Message("goal.preempted", request=hits[0][1], at=hits[0][0], n=len(hits)))
    said = Message("goal.none_preempted") if request is None else Message("goal.not_preempted", request=request)
    return Verdict(PASS, said) if ev.ended else _not_yet(ev, said)


def stat_of(values: list[float], stat: str) -> float | None:
    """A statistic of `values` (one of STATS); None when there are none."""
    if not values:
        return None
    if stat == "mean":
        return sum(values) / len(values)
    return max(values) if stat == "max" else percentile(values, float(stat[1:]))


def latency_name(metric: str, stat: str) -> Message:
    """"TTFT p95", "mean queueing delay"."""
    return Message(f"goal.stat.{stat}", metric=Message(f"compare.latency.{metric}"))


def latency_of(ev: Evidence, metric: str, stat: str) -> float | None:
    """A statistic of a latency span over the requests that had one (None: none had)."""
    return stat_of([span.steps for r in ev.requests if (span := getattr(r, metric)) is not None], stat)


@goal("latency", metric=Param(str, choices=LATENCY_SPANS), stat=Param(str, choices=STATS),
      at_most=Param(float, 0, MOST_STEPS),
      words=lambda metric, stat, at_most: Message("goal.latency", what=latency_name(metric, stat),
                                                  at_most=f"{at_most:g}"))
def latency(ev: Evidence, metric: str, stat: str, at_most: float) -> Verdict:
    value = latency_of(ev, metric, stat)
    what = latency_name(metric, stat)
    if value is None:
        said = Message("goal.no_latency", what=what)
        return Verdict(FAIL, said) if ev.ended else _not_yet(ev, said)
    if not ev.ended:
        return _not_yet(ev, Message("goal.latency_so_far", what=what, value=f"{value:.1f}"))
    state = PASS if value <= at_most else FAIL
    return Verdict(state, Message(f"goal.latency_{state}", what=what, value=f"{value:.1f}", limit=f"{at_most:g}"))


@goal("peak_blocks", at_most=Param(int, 1, MOST_STEPS))
def peak_blocks(ev: Evidence, at_most: int) -> Verdict:
    if ev.peak_blocks > at_most:
        return Verdict(FAIL, Message("goal.blocks_fail", n=ev.peak_blocks, at=ev.peak_step, limit=at_most))
    said = Message("goal.blocks_pass", n=ev.peak_blocks, at=ev.peak_step, limit=at_most)
    return Verdict(PASS, said) if ev.ended else _not_yet(ev, said)


@goal("throughput", at_least=Param(float, 0, MOST_STEPS))
def throughput(ev: Evidence, at_least: float) -> Verdict:
    value = f"{ev.run.throughput_tokens_per_step:.2f}"
    if not ev.ended:
        return _not_yet(ev, Message("goal.throughput_so_far", value=value))
    state = PASS if ev.run.throughput_tokens_per_step >= at_least else FAIL
    return Verdict(state, Message(f"goal.throughput_{state}", value=value, limit=f"{at_least:g}"))


@goal("contract", coding=True)
def contract(ev: Evidence) -> Verdict:
    """Every invariant held after every step, and the code ran to the end within its limits."""
    if ev.stopped is not None:
        return Verdict(FAIL, ev.stopped)
    said = Message("goal.contract_held", step=ev.step)
    return Verdict(PASS, said) if ev.ended else _not_yet(ev, said)


def kind_name(kind: str) -> Message:
    """"the article's scheduler"."""
    return Message(scheduler_info(kind).run_name)


@goal("latency_vs", coding=True, metric=Param(str, choices=LATENCY_SPANS), stat=Param(str, choices=STATS),
      baseline=Param(str, choices=SCHEDULER_KINDS),
      words=lambda metric, stat, baseline: Message("goal.latency_vs", what=latency_name(metric, stat),
                                                   baseline=kind_name(baseline)))
def latency_vs(ev: Evidence, metric: str, stat: str, baseline: str) -> Verdict:
    """Below the built-in kind `baseline`'s on the same workload (its run: `Evidence.baselines`): a learner's
    change of the baseline's scheduler must improve on it, not merely leave it as it was."""
    what, theirs = latency_name(metric, stat), ev.baselines.get(baseline)
    if theirs is None:  # a run judged without the baseline's (a scenario's assignment): nothing to compare with
        return Verdict(FAIL, Message("goal.no_baseline", baseline=kind_name(baseline)))
    value, limit = latency_of(ev, metric, stat), latency_of(theirs, metric, stat)
    if value is None or limit is None:
        said = Message("goal.no_latency", what=what)
        return Verdict(FAIL, said) if ev.ended else _not_yet(ev, said)
    if not ev.ended:
        return _not_yet(ev, Message("goal.latency_so_far", what=what, value=f"{value:.1f}"))
    state = PASS if value < limit else FAIL
    return Verdict(state, Message(f"goal.latency_vs_{state}", what=what, value=f"{value:.1f}", limit=f"{limit:.1f}",
                                  baseline=kind_name(baseline)))
