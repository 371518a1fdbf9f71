"""A learner's run in the sandbox (`sandbox.run_learner`), off the page's script thread: the page stays drawn while
the worker runs (the learner reads, edits, and is told a second Run must wait), one run at a time per browser
session. When it ends, its trace opens as the stepper opens a trace file (session/lab.py `open_trace`), at the frame
where an invariant broke, and becomes this session's run on the stage."""

from __future__ import annotations

import json
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import streamlit as st

from editor import Marker
from engine.run.limits import SANDBOXES
from engine.run.recipe import RunSpec
from i18n import Message, message_of
from sandbox import Outcome, run_learner
from session.lab import Lab, LabError, open_trace
from session.own_scheduler import OwnScheduler
from ui.errors import LOG
from ui.language import said
from ui.state import feed
from ui.workbench_state import Bench

# As many runs at once as the sandbox takes (engine/run/limits.py SANDBOXES); more wait their turn here, their page
# saying "running" meanwhile (the sandbox would refuse them as busy).
_POOL = ThreadPoolExecutor(max_workers=SANDBOXES, thread_name_prefix="workbench-run")


@dataclass
class Run:
    own: OwnScheduler  # what ran: the source and class as they were when Run was pressed
    future: Future
    started: float
    outcome: Outcome | None = None
    lab: Lab | None = None  # its trace on the stage
    error: Message | None = None  # why there is no outcome or no stage (said, never raised)

    @property
    def busy(self) -> bool:
        return self.outcome is None and self.error is None

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started


def start(here: Bench, own: OwnScheduler, spec: RunSpec) -> bool:
    """Send `own` to the sandbox on `spec`; False (nothing started) while this session's last run is going on."""
    if isinstance(here.run, Run) and here.run.busy:
        return False
    here.run = Run(own, _POOL.submit(run_learner, own.source, own.class_name, spec), time.monotonic())
    return True


def collect(here: Bench) -> Run | None:
    """This session's run, its outcome taken in once it has ended: its fault's line marked in the editor, its trace
    opened as this session's run (at the frame it broke at)."""
    run = here.run
    if not isinstance(run, Run) or not run.busy or not run.future.done():
        return run if isinstance(run, Run) else None
    try:
        run.outcome = run.future.result()
    except Exception as e:  # the sandbox's own failure: said, and logged with its traceback for the developers
        LOG.exception("the sandbox failed on a learner's run")
        run.error = Message("workbench.sandbox_failed", error=message_of(e))
        return run
    fault = run.outcome.fault
    here.mark((Marker(fault.line, said(fault.message)),) if fault is not None and fault.line else ())
    if run.outcome.trace is not None:
        _open(run)
    return run


def _open(run: Run):
    try:
        run.lab = open_trace(json.dumps(run.outcome.trace), run.own.class_name)
    except LabError as e:  # the server checks every trace as it checks a file: one that fails is said
        run.error = e.message
        return
    if run.outcome.broken is not None:
        run.lab.goto(min(run.outcome.broken.step, run.lab.last))
    st.session_state.lab = run.lab
    feed().moved_cursor()
