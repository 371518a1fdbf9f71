"""Every message from the stage player is checked: a state that is not JSON, a trigger without the player's state,
values of the wrong types are refused with a line in the log, and the session keeps working: the next request is
answered with its frames and no rerun shows an error (ui/browser_states.py, ui/stage.py). Spoken to a real server
as a browser speaks to it (Streamlit's websocket protocol), since AppTest sends only well-formed states."""

import asyncio
import inspect
import json
import logging

import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates
from streamlit.runtime.state.common import WidgetMetadata
from streamlit.runtime.state.session_state import SessionState

from ui import browser_states

NOT_JSON = "{not json"


def test_a_state_that_is_not_json_is_refused_with_a_line_in_the_log(caplog):
    states = WidgetStates(widgets=[WidgetState(id="player", json_value=NOT_JSON),
                                   WidgetState(id="events", json_trigger_value="[oops"),
                                   WidgetState(id="kept", json_value='{"frame": 3}'),
                                   WidgetState(id="slider", int_value=4)])
    with caplog.at_level(logging.WARNING, logger="schedlab"):
        kept = browser_states.checked(states)
    assert [state.id for state in kept.widgets] == ["kept", "slider"]
    assert [r.getMessage().split(":")[0] for r in caplog.records] == [
        "refused the state of widget player from the browser", "refused the state of widget events from the browser"]


def session_with_a_player() -> SessionState:
    """A session whose page has drawn a component (its state widget registered, as after a first page run)."""
    session = SessionState()
    session._set_widget_metadata(WidgetMetadata("player", deserializer=lambda value: value, serializer=json.dumps,
                                                value_type="json_value"))
    return session


def test_a_stored_state_that_is_not_json_no_longer_spoils_every_later_rerun(monkeypatch):
    streamlit_alone = inspect.unwrap(SessionState.on_script_will_rerun)  # an app run may have installed the check
    monkeypatch.setattr(SessionState, "on_script_will_rerun", streamlit_alone)  # as it was, after the test
    poisoned = session_with_a_player()
    poisoned._new_widget_state.set_widget_from_proto(WidgetState(id="player", json_value=NOT_JSON))
    for _ in range(2):  # Streamlit alone: the stored text raises at every rerun from now on
        with pytest.raises(ValueError):
            poisoned.on_script_will_rerun(WidgetStates())
    browser_states.install()
    browser_states.install()  # once per process, however often the page runs it
    poisoned.on_script_will_rerun(WidgetStates())
    assert "player" not in poisoned._new_widget_state.states
    fresh = session_with_a_player()
    for text in (NOT_JSON, '{"frame": 1}', NOT_JSON, '{"frame": 2}'):
        fresh.on_script_will_rerun(WidgetStates(widgets=[WidgetState(id="player", json_value=text)]))
    assert fresh["player"] == {"frame": 2}


@pytest.mark.browser
def test_bad_player_messages_are_refused_and_the_session_keeps_answering(fake_server):
    asyncio.run(_bad_messages_then_good_ones(fake_server))


async def _bad_messages_then_good_ones(url: str):
    from tools.websocket_page import WebsocketPage

    async with WebsocketPage(url, "scenario=05_prefix_caching") as page:
        assert not await page.rerun()
        good_state = page.player_state({"frame": 0})
        bad = {
            "a state that is not JSON": [WidgetState(id=page.player_id, json_value=NOT_JSON)],
            "a trigger without the player's state": [page.request_trigger(page.last + 1)],
            "a trigger that is not JSON": [WidgetState(id=page.trigger_id, json_trigger_value="[oops"), good_state],
            "a state of the wrong shape": [WidgetState(id=page.player_id, json_value="[1, 2]")],
            "values of the wrong types": [WidgetState(id=page.player_id, json_value=json.dumps(
                {"frame": "x", "play": 5, "request": "zz"}))],
            "a Play far out of range": [WidgetState(id=page.player_id, json_value=json.dumps(
                {"play": {"frame": -5, "speed": 1e308}}))],
            "a request of the wrong types": [page.request_trigger({"run": [], "have": "Infinity"}), good_state],
            "a request with Infinity": [WidgetState(id=page.trigger_id, json_trigger_value=(
                '[{"event": "request", "value": {"run": 1, "have": Infinity, "want": 3}}]')), good_state],
        }
        for what, widgets in bad.items():
            for fragment in (page.player_fragment, ""):  # a stage rerun, and a whole page's
                assert not await page.rerun(widgets, fragment), f"{what}: an error shown"
            have = page.last
            errors = await page.rerun([page.request_trigger(have + 2), good_state], page.player_fragment)
            assert not errors and page.last >= have + 2, f"after {what}: the next request was not answered"
