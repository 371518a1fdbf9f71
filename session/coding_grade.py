"""The server grades a coding hand-in (session/coding.py), off the student's click: for each of the assignment's
workloads their code runs in the sandbox (sandbox.run_learner: the worker's trace, checked and refereed on the
server), and each goal is judged on that trace (engine/inputs/goals.py): `contract` on why the run stopped short
(an invariant broken, their code raised, a limit reached), a goal relative to a built-in kind on that kind's run of
the same workload, run here in-process (the app's own scheduler, kept once per workload and kind). Workloads run on
the fake model, whatever their scenario's runner: a class's grading never waits on the real model.

`Grader` runs the gradings of this process on a few threads (the sandbox caps its own workers besides); the class
store's grading mark keeps one per student at a time (session/coding.py)."""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from engine.inputs.goals import FAIL, OPEN, Evidence, Verdict, gather
from engine.inputs.scenario import SCENARIOS_DIR, Scenario, load_scenario
from engine.run.engine import Engine
from engine.run.recipe import RunSpec
from engine.traces.trace import read_trace
from i18n import Message, MessageError
from session.coding import CodingAssignment, CodingError, HandIn

GRADERS = 2  # gradings at once in one process
BUSY = "sandbox.busy"  # the sandbox's answer while all its workers are taken: asked again, not a grade
BUSY_WAITS_S = (1, 2, 4, 8, 15, 30, 60)  # the waits before asking again; then the student is told to hand in again
log = logging.getLogger(__name__)


def run_learner(source: str, class_name: str, spec: RunSpec):
    """The sandbox's run of a learner's scheduler (imported at first use: the sandbox's worker is not needed
    before a class grades)."""
    from sandbox import run_learner as sandboxed
    return sandboxed(source, class_name, spec)


@functools.lru_cache(maxsize=64)
def workload(name: str) -> Scenario:
    """A scenario preset by name, on the fake model (LookupError: no such preset)."""
    path = SCENARIOS_DIR / f"{name}.toml"
    if not path.is_file():
        raise LookupError(name)
    return load_scenario(path, runner="fake")


@functools.lru_cache(maxsize=64)
def baseline(name: str, kind: str) -> Evidence:
    """The built-in `kind`'s run of the workload `name`, to its end."""
    engine = Engine(replace(workload(name).spec, scheduler=kind))
    engine.run()
    return gather(engine.frames, ended=True)


def why_stopped(outcome) -> Message | None:
    """Why a sandboxed run stopped short of its end, as a grade says it (sandbox Outcome.stopped_short)."""
    return outcome.stopped_short("coding.broken_at")


def judged(assignment: CodingAssignment, name: str, outcome) -> list[tuple[Message, Verdict]]:
    """Each goal's verdict on the workload `name`, from the sandbox's `outcome` of the learner's run of it. A run
    that stopped short meets no goal its end would decide (the frames before may already decide one: a preemption)."""
    stopped = why_stopped(outcome)
    if outcome.trace is None:  # nothing ran: every goal fails for that reason
        verdicts = [(goal, Verdict(FAIL, stopped or Message("coding.no_trace"))) for goal in assignment.goals]
    else:
        frames, _ = read_trace(json.dumps(outcome.trace))
        kinds = {value for goal in assignment.goals for key, value in goal.params if key == "baseline"}
        evidence = gather(frames, ended=stopped is None, stopped=stopped,
                          baselines={k: baseline(name, k) for k in kinds})
        verdicts = [(goal, _decided(goal.check(evidence))) for goal in assignment.goals]
    return [(Message("coding.on_workload", workload=name, goal=goal.words), verdict) for goal, verdict in verdicts]


def _decided(verdict: Verdict) -> Verdict:
    """A goal left open by a run that stopped short: not met, saying how it stood."""
    return Verdict(FAIL, Message("coding.cut_short", reason=verdict.reason)) if verdict.state == OPEN else verdict


def sandboxed(run, source: str, class_name: str, spec: RunSpec, sleep=time.sleep):
    """`run`'s outcome, asked again while the sandbox is busy (BUSY_WAITS_S); CodingError once it stays busy."""
    for wait in (*BUSY_WAITS_S, None):
        outcome = run(source, class_name, spec)
        if outcome.stopped is None or outcome.stopped.key != BUSY:
            return outcome
        if wait is not None:
            sleep(wait)
    raise CodingError("coding.busy")


def grade(assignment: CodingAssignment, hand: HandIn, run=run_learner, sleep=time.sleep
          ) -> tuple[tuple[Message, Verdict], ...]:
    """Every goal's verdict on every workload of `assignment` for the code handed in (`run`: the sandbox's)."""
    return tuple(verdict for name in assignment.workloads for verdict in judged(
        assignment, name, sandboxed(run, hand.source, hand.class_name, workload(name).spec, sleep)))


def run_again(assignment: CodingAssignment, hand: HandIn, name: str, run=run_learner):
    """The hand-in's code run again in the sandbox on the workload `name`, for the stage: the sandbox's outcome
    (its refereed trace, and why it stopped short)."""
    return sandboxed(run, hand.source, hand.class_name, workload(name).spec)


class Grader:
    """This process's gradings, each on one of GRADERS threads."""

    def __init__(self, run=run_learner, workers: int = GRADERS, sleep=time.sleep):
        self._run, self._sleep = run, sleep
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="grader")

    def start(self, coding, hand: HandIn, done=lambda: None):
        """Grade `hand` (a hand-in filed in `coding`, session/coding.py `Coding`) off this thread; `done()` after
        its verdicts, or why it could not be graded, are filed. The future is returned (a test waits on it)."""
        return self._pool.submit(self._grade, coding, hand, done)

    def _grade(self, coding, hand: HandIn, done):
        try:
            assignment = coding.get(hand.assignment)
            if assignment is None:
                coding.failed(hand, Message("coding.no_assignment", name=hand.assignment))
            else:
                coding.file(hand, grade(assignment, hand, self._run, self._sleep))
        except MessageError as e:  # the class ended, too many names: the student is told (when they can be)
            _quietly(coding.failed, hand, e.message)
        except Exception:  # a fault of the server's own: logged, and the student may hand in again
            log.exception("grading %s failed", hand.id)
            _quietly(coding.failed, hand, Message("coding.grading_failed"))
        finally:
            done()


def _quietly(call, *args):
    """`call(*args)`, where the class may have ended meanwhile (then nobody is left to tell)."""
    with contextlib.suppress(MessageError):
        call(*args)


@functools.cache
def grader() -> Grader:
    """The process's grader, made at first use."""
    return Grader()
