"""A simulated student of bench/bench_classroom_server.py: Streamlit's websocket protocol, spoken to the stage
player's component as a browser does (the BackMsg protobufs a browser sends, the ForwardMsgs read back), and the
server it talks to (`streamlit run serve.py` as the README's class command starts it)."""

import asyncio
import json
import random
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import websockets
from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from session.tokens import SECRET_ENV, signed
from tools.app_server import app_script

ROOT = Path(__file__).resolve().parent.parent
PRESET = "scenario=05_prefix_caching"
WARM_UP = "scenario=01_prefill_first"
MAX_STUDENTS = 60
PLAYER = "schedlab_stage_player"
STEPS, PLAYED, BACK, AFTER_BRANCH, LOOKAHEAD = 4, 8, 3, 2, 10  # LOOKAHEAD: the player's chunk at 2 steps/s
STEP_PAUSE_S, PLAY_INTERVAL_S, ARRIVAL_SPREAD_S = (0.5, 1.5), 0.5, 3.0
REQUEST_TIMEOUT_S, OPEN_TIMEOUT_S, TIME_LIMIT_S = 30, 180, 300  # opening the page may load the model first
BATCHES = re.compile(r"Sessions per pass, latest last: ([\d ]+)")
PRECOMPUTED = "Computed at start"  # the server panel's line while $SCHEDLAB_PRECOMPUTE presets are computed
PRECOMPUTE_LIMIT_S = 300
PASSES = "Tokens per pass"  # the server panel's caption on the model's recent forward passes
SESSIONS = re.compile(r"\*\*(\d+)\*\* sessions")  # the server panel's count of sessions


class Page:
    """What the server last sent: widget ids by label, the player's data, the server panel's text."""

    def __init__(self):
        self.widgets: dict[str, tuple[str, str]] = {}  # label -> (widget id, fragment id)
        self.player_id, self.player_fragment = "", ""
        self.run, self.last, self.cursor, self.over, self.cursor_moves = -1, -1, 0, False, -1
        self.playing: float | None = None
        self.panel = self.precomputed = self.passes = ""
        self.sessions, self.cache_line, self.roster = -1, "", ""  # as the server panel counts and lists them

    def read(self, msg: ForwardMsg):
        if msg.WhichOneof("type") != "delta" or not msg.delta.HasField("new_element"):
            return
        element, kind = msg.delta.new_element, msg.delta.new_element.WhichOneof("type")
        if kind in ("button", "number_input"):
            widget = getattr(element, kind)
            self.widgets[widget.label] = (widget.id, msg.delta.fragment_id)
        elif kind == "bidi_component" and element.bidi_component.component_name.endswith(PLAYER):
            data = json.loads(element.bidi_component.json)
            self.player_id, self.player_fragment = element.bidi_component.id, msg.delta.fragment_id
            if data["run"] != self.run:  # a new run: the player drops what it held
                self.run, self.last = data["run"], -1
            if data["frames"]:  # frames from data["from"] on; the player holds a prefix
                self.last = max(self.last, data["from"] + len(data["frames"]) - 1)
            self.over = bool(data["over"]) and self.last >= data["last"]
            if data["cursor_moves"] != self.cursor_moves:  # the server moved the cursor: the player jumps there
                self.cursor_moves, self.cursor = data["cursor_moves"], data["cursor"]
                self.playing = data.get("playing")  # a class's follower: plays on from there (speed), stops (0)
        elif kind == "markdown" and BATCHES.search(element.markdown.body):
            self.panel = element.markdown.body
        elif kind == "markdown" and (found := SESSIONS.search(element.markdown.body)):
            self.sessions, self.cache_line = int(found.group(1)), element.markdown.body
        elif kind == "markdown" and element.markdown.body.startswith("- s"):
            self.roster = element.markdown.body.replace("\n", "; ")
        elif kind == "markdown" and element.markdown.body.startswith(PRECOMPUTED):
            self.precomputed = element.markdown.body
        elif kind == "markdown" and element.markdown.body.startswith(PASSES):
            self.passes = element.markdown.body.split(". ")[0]


def custom_query(student: int) -> str:
    """A different custom setup per student (as bench/bench_classroom.py): 4-7 chat requests, Poisson arrivals,
    its own seed; the default settings."""
    return (f"scenario=custom&requests={4 + student % 4}&prompts=chat&max_tokens=24&arrivals=poisson"
            f"&seed={student}")


