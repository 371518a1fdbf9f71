"""What the Workbench keeps per browser session, in its own keys of the session state (Streamlit forgets a widget's
state on a page the learner leaves; these stay through reruns, a language switch and other pages): the learner's
scheduler (session/own_scheduler.py), which the policy lab reads through `own_scheduler()`, and the editor's view of
it (`Bench`)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace

import streamlit as st

from editor import Marker
from session.own_scheduler import OwnScheduler
from starters import STARTERS, source

OWN_KEY = "own_scheduler"
BENCH_KEY = "workbench"


@dataclass
class Bench:
    """The editor's side of the learner's scheduler: which text it was last given (`doc_id`: the editor replaces its
    own text only when this changes) and the errors marked in it; the run going on or the last one
    (ui/workbench_run.py)."""
    doc_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    markers: tuple[Marker, ...] = ()
    marker_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    run: object = None  # ui.workbench_run.Run: the run going on, or the last one
    upload_id: str | None = None  # the uploaded file last loaded (an upload is loaded once)
    too_long: bool = False  # the editor's last text was longer than the sandbox runs: not kept

    def mark(self, markers: tuple[Marker, ...]):
        self.markers, self.marker_id = markers, uuid.uuid4().hex


def own_scheduler() -> OwnScheduler | None:
    """The learner's current scheduler in this session (as in the Workbench's editor, run or not); None until the
    learner has opened the Workbench."""
    return st.session_state.get(OWN_KEY)


def bench() -> Bench:
    """This session's Workbench, opened on the first starter the first time."""
    if BENCH_KEY not in st.session_state or OWN_KEY not in st.session_state:
        first = STARTERS[0]
        st.session_state[OWN_KEY] = OwnScheduler(source(first), first.class_name, first.id)
        st.session_state[BENCH_KEY] = Bench()
    return st.session_state[BENCH_KEY]


def load(own: OwnScheduler):
    """A new text for the editor (a starter picked, a file uploaded): shown in place of the learner's, unmarked."""
    st.session_state[OWN_KEY] = own
    here = bench()
    here.doc_id = uuid.uuid4().hex
    here.mark(())


def edited(**changes):
    """The learner's edit (its `source` as the editor sent it, or the `class_name` chosen)."""
    bench()
    st.session_state[OWN_KEY] = replace(st.session_state[OWN_KEY], **changes)
