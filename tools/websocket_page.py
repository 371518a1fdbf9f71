"""One page of the app spoken to as a browser speaks to it: Streamlit's websocket protocol (the BackMsg a browser
sends with its widget states, the ForwardMsgs read back), for the tests that send what no well-behaved browser
sends and for bench/bench_half_open.py's student (bench/class_client.py speaks it for the class benches)."""

from __future__ import annotations

import asyncio
import itertools
import json

import websockets
from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

PLAYER = "schedlab_stage_player"
RERUN_TIMEOUT_S = 60


class WebsocketPage:
    """`async with WebsocketPage(url, query) as page`: the stage player's ids, the frames it holds, and `rerun`."""

    def __init__(self, url: str, query: str):
        self.url, self.query = url.replace("http", "ws", 1) + "/_stcore/stream", query
        self.player_id = self.player_fragment = ""
        self.run, self.last = -1, -1
        self._seq = itertools.count(1)

    async def __aenter__(self) -> WebsocketPage:
        self._ws = await websockets.connect(self.url, subprotocols=["streamlit"], max_size=2**27)
        return self

    async def __aexit__(self, *_):
        await self._ws.close()

    @property
    def trigger_id(self) -> str:
        return _make_trigger_id(self.player_id, "events")

    def request_trigger(self, want) -> WidgetState:
        """The player's request for frames up to `want` (or, given a dict, that as the request's value)."""
        value = want if isinstance(want, dict) else {"run": self.run, "have": self.last, "want": want,
                                                      "seq": next(self._seq)}
        return WidgetState(id=self.trigger_id, json_trigger_value=json.dumps([{"event": "request", "value": value}]))

    def player_state(self, state: dict) -> WidgetState:
        """The player's state widget, which a browser sends with every rerun (`{}` before the player reports)."""
        return WidgetState(id=self.player_id, json_value=json.dumps(state))

    async def rerun(self, widgets=(), fragment_id: str = "") -> list[str]:
        """Send a rerun with `widgets` (of the fragment `fragment_id`, else the whole page) and read until it
        finished; returns the errors it showed (exceptions and error boxes)."""
        back = BackMsg()
        back.rerun_script.query_string = self.query
        back.rerun_script.widget_states.widgets.extend(widgets)
        back.rerun_script.fragment_id = fragment_id
        await self._ws.send(back.SerializeToString())
        errors = []
        async with asyncio.timeout(RERUN_TIMEOUT_S):
            while True:
                msg = ForwardMsg()
                msg.ParseFromString(await self._ws.recv())
                errors += self._read(msg)
                if msg.WhichOneof("type") == "script_finished":
                    if msg.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                        continue
                    return errors

    def _read(self, msg: ForwardMsg) -> list[str]:
        if msg.WhichOneof("type") != "delta" or not msg.delta.HasField("new_element"):
            return []
        element = msg.delta.new_element
        kind = element.WhichOneof("type")
        if kind == "exception":
            return [f"exception: {element.exception.message}"]
        if kind == "alert" and element.alert.format == element.alert.ERROR:
            return [f"error: {element.alert.body}"]
        if kind == "bidi_component" and element.bidi_component.component_name.endswith(PLAYER):
            data = json.loads(element.bidi_component.json)
            self.player_id, self.player_fragment = element.bidi_component.id, msg.delta.fragment_id
            if data["run"] != self.run:
                self.run, self.last = data["run"], -1
            if data["frames"]:
                self.last = max(self.last, data["from"] + len(data["frames"]) - 1)
        return []