class Student:
    def __init__(self, number: int, query: str = PRESET, after_branch: int = AFTER_BRANCH):
        self.rng = random.Random(number)
        self.query, self.after_branch = query, after_branch
        self.page = Page()
        self.shown = 0  # the frame the player shows
        self.state: dict = {}  # the component's state as last reported ({"frame": k})
        self.seq = 0
        self.latencies: list[float] = []  # of requests for frames
        self.phase = "step"  # what the student is doing: step, play, or step after the branch
        self.by_phase: dict[str, list[float]] = {}
        self.branch_latencies: list[float] = []
        self.chunk_latencies: list[float] = []  # Play's requests for LOOKAHEAD frames ahead, until all came
        self.lost = self.local = 0
        self.failures: dict[str, int] = {}  # reruns that did not finish successfully, by the server's status

    async def rerun(self, ws, widgets: list[WidgetState] = (), fragment_id: str = "",
                    timeout_s: float = REQUEST_TIMEOUT_S, until=None) -> float | None:
        """Send what a browser sends; seconds until `until()` holds (or the rerun finished), None if it failed."""
        start = time.perf_counter()
        await ws.send(self.rerun_message(widgets, fragment_id))
        seconds = None
        async with asyncio.timeout(timeout_s):
            while True:
                msg = ForwardMsg()
                msg.ParseFromString(await ws.recv())
                self.page.read(msg)
                if seconds is None and until is not None and until():
                    seconds = time.perf_counter() - start  # the frames are here; the rerun may still draw more
                if msg.WhichOneof("type") == "script_finished":
                    ok = msg.script_finished in (ForwardMsg.FINISHED_SUCCESSFULLY,
                                                 ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
                    if not ok:
                        name = ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished)
                        self.failures[name] = self.failures.get(name, 0) + 1
                        if msg.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                            continue  # a run still going (an earlier request's) stopped for ours: ours follows
                        return None
                    return seconds if until is not None else time.perf_counter() - start

    def rerun_message(self, widgets: list[WidgetState], fragment_id: str) -> bytes:
        """The BackMsg a browser sends for a rerun of this page with `widgets` (of the fragment `fragment_id`)."""
        back = BackMsg()
        back.rerun_script.query_string = self.query
        back.rerun_script.widget_states.widgets.extend(widgets)
        back.rerun_script.fragment_id = fragment_id
        return back.SerializeToString()

    def _component_state(self) -> list[WidgetState]:
        """The component's state widget, sent with every rerun as the browser does ({} before any report)."""
        return [WidgetState(id=self.page.player_id, json_value=json.dumps(self.state))]

    async def request(self, ws, want: int, latencies: list[float] | None = None):
        """The player asks for frames up to `want`; asked again while an answer falls short, as the player does.
        The time until they all came goes to `latencies` (by default: a step's, the step waiting for them)."""
        start, deadline = time.perf_counter(), time.perf_counter() + REQUEST_TIMEOUT_S
        got = lambda: self.page.last >= want or self.page.over  # noqa: E731
        while True:
            self.seq += 1
            value = {"run": self.page.run, "have": self.page.last, "want": want, "seq": self.seq}
            trigger = WidgetState(id=_make_trigger_id(self.page.player_id, "events"),
                                  json_trigger_value=json.dumps([{"event": "request", "value": value}]))
            asked = time.perf_counter()
            try:
                answered = await self.rerun(ws, [trigger, *self._component_state()], self.page.player_fragment,
                                            max(0.1, deadline - time.perf_counter()), until=got)
            except TimeoutError:
                answered = None
            if answered is not None:  # the frames asked for came (latency from the first ask to their arrival)
                if latencies is None:
                    self.record_step(asked + answered - start)
                else:
                    latencies.append(asked + answered - start)
                return
            if time.perf_counter() >= deadline:
                self.lost += 1
                return
            if not got():  # the rerun finished short of `want` (the server's 2 s budget) or failed: ask again
                await asyncio.sleep(0.05)

    def record_step(self, seconds: float):
        self.latencies.append(seconds)
        self.by_phase.setdefault(self.phase, []).append(seconds)

    async def step(self, ws, pause_s: float):
        want = self.shown + 1
        if want <= self.page.last:
            self.local += 1  # answered in the browser
        elif not self.page.over:
            await self.request(ws, want)
        self.shown = min(want, self.page.last)
        await asyncio.sleep(pause_s)

    async def play(self, ws):
        """Play, as the player does: a tick every PLAY_INTERVAL_S shows the next frame if it is held (answered in
        the player), else the player waits for it (the step's latency: from when it was due until it came); while
        fewer than LOOKAHEAD frames are held ahead, one request at a time asks for LOOKAHEAD more (the time until
        such a chunk has fully come goes to `chunk_latencies`)."""
        fetching = None

        def ask_ahead():
            nonlocal fetching
            if (fetching is None or fetching.done()) and not self.page.over and \
                    self.page.last - self.shown < LOOKAHEAD:
                fetching = asyncio.create_task(self.request(ws, self.page.last + LOOKAHEAD, self.chunk_latencies))

        for _ in range(PLAYED):
            due, want = time.perf_counter(), self.shown + 1
            ask_ahead()
            if self.page.last >= want:
                self.local += 1
            else:
                while self.page.last < want and not self.page.over and time.perf_counter() - due < REQUEST_TIMEOUT_S:
                    await asyncio.sleep(0.005)
                    ask_ahead()
                if self.page.last < want:  # the run is over before it (or the frame never came: lost)
                    self.lost += not self.page.over
                    break
                self.record_step(time.perf_counter() - due)
            self.shown = want
            await asyncio.sleep(max(0.0, PLAY_INTERVAL_S - (time.perf_counter() - due)))
        if fetching is not None:
            await fetching  # the websocket is free for the next action

    async def report_frame(self, ws):
        """The player reports the frame it stopped on: a change of the component's state "frame"."""
        self.state = {**self.state, "frame": self.shown}
        try:
            if await self.rerun(ws, self._component_state(), self.page.player_fragment) is None:
                self.lost += 1
        except TimeoutError:
            self.lost += 1

    async def attend(self, url: str):
        await asyncio.sleep(self.rng.uniform(0, ARRIVAL_SPREAD_S))
        async with websockets.connect(url, subprotocols=["streamlit"], max_size=2**27) as ws:
            await self.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
            self.shown = self.page.cursor
            for _ in range(STEPS):
                await self.step(ws, self.rng.uniform(*STEP_PAUSE_S))
            self.phase = "play"
            await self.play(ws)
            await self.report_frame(ws)  # Pause: the player reports where it stopped
            for _ in range(BACK):  # each Back shown in the browser; the report follows after 300 ms
                self.shown = max(0, self.shown - 1)
                await asyncio.sleep(0.4)
                await self.report_frame(ws)
            label = next(k for k in self.page.widgets if k.startswith("max_num_seqs"))
            widget_id, fragment_id = self.page.widgets[label]
            try:
                branched = await self.rerun(ws, [WidgetState(id=widget_id, int_value=1 + self.rng.randrange(3)),
                                                 *self._component_state()], fragment_id)
            except TimeoutError:
                branched = None
            if branched is None:
                self.lost += 1
            else:
                self.branch_latencies.append(branched)
            self.shown, self.phase = self.page.cursor, "step after the branch"
            for _ in range(self.after_branch):
                await self.step(ws, self.rng.uniform(*STEP_PAUSE_S))


