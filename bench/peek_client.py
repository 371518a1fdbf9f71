"""What a class's follower is sent while a question is open, read message by message (issue 47 point 2): for
tests/test_browser_class_peek.py and bench/bench_peek.py.

`later_facts` plants the markers: computed from the lecturer's run itself (the preset on the fake model, as the
server runs it), every fact of its frames after the lecturer's frame k that no frame up to k states: the key
frames' notes after k (a key-frame button's hover text), the strings of the stage's frames after k (their
narration and every other word of the player's data) and the assignment's verdicts at the run's end
("Request 3 finished at step 29"). A `Peek` reads every ForwardMsg the follower's websocket receives: the player's
data must hold no frame after k (frames, `last`, `cursor`, key frames, titles), no chart a step after k, and no
message any marker (its raw bytes, and the JSON it carries decoded, for words not in ASCII).
"""

from __future__ import annotations

import json
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from google.protobuf import text_format
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from bench.bench_class_follow import Named, NamedPage
from bench.class_client import OPEN_TIMEOUT_S, bench_token
from engine.inputs.goals import gather
from engine.inputs.scenario import load_scenario
from i18n import in_lang, text
from viz.frame_payload import stage_view
from viz.predict import question_for

ROOT = Path(__file__).resolve().parent.parent
SCENARIO, K, ASKED = "assignment_1_vip_deadline", 3, 5  # the lecturer's frame, the step the question asks about
PLAYER = "schedlab_stage_player"
SHORTEST_MARKER = 16  # shorter strings of a frame ("running", "ID:3") are no fact of that frame alone


