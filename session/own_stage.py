"""The learner's own scheduler as a stage of the policy lab, beside the built-in kinds on one workload.

Its run is made in the sandbox (`sandbox.run_learner`), never in this process, on the very RunSpec the lab's other
stages run, and comes back as a refereed trace; the lab then shows, measures and tells it as any stage made from a
trace (engine/analysis/compare.py `recorded_run`). It is made once per code and spec: the outcome is kept in the run
cache under their digest, bounded like the runs; not one a limit stopped, or that found the sandbox busy: that says
what one try met, and the next tries again. A run that broke an invariant, raised, or hit a limit after some
steps is a stage up to its last frame, ended by what stopped it; one with no frame to show (it did not compile, named
no scheduler, or was stopped before its first step) is said instead of a stage, with their traceback where it
raised.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from engine.analysis.compare import ConfigRun, recorded_run
from engine.run.recipe import RunSpec
from engine.traces.trace import trace_store
from i18n import Message, text
from sandbox import Outcome, run_learner
from scheduler.factory import scheduler_info
from session.own_scheduler import OwnScheduler
from session.run_cache import RunCache, frames_bytes, shared_run_cache


@dataclass(frozen=True)
class OwnStage:
    """What the lab shows of the learner's run: its stage (None where it has no frame), what stopped it early (said
    on the stage, or instead of it) and, where their code raised, its traceback (their frames only)."""
    run: ConfigRun | None
    said: Message | None = None
    traceback: str | None = None


def own_address(own: OwnScheduler, spec: RunSpec) -> str:
    """Where the run cache files the outcome of `own` on `spec`: the digest of the code, its class and the spec."""
    made_of = "\0".join((own.source, own.class_name, spec.address))
    return "own:" + hashlib.sha256(made_of.encode()).hexdigest()


def outcome_bytes(outcome: Outcome) -> int:
    """An estimate of what a kept outcome holds: its trace's frames, as a run's are estimated."""
    trace = outcome.trace
    return 0 if trace is None else frames_bytes(len(trace["frames"]), len(trace["requests"]))


def own_stage(own: OwnScheduler, spec: RunSpec, lang: str, labels: list[str],
              cache: RunCache | None = None) -> OwnStage:
    """The learner's stage on `spec` (run in the sandbox unless the cache holds it), named by its kind's run name
    in `lang`, told apart from the other stages' `labels`."""
    cache, address = cache or shared_run_cache(), own_address(own, spec)
    outcome = cache.made(address, lambda: run_learner(own.source, own.class_name, spec), outcome_bytes)
    if outcome.stopped is not None:  # a limit met, or the sandbox busy: what this try met, not kept for the next
        cache.forget(address)
    return stage_of(outcome, lang, labels)


def stage_of(outcome: Outcome, lang: str, labels: list[str]) -> OwnStage:
    """The lab's stage of a sandboxed run's outcome (see `OwnStage`)."""
    said = outcome.stopped_short("lab.own_broken")
    traceback = outcome.fault.text if outcome.fault is not None else None
    trace = outcome.trace
    if trace is not None and outcome.broken is not None:  # the frames before the step that broke (the worker cut
        trace = {**trace, "frames": trace["frames"][:outcome.broken.step]}  # them; the referee's verdict may not)
    if trace is None or not trace["frames"] or outcome.kind is None:  # then something stopped it: `said` says what
        return OwnStage(None, said, traceback)
    name = text(lang, scheduler_info(outcome.kind).run_name)
    label = name if name not in labels else text(lang, "lab.own_label", name=name)
    return OwnStage(recorded_run(label, trace, trace_store(trace), ended=said), said, traceback)