# What the README's class command passes: no file watcher (each session would re-scan the imported modules'
# paths after its reruns).
CLASS_OPTIONS = ("--server.fileWatcherType", "none")
CLASS_CACHE_MB = "2048"  # the run cache's budget in the README's class command
BENCH_TOKEN_SECRET = "schedlab bench"  # $SCHEDLAB_TOKEN_SECRET of the bench's servers


def bench_token(i: int) -> str:
    """Simulated browser `i`'s token, as the bench's servers issue it (a made-up one they refuse)."""
    return signed(BENCH_TOKEN_SECRET, f"{i:024d}")


async def wait_for_server(port: int):
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            await asyncio.sleep(0.1)


async def warm_up(url: str, precompute: bool) -> float:
    """One page opened before the class (another preset, so the class's run is not started): the server has
    imported what a page needs and, on the real model, loaded the weights, as it has before a lecture starts.
    With `precompute`, also waits (bounded) until the server panel says the presets it computes at start are
    done. Returns the seconds that took."""
    lecturer, start = Student(-1, WARM_UP), time.perf_counter()
    async with websockets.connect(url, subprotocols=["streamlit"], max_size=2**27) as ws:
        await lecturer.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
        while precompute and time.perf_counter() - start < PRECOMPUTE_LIMIT_S and (
                not lecturer.page.precomputed or "waiting" in lecturer.page.precomputed
                or "computing" in lecturer.page.precomputed):
            await asyncio.sleep(1.0)
            await lecturer.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
    if precompute:
        print(f"    before the class: {lecturer.page.precomputed or 'no precompute line on the server panel'} "
              f"({time.perf_counter() - start:.0f} s)")
    return time.perf_counter() - start



def start_server(env: dict, port: int, root: Path = ROOT, launcher: tuple[str, ...] = ("-m", "streamlit")
                 ) -> subprocess.Popen:
    """`streamlit run serve.py` on 127.0.0.1:`port` as the README's class command starts it, with `env` and the
    bench's token secret (its simulated browsers carry tokens signed with it: `bench_token`); the app of the tree at
    `root` (another version's, bench/before.py: app.py where it has no serve.py). `launcher`: the interpreter's
    arguments before Streamlit's `run ...` (a bench's module that runs Streamlit's command line in its own process:
    bench/bench_sandbox.py)."""
    env = {SECRET_ENV: BENCH_TOKEN_SECRET, **env}
    return subprocess.Popen([sys.executable, *launcher, "run", app_script(root), "--server.headless", "true",
                             "--server.address", "127.0.0.1", "--server.port", str(port),
                             "--browser.gatherUsageStats", "false", *CLASS_OPTIONS], cwd=root, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
