"""What the Workbench keeps per browser session, beside Streamlit's widget states (which Streamlit forgets on a
page the learner leaves): the learner's scheduler (session/own_scheduler.py), which the policy lab reads through
`own_scheduler()`."""

from __future__ import annotations

import streamlit as st

from session.own_scheduler import OwnScheduler

OWN_KEY = "own_scheduler"


def own_scheduler() -> OwnScheduler | None:
    """The learner's current scheduler in this session (as in the Workbench's editor, saved or not run yet); None
    until the learner has opened the Workbench."""
    return st.session_state.get(OWN_KEY)


def keep_own_scheduler(own: OwnScheduler):
    st.session_state[OWN_KEY] = own
