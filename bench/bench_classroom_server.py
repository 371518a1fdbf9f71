"""The classroom against a real server: simulated students speaking Streamlit's own websocket protocol.

Starts `streamlit run app.py` on 127.0.0.1, then connects N students as protocol-level clients (no browser:
each sends the BackMsg protobufs a browser sends, from the installed streamlit package, and reads the
ForwardMsgs back). Each student opens preset 05, clicks Step a few times (a pause between clicks), plays
(Step clicks every 0.2 s, as the Play timer's reruns would), clicks Back three times, changes max_num_seqs in
the sidebar (a branch), and clicks Step again. Per click, the time until the server finished the rerun it
caused; a click is lost when the rerun fails or times out, or a Step does not show the next frame. Prints
p50/p95/max per Step click, lost clicks, the server's peak RSS, and the model's batch sizes as the
"This server" panel shows them. Bounded in students, clicks and time; stops the server at the end.
Run: python bench/bench_classroom_server.py [students] [fake|model]
"""

import asyncio
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
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

ROOT = Path(__file__).resolve().parent.parent
QUERY = "scenario=05_prefix_caching"
CLICKS, PLAYED, BACK, AFTER_BRANCH = 4, 10, 3, 2
CLICK_PAUSE_S, PLAY_INTERVAL_S, ARRIVAL_SPREAD_S = (0.5, 1.5), 0.2, 3.0
RERUN_TIMEOUT_S, OPEN_TIMEOUT_S, TIME_LIMIT_S = 30, 180, 300  # opening the page may load the model first
FRAME = re.compile(r"^Frame \*\*(\d+)\*\* of")
BATCHES = re.compile(r"Sessions per pass, latest last: ([\d ]+)")


class Page:
    """What the server last sent: widget ids by label, the frame shown, the server panel's text."""

    def __init__(self):
        self.widgets: dict[str, tuple[str, str]] = {}  # label -> (widget id, fragment id)
        self.frame, self.panel = -1, ""

    def read(self, msg: ForwardMsg):
        if msg.WhichOneof("type") != "delta" or not msg.delta.HasField("new_element"):
            return
        element, kind = msg.delta.new_element, msg.delta.new_element.WhichOneof("type")
        if kind in ("button", "number_input"):
            widget = getattr(element, kind)
            self.widgets[widget.label] = (widget.id, msg.delta.fragment_id)
        elif kind == "markdown":
            if found := FRAME.match(element.markdown.body):
                self.frame = int(found.group(1))
            if BATCHES.search(element.markdown.body):
                self.panel = element.markdown.body


class Student:
    def __init__(self, number: int):
        self.rng = random.Random(number)
        self.page = Page()
        self.step_latencies: list[float] = []
        self.lost = 0

    async def rerun(self, ws, widget: WidgetState | None = None, fragment_id: str = "",
                    timeout_s: float = RERUN_TIMEOUT_S) -> float | None:
        """Send what a browser sends for a click or a change; seconds until the rerun finished, None if it failed."""
        back = BackMsg()
        back.rerun_script.query_string = QUERY
        if widget is not None:
            back.rerun_script.widget_states.widgets.append(widget)
        back.rerun_script.fragment_id = fragment_id
        start = time.perf_counter()
        await ws.send(back.SerializeToString())
        async with asyncio.timeout(timeout_s):
            while True:
                msg = ForwardMsg()
                msg.ParseFromString(await ws.recv())
                self.page.read(msg)
                if msg.WhichOneof("type") == "script_finished":
                    ok = msg.script_finished in (ForwardMsg.FINISHED_SUCCESSFULLY,
                                                 ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
                    return time.perf_counter() - start if ok else None

    async def click(self, ws, label: str, **value) -> float | None:
        widget_id, fragment_id = self.page.widgets[label]
        state = WidgetState(id=widget_id, **(value or {"trigger_value": True}))
        try:
            return await self.rerun(ws, state, fragment_id)
        except TimeoutError:
            return None

    async def step(self, ws, pause_s: float):
        before = self.page.frame
        seconds = await self.click(ws, "Step ▶")
        if seconds is None or self.page.frame != before + 1:
            self.lost += 1
        else:
            self.step_latencies.append(seconds)
        await asyncio.sleep(pause_s)

    async def attend(self, url: str):
        await asyncio.sleep(self.rng.uniform(0, ARRIVAL_SPREAD_S))
        async with websockets.connect(url, subprotocols=["streamlit"], max_size=2**26) as ws:
            await self.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
            for _ in range(CLICKS):
                await self.step(ws, self.rng.uniform(*CLICK_PAUSE_S))
            for _ in range(PLAYED):
                await self.step(ws, PLAY_INTERVAL_S)
            for _ in range(BACK):
                await self.click(ws, "◀ Back")
            await self.click(ws, "max_num_seqs (requests per batch)", int_value=1 + self.rng.randrange(3))
            for _ in range(AFTER_BRANCH):
                await self.step(ws, self.rng.uniform(*CLICK_PAUSE_S))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def wait_for_server(port: int):
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            await asyncio.sleep(0.1)


async def main():
    count = int(next((a for a in sys.argv[1:] if a.isdigit()), 30))
    runner = "model" if "model" in sys.argv[1:] else "fake"
    model_name = "real" if runner == "model" else "fake"
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                               "--server.address", "127.0.0.1", "--server.port", str(port)], cwd=ROOT,
                              env=dict(os.environ, SCHEDLAB_RUNNER=runner), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        await wait_for_server(port)
        students = [Student(i) for i in range(count)]
        url = f"ws://127.0.0.1:{port}/_stcore/stream"
        start = time.perf_counter()
        tasks = [asyncio.create_task(s.attend(url)) for s in students]
        done, unfinished = await asyncio.wait(tasks, timeout=TIME_LIMIT_S)
        for task in unfinished:
            task.cancel()
        wall, rss = time.perf_counter() - start, peak_rss_mb(server.pid)
    finally:
        server.terminate()
        server.wait(30)
    failed = [task.exception() for task in done if task.exception() is not None]
    failed += [TimeoutError(f"unfinished after {TIME_LIMIT_S} s")] * len(unfinished)
    latencies = sorted(x for s in students for x in s.step_latencies)
    lost = sum(s.lost for s in students) + len(failed)
    if len(latencies) < 2:
        print(f"{count} websocket students, {model_name} model: fewer than two Step clicks answered; lost {lost}; "
              f"failures: {sorted({repr(r) for r in failed})[:3]}")
        return
    cuts = quantiles(latencies, n=100, method="inclusive")
    print(f"{count} websocket students, preset 05, {model_name} model, `streamlit run app.py` on 127.0.0.1: "
          f"{len(latencies)} Step clicks, click to rerun finished p50 {cuts[49] * 1e3:.0f} ms, "
          f"p95 {cuts[94] * 1e3:.0f} ms, max {latencies[-1] * 1e3:.0f} ms; lost {lost}; server peak RSS "
          f"{rss:.0f} MB; {wall:.0f} s")
    for error in {repr(r) for r in failed}:
        print(f"    a student failed: {error}")
    panels = [s.page.panel for s in students if s.page.panel]
    if panels and (found := BATCHES.search(max(panels, key=len))):
        print(f"    model batch sizes (sessions per forward pass, as the server panel showed): {found.group(1)}")


if __name__ == "__main__":
    asyncio.run(main())