def _strings(value) -> set[str]:
    """Every string in a JSON-like value."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*map(_strings, value.values()), set())
    if isinstance(value, list | tuple):
        return set().union(*map(_strings, value), set())
    return set()


def later_facts(scenario: str, k: int, lang: str, asked_step: int | None = None) -> dict[str, str]:
    """{marker: what it is} of the preset `scenario`'s frames after frame `k`, in `lang`; none that frames 0..k
    state too, nor any the question about `asked_step` (its words and choices: the class is sent them) holds."""
    preset = load_scenario(ROOT / "scenarios" / f"{scenario}.toml", runner="fake")
    engine = preset.engine()
    engine.run()
    frames = engine.frames
    views = [stage_view(frame, frames[i - 1] if i else None, lang=lang) for i, frame in enumerate(frames)]
    known = set().union(*(_strings(view) for view in views[:k + 1]))
    question = None if asked_step is None else question_for(frames[asked_step - 1], frames[asked_step], lang, shown=k)
    asked = "" if question is None else " ".join([question.text, *question.choices])
    facts = {s: f"a string of frame {i}" for i in range(len(frames) - 1, k, -1) for s in _strings(views[i])}
    facts.update({key.note_in(lang): f"the note of key frame {key.step}" for key in preset.key_frames
                  if key.step > k})
    if preset.assignment is not None:
        def verdicts(last: int) -> set[str]:
            evidence = gather((frames[i] for i in range(last + 1)), last == len(frames) - 1)
            judged = preset.assignment.judge(evidence, preset.spec, preset.spec)
            return {in_lang(lang, verdict.reason) for _, verdict in judged.verdicts}
        known |= verdicts(k)
        facts.update({reason: "a verdict at the run's end" for reason in verdicts(len(frames) - 1)})
    return {s: what for s, what in facts.items()
            if len(s) >= SHORTEST_MARKER and s not in known and s not in asked}


def _json_texts(msg: ForwardMsg) -> list[str]:
    """The JSON a delta carries (a component's data, a chart's spec), decoded: words not in ASCII as they read."""
    if msg.WhichOneof("type") != "delta" or not msg.delta.HasField("new_element"):
        return []
    element = msg.delta.new_element
    kind = element.WhichOneof("type")
    carried = {"bidi_component": lambda: element.bidi_component.json, "plotly_chart": lambda: element.plotly_chart.spec}
    if kind not in carried or not carried[kind]():
        return []
    return [json.dumps(json.loads(carried[kind]()), ensure_ascii=False)]


def _chart_steps(spec: dict) -> list[float]:
    """The steps a chart draws: its lines' x (the charts over time plot against the step) and the steps its hover
    texts name (`step %{customdata}`: the overlap timeline's bars, whose x are milliseconds)."""
    steps = []
    for trace in spec.get("data", []):
        named = "step %{customdata}" in trace.get("hovertemplate", "")
        for values in (trace.get("x") if trace.get("type") == "scatter" else None,
                       trace.get("customdata") if named else None):
            if isinstance(values, list):
                steps += [v for v in values if isinstance(v, int | float)]
    return steps


@dataclass
class Peek:
    """Reads a follower's messages while the lecturer is at frame `k` with a question open: how many messages and
    bytes, how many of them said anything past k (`peeking`), and each thing said past k (`past`)."""
    k: int
    markers: dict[str, str]
    messages: int = 0
    bytes: int = 0
    peeking: int = 0  # messages (and downloads) that said anything past k
    past: list[str] = field(default_factory=list)
    markers_seen: set[str] = field(default_factory=set)  # every marker read (a control that must see some)

    def read(self, raw: bytes, msg: ForwardMsg, judged: bool = True) -> list[str]:
        """Read one message (`judged`: while following at the open question; else only the markers are noted);
        what it said past k."""
        self.messages += judged
        self.bytes += len(raw) * judged
        texts = [raw.decode("utf-8", "replace"), text_format.MessageToString(msg, as_utf8=True), *_json_texts(msg)]
        found = [marker for marker in self.markers if any(marker in t for t in texts)]
        self.markers_seen.update(found)
        said = [f"{self.markers[marker]}: {marker[:80]!r}" for marker in found] + self._structure(msg)
        if judged:
            self.past += said
            self.peeking += bool(said)
        return said

    def read_download(self, body: bytes) -> list[str]:
        """Read a file the page offers for download (a handout): what it said past k."""
        self.messages += 1
        self.bytes += len(body)
        found = body.decode("utf-8", "replace")
        said = [f"{what} (in a download): {marker[:80]!r}" for marker, what in self.markers.items() if marker in found]
        self.past += said
        self.peeking += bool(said)
        return said

    def _structure(self, msg: ForwardMsg) -> list[str]:
        if msg.WhichOneof("type") != "delta" or not msg.delta.HasField("new_element"):
            return []
        element, k = msg.delta.new_element, self.k
        kind = element.WhichOneof("type")
        if kind == "plotly_chart" and element.plotly_chart.spec:
            late = [x for x in _chart_steps(json.loads(element.plotly_chart.spec)) if x > k + 1]
            return [f"a chart drawing step {max(late)}"] if late else []
        if kind != "bidi_component" or not element.bidi_component.component_name.endswith(PLAYER):
            return []
        data = json.loads(element.bidi_component.json)
        said = []
        if data["frames"] and data["from"] + len(data["frames"]) - 1 > k:
            said.append(f"the player sent frames {data['from']}..{data['from'] + len(data['frames']) - 1}")
        said += [f"the player's {name} {data[name]}" for name in ("last", "cursor") if data[name] > k]
        said += [f"a key frame at step {key[0]} ({key[1][:60]!r})" for key in data["key_frames"] if key[0] > k]
        said += [f"a title from frame {start}" for start, _ in data.get("titles", []) if start > k]
        return said


class WatchedPage(NamedPage):
    """A class page whose every message `peek` reads (judged while `judged()`: the tab follows at the open
    question); it also keeps the segmented controls' ids (the views below the stage), the download buttons'
    addresses (a handout's file comes over HTTP, not the websocket: `downloads`) and the words shown."""

    def __init__(self, peek: Peek, judged=lambda: True):
        super().__init__()
        self.peek, self.judged = peek, judged
        self.downloads: set[str] = set()
        self.words: list[str] = []  # every markdown and alert's words, as shown
        self.options: list[str] = []  # the last radio's choices, as shown (its state is the choice's words)

    def read(self, msg: ForwardMsg):
        self.peek.read(msg.SerializeToString(), msg, self.judged())
        super().read(msg)
        if msg.WhichOneof("type") != "delta" or not msg.delta.HasField("new_element"):
            return
        element = msg.delta.new_element
        kind = element.WhichOneof("type")
        if kind in ("markdown", "alert"):
            self.words.append(getattr(element, kind).body)
        elif kind == "radio":
            self.options = list(element.radio.options)
        elif kind == "button_group":
            self.widgets[element.button_group.label] = (element.button_group.id, msg.delta.fragment_id)
        elif kind == "download_button" and element.download_button.url:
            self.downloads.add(element.download_button.url)


class Follower(Named):
    """A student's tab in `lang` (its browser's token `token`), reading every message into a WatchedPage of `peek`,
    that sends with every rerun the predictions toggle as its page shows it, switched on by the lecturer's (a
    browser sends every widget's state; one left out reads as its default, off)."""

    def __init__(self, number: int, code: str, lang: str, token: str, peek: Peek, judged=lambda: True):
        super().__init__(number, f"class={code}&lang={lang}", token)
        self.lang, self.page = lang, WatchedPage(peek, judged)

    async def answer(self, ws, choice: int):
        """Pick the choice `choice` (modulo the choices) of the question and send it."""
        radio, fragment = self.page.widgets[text(self.lang, "predict.choice")]
        widgets, _ = self.click(text(self.lang, "class.send"))
        picked = WidgetState(id=radio, string_value=self.page.options[choice % len(self.page.options)])
        await self.rerun(ws, [picked, *widgets, *self._component_state()], fragment)

    def _component_state(self) -> list[WidgetState]:
        toggle = self.page.widgets.get(text(self.lang, "predict.toggle"))
        return [*super()._component_state(), *([WidgetState(id=toggle[0], bool_value=True)] if toggle else [])]


async def start_class(url: str) -> tuple[Named, object]:
    """The lecturer opens assignment 1, starts a class, stands at frame K and switches predictions on (the question
    about step ASKED opens); the lecturer and their open websocket."""
    lecturer = Named(0, f"scenario={SCENARIO}", bench_token(900))
    ws = await lecturer.connect(url).__aenter__()
    await lecturer.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
    await lecturer.press(ws, text("en", "class.start"))
    await lecturer.rerun(ws, lecturer._component_state(), timeout_s=OPEN_TIMEOUT_S)
    lecturer.query = f"scenario={SCENARIO}&class={lecturer.page.code}"
    await lecturer.request(ws, K)
    await lecturer.tell(ws, K, 0)
    await lecturer.settle(ws, lambda page: True)
    toggle, fragment = lecturer.page.widgets[text("en", "predict.toggle")]
    await lecturer.rerun(ws, [WidgetState(id=toggle, bool_value=True), *lecturer._component_state()], fragment)
    return lecturer, ws


async def name_tab(tab: Named, ws, lang: str, name: str):
    """The class's link opened in `lang`, the student's name given (a second tab of a named browser needs none)."""
    await tab.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
    box = text(lang, "class.your_name")
    if box in tab.page.widgets:
        widgets, _ = tab.click(text(lang, "class.use_name"))
        await tab.rerun(ws, [WidgetState(id=tab.page.widgets[box][0], string_value=name), *widgets,
                             *tab._component_state()], tab.page.widgets[box][1])


async def try_to_peek(tab: Named, ws, lang: str, url: str):
    """Everything a following tab may try to see past the lecturer's frame."""
    page = tab.page
    await tab.rerun(ws, [tab._request(40), *tab._component_state()], page.player_fragment)
    tab.state = {"frame": 40}
    await tab.rerun(ws, tab._component_state(), page.player_fragment)
    if text(lang, "assignment.run_to_end") in page.widgets:  # offered to a follower before issue 47
        await tab.press(ws, text(lang, "assignment.run_to_end"))
    below = page.widgets[text(lang, "stage.below")]
    for view in ("charts", "metrics", "legend", "handout", "text"):
        await tab.rerun(ws, [WidgetState(id=below[0], string_array_value={"data": [text(lang, f"stage.view.{view}")]}),
                             *tab._component_state()], below[1])
        if view == "handout":
            await tab.press(ws, text(lang, "handout.build_html"))
    for address in page.downloads:
        with urllib.request.urlopen(url + address, timeout=30) as reply:
            page.peek.read_download(reply.read())
