"""Widget states from the browser, checked before Streamlit reads them: one that is not JSON is refused with a line
in the log, and the widget keeps its last value.

A browser sends every widget's state with each rerun; a component's (the stage player's) is JSON text, which
Streamlit parses when it compares the states before the page's code runs (Streamlit 1.67). Text that is not JSON
raises there, so the page never runs, and as the state stays stored it raises again on every later rerun of that
session, a valid state included: one forged or corrupted message would spoil the session for good. So each rerun's
states are checked first (`install` wraps `SessionState.on_script_will_rerun`, reaching into Streamlit's runtime as
ui/wake.py does), and a state that slipped in before (a session's first page run, before `install`) is dropped.
What a JSON state says is checked by the page's code that reads it (ui/stage.py).
"""

from __future__ import annotations

import functools
import json
import logging

from streamlit.proto.WidgetStates_pb2 import WidgetStates
from streamlit.runtime.state.session_state import Serialized, SessionState

LOG = logging.getLogger("schedlab")
JSON_FIELDS = ("json_value", "json_trigger_value")  # the widget state fields Streamlit holds as JSON text


def refusal(state) -> str | None:
    """Why a widget state (WidgetState proto) cannot be read, or None when it can."""
    field = state.WhichOneof("value")
    if field not in JSON_FIELDS:
        return None
    try:
        json.loads(getattr(state, field))
    except ValueError as e:  # JSONDecodeError, or text that is not UTF-8
        return f"its {field} is not JSON ({e})"
    return None


def checked(states: WidgetStates) -> WidgetStates:
    """`states` without those that cannot be read, each refused with a line in the log."""
    kept = WidgetStates()
    for state in states.widgets:
        if (why := refusal(state)) is None:
            kept.widgets.append(state)
        else:
            LOG.warning("refused the state of widget %s from the browser: %s", state.id, why)
    return kept


def _drop_unreadable(session_state: SessionState):
    stored = session_state._new_widget_state.states
    for widget_id, value in list(stored.items()):
        if isinstance(value, Serialized) and (why := refusal(value.value)) is not None:
            LOG.warning("dropped the stored state of widget %s: %s", widget_id, why)
            del stored[widget_id]


def install():
    """Check every session's widget states from now on (once per process; later calls do nothing)."""
    original = SessionState.on_script_will_rerun
    if getattr(original, "checks_browser_states", False):
        return

    @functools.wraps(original)  # Streamlit's own stays reachable: inspect.unwrap
    def on_script_will_rerun(self, fresh_widget_states, **kwargs):
        _drop_unreadable(self)
        return original(self, None if fresh_widget_states is None else checked(fresh_widget_states), **kwargs)

    on_script_will_rerun.checks_browser_states = True
    SessionState.on_script_will_rerun = on_script_will_rerun
