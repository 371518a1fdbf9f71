"""The lecture hall's faults (issue 46; bench/bench_hall.py runs them after its lecture, `make hall`).

A class on assignment 1: a lecturer and F named students, each a browser of its own speaking Streamlit's websocket
protocol (a cookie for its token, nginx's route cookie), all through nginx (tools/nginx_schedlab_hall.conf). Every
student names themselves and answers the question; every SUBMIT_EVERY-th breaks away, runs the assignment to its
end, hands it in and follows again. What was cast is kept by the bench. Then, one after the other:

1. the lecturer's own process killed (SIGKILL) and started again on its port, as a supervisor does: the lecturer's
   page reconnects through nginx to a live process (the time until it leads again);
2. Redis killed (SIGKILL) and started again from its append-only file;
3. a process stopped (SIGSTOP) for STOP_S, one with students: the time a new page whose route cookie names it takes
   to be answered through nginx (nginx takes the process for hung and asks the next), then SIGCONT;
4. a rolling restart: each process in turn stopped (SIGTERM) and started again, the next once it serves a page and
   nginx's fail_timeout has passed (never two processes set aside at once).

After each: the lecturer steps, and the time until every student shows the step; the votes and submissions the store
holds against those cast; and both exports as the lecturer's page downloads them (the Class panel's buttons: the
file is made on the process of the page's websocket, then fetched through nginx under the lecturer's route cookie,
which may name another process since the failover), each compared with what was cast. Bounded (each wait has a
limit); the load average is printed with each fault.
"""

import asyncio
import contextlib
import csv
import io
import json
import os
import signal
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from pathlib import Path

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from bench.bench_class_follow import Named, NamedPage
from bench.class_client import OPEN_TIMEOUT_S, bench_token, start_server, wait_for_server, warm_up
from session.classroom import Registry
from session.redis_store import RedisStore
from tests.helpers.redis_server import RedisServer

ASSIGNMENT = "scenario=assignment_1_vip_deadline"
SUBMIT_EVERY, RECONNECT_S, BACK_LIMIT_S, SETUP_AT_ONCE = 5, 1.0, 30.0, 8
STOP_S = 12.0  # how long the stopped process stays stopped
PAGE_LIMIT_S = 10.0  # the most a new page may wait on a hung process (issue 46)
FAIL_TIMEOUT_S = 10.0  # nginx's fail_timeout (tools/nginx_schedlab_hall.conf): a process set aside is asked again
PREDICTIONS, GRADEBOOK = "Export the class's predictions (CSV)", "Export the gradebook (CSV)"
STORE_DOWN = "The class cannot be reached right now"


class HallPage(NamedPage):
    """A class page that also reads its session's id and the download buttons (label -> (the file's address, the
    deferred file's id: a file made when clicked))."""

    def __init__(self):
        super().__init__()
        self.session_id = ""
        self.downloads: dict[str, tuple[str, str]] = {}

    def read(self, msg: ForwardMsg):
        super().read(msg)
        if msg.WhichOneof("type") == "new_session":
            self.session_id = msg.new_session.initialize.session_id
        elif msg.WhichOneof("type") == "delta" and msg.delta.new_element.WhichOneof("type") == "download_button":
            button = msg.delta.new_element.download_button
            self.downloads[button.label] = (button.url, button.deferred_file_id)


class Browser(Named):
    """A browser: its token's cookie and nginx's route cookie, sent with every connection; after its websocket
    closes, it reconnects (through nginx) as Streamlit's page does."""

    def __init__(self, number: int, query: str):
        super().__init__(number, query, bench_token(100 + number))
        self.page = HallPage()
        self.route = f"browser-{number}"
        self.dropped: float | None = None  # when its websocket closed
        self.connections = 0

    @property
    def cookie(self) -> str:
        return f"schedlab_browser={self.token}; schedlab_route={self.route}"

    def connect(self, url: str):
        return websockets.connect(url, subprotocols=["streamlit"], max_size=2**27, max_queue=None,
                                  ping_interval=None, additional_headers={"Cookie": self.cookie})

    async def open(self, url: str):
        """A new page (its websocket through nginx), run once; the websocket. A new session's player holds no
        frames, and counts its run and the server's moves afresh."""
        ws = await self.connect(url).__aenter__()
        self.page.run = self.page.last = self.page.cursor_moves = -1
        self.connections += 1
        await self.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
        return ws

    async def reopen(self, url: str, limit_s: float = BACK_LIMIT_S):
        """Reconnect as the page does (every RECONNECT_S) until a page run finishes; the websocket (None: not
        within `limit_s`)."""
        deadline = time.perf_counter() + limit_s
        while time.perf_counter() < deadline:
            await asyncio.sleep(RECONNECT_S)
            with contextlib.suppress(OSError, websockets.ConnectionClosed, websockets.InvalidStatus, TimeoutError):
                return await self.open(url)
        return None

    def back_at(self, frame: int, since: float) -> float | None:
        """Seconds from `since` until the server first moved its player to `frame`."""
        return next((at - since for at, shown in self.page.moves if at >= since and shown == frame), None)


async def attend(student: Browser, url: str, ws, stop: asyncio.Event):
    """Listen on `ws`; when it closes, reconnect and open the class's page again, until `stop`."""
    while not stop.is_set():
        if ws is not None:
            with contextlib.suppress(websockets.ConnectionClosed, OSError):
                await student.listen(ws)
            student.dropped = time.perf_counter()
        if stop.is_set():
            return
        ws = await student.reopen(url, limit_s=5 * BACK_LIMIT_S)


async def join(student: Browser, url: str, gate: asyncio.Semaphore):
    """Open the class's page, name oneself; the websocket."""
    async with gate:
        ws = await student.open(url)
        await student.name_as(ws, f"Student {student.number}")
        await student.settle(ws, lambda page: bool(page.named))
        return ws


async def vote(student: Browser, ws, gate: asyncio.Semaphore) -> bool:
    async with gate:
        if not await student.settle(ws, lambda page: "Send my answer" in page.widgets):
            return False
        radio_id, fragment = student.page.widgets["Your prediction"]
        widgets, _ = student.click("Send my answer")
        await student.rerun(ws, [WidgetState(id=radio_id, int_value=student.number % 2), *widgets,
                                 *student._component_state()], fragment)
        return True


async def hand_in(student: Browser, ws, gate: asyncio.Semaphore) -> bool:
    """Break away, run the assignment to its end, hand it in, follow again."""
    async with gate:
        await student.press(ws, "Break away")
        if not await student.settle(ws, lambda page: "Run to the end" in page.widgets):
            return False
        await student.press(ws, "Run to the end")
        if not await student.settle(ws, lambda page: "Submit to the lecturer" in page.widgets):
            return False
        await student.press(ws, "Submit to the lecturer")
        await student.settle(ws, lambda page: "Follow again" in page.widgets)
        await student.press(ws, "Follow again")
        return True


async def step_to(lecturer: Named, ws, frame: int):
    """The lecturer's player stops on `frame` (its state "play"), the page run waited for; the frames fetched first
    where the player does not hold it yet."""
    if lecturer.page.last < frame:
        await lecturer.request(ws, frame + 10)
    lecturer.state = {"play": {"frame": frame, "speed": 0}}
    lecturer.page.alerts.clear()
    await lecturer.rerun(ws, lecturer._component_state(), lecturer.page.player_fragment, timeout_s=OPEN_TIMEOUT_S)


async def all_at(students: list[Browser], frame: int, since: float, limit_s: float = BACK_LIMIT_S) -> list:
    """Waits (bounded) until every student's player was moved to `frame` after `since`; each one's seconds."""
    deadline = time.perf_counter() + limit_s
    while time.perf_counter() < deadline and any(s.back_at(frame, since) is None for s in students):
        await asyncio.sleep(0.05)
    return [s.back_at(frame, since) for s in students]


async def desk_counts(lecturer: Browser, ws, wanted, since: float, limit_s: float = BACK_LIMIT_S) -> float | None:
    """Seconds from `since` until the lecturer's desk counts (named, tabs, following) satisfy `wanted` (its page run
    again every half second, as its desk redraws), None when not within `limit_s`."""
    deadline = since + limit_s
    while time.perf_counter() < deadline:
        await lecturer.rerun(ws, lecturer._component_state(), timeout_s=OPEN_TIMEOUT_S)
        if lecturer.page.counts is not None and wanted(lecturer.page.counts):
            return time.perf_counter() - since
        await asyncio.sleep(0.5)
    return None


def after(value: float | None) -> str:
    return "NOT within the limit" if value is None else f"after {value:.1f} s"


def seconds(values: list) -> str:
    came = sorted(v for v in values if v is not None)
    if not came:
        return "none came"
    return (f"p50 {came[len(came) // 2]:.1f} s, max {came[-1]:.1f} s ({len(came)} of {len(values)}"
            f"{'' if len(came) == len(values) else ', the others NOT within the limit'})")


def http_get(url: str, cookie: str, timeout_s: float = 30.0) -> tuple[int, bytes, float]:
    """(status, body, seconds) of a GET; status 0 when nothing answered within `timeout_s`."""
    start = time.perf_counter()
    request = urllib.request.Request(url, headers={"Cookie": cookie})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as answer:
            return answer.status, answer.read(), time.perf_counter() - start
    except urllib.error.HTTPError as e:
        return e.code, b"", time.perf_counter() - start
    except OSError:
        return 0, b"", time.perf_counter() - start


async def download(lecturer: Browser, ws, label: str, http: str) -> tuple[int, str]:
    """What the lecturer's download button gives: its file, made on the process of the page's websocket (when the
    page ran, or, a deferred download, asked of it as a click does), fetched through nginx with the page's cookies.
    (HTTP status, the text)."""
    url, deferred = lecturer.page.downloads[label]
    if deferred:
        back = BackMsg()
        request = back.backend_operation_request
        request.request_id, request.session_id = uuid.uuid4().hex, lecturer.page.session_id
        request.deferred_file.file_id = deferred
        await ws.send(back.SerializeToString())
        async with asyncio.timeout(OPEN_TIMEOUT_S):
            while True:
                msg = ForwardMsg()
                msg.ParseFromString(await ws.recv())
                lecturer.page.read(msg)
                answer = msg.backend_operation_response
                if msg.WhichOneof("type") == "backend_operation_response" and \
                        answer.request_id == request.request_id:
                    break
        if not answer.deferred_file.url:
            return 0, answer.error_msg
        url = answer.deferred_file.url
    status, body, _ = await asyncio.to_thread(http_get, http + url, lecturer.cookie)
    return status, body.decode("utf-8-sig")


async def exported(lecturer: Browser, ws, label: str, http: str, right, clicks: int = 3) -> str:
    """The export downloaded and compared with what was cast: said in words, with the clicks it took (a file made
    on a click is dropped by Streamlit once two page runs of its process have ended, so under load one may be gone
    before it is fetched: clicked again, as a lecturer would)."""
    for click in range(1, clicks + 1):
        status, text = await download(lecturer, ws, label, http)
        if status == 200:
            return ("fetched and right" if right(text) else "fetched and WRONG") + (
                f" (at click {click})" if click > 1 else "")
    return f"NOT fetched in {clicks} clicks (HTTP {status}: {text[:80]})"


class Cast:
    """What the students cast, as the bench sent it: each voter's choice, the names of those who handed in."""

    def __init__(self, voters: list[Browser], handed: list[Browser]):
        self.votes = Counter(s.number % 2 for s in voters)
        self.handed = {f"Student {s.number}" for s in handed}

    def predictions_right(self, text: str) -> bool:
        """The predictions' CSV: the one question answered, its counts per choice those cast; no other answered."""
        rows = list(csv.DictReader(io.StringIO(text)))
        polls: dict[tuple[str, str], list[dict]] = {}
        for row in rows:
            polls.setdefault((row["run"], row["step"]), []).append(row)
        answered = [choices for choices in polls.values() if int(choices[0]["answered"])]
        return len(answered) == 1 and [int(r["count"]) for r in answered[0]] == [
            self.votes[i] for i in range(len(answered[0]))]

    def gradebook_right(self, text: str) -> bool:
        """The gradebook: those who handed in, exactly, have the assignment's verdict."""
        rows = list(csv.DictReader(io.StringIO(text)))
        return {r["name"] for r in rows if r.get(f"{ASSIGNMENT.split('=')[1]}_passed")} == self.handed


def kept(room, cast: Cast) -> str:
    """The votes and submissions the store holds against those cast."""
    votes = sum(len(poll.votes) for poll in room.polls.all())
    submissions = len(room.submissions.of())
    cast_votes = sum(cast.votes.values())
    return (f"{cast_votes - votes} votes and {len(cast.handed) - submissions} submissions lost "
            f"({votes} of {cast_votes}, {submissions} of {len(cast.handed)} kept)")


def load() -> str:
    return f"load average {os.getloadavg()[0]:.1f}"


class Hall:
    """The hall the faults hit: nginx's address and access log, the server processes (started again on their
    ports), Redis."""

    def __init__(self, listen: int, log: Path, ports: list[int], servers: list, env: dict, redis: RedisServer):
        self.ws_url, self.http = f"ws://127.0.0.1:{listen}/_stcore/stream", f"http://127.0.0.1:{listen}"
        self.log, self.ports, self.servers, self.env, self.redis = log, ports, servers, env, redis

    def index_of(self, process: str) -> int | None:
        """The server of a process as the store names it (its pid first: session/class_store.py); None for one that
        has gone."""
        pid = int(process.split("-")[0])
        return next((i for i, server in enumerate(self.servers) if server.pid == pid), None)

    async def stop(self, i: int, how: signal.Signals):
        self.servers[i].send_signal(how)
        await asyncio.to_thread(self.servers[i].wait, 60)

    async def start(self, i: int):
        """Server i started again on its port, waited for until it answers."""
        self.servers[i] = start_server(self.env, self.ports[i])
        await wait_for_server(self.ports[i])

    def route_to(self, i: int) -> str:
        """A route cookie nginx sends to server i (found by asking: nginx's access log names the process)."""
        for k in range(200):
            route = f"probe-{k}"
            http_get(self.http + "/_stcore/health", f"schedlab_route={route}")
            last = self.log.read_text().splitlines()[-1].split("|")
            if last[0] == route and last[1] == f"127.0.0.1:{self.ports[i]}":
                return route
        raise RuntimeError(f"no route to process {i + 1} in 200 tries")

    def media_fetches(self) -> tuple[int, int]:
        """(downloads' files fetched through nginx, of which the process the cookie named had not got: 404, then
        another process answered), from nginx's access log."""
        media = [line.split("|") for line in self.log.read_text().splitlines() if "|/media/" in line]
        return len(media), sum(status.startswith("404, ") and answer == "200" for _, _, status, answer, _ in media)

    def kill_redis(self):
        """Redis killed (SIGKILL: nothing written on the way out; its append-only file is what it wrote so far)."""
        children = Path(f"/proc/{self.redis.process.pid}/task/{self.redis.process.pid}/children").read_text()
        for pid in children.split():  # redis-server, under `timeout` (tests/helpers/redis_server.py)
            os.kill(int(pid), signal.SIGKILL)
        self.redis.process.wait(10)
        self.redis.process = None


async def live(lecturer: Browser, ws, url: str):
    """The lecturer's page run again (its buttons current); reconnected first if its websocket closed."""
    try:
        await lecturer.rerun(ws, lecturer._component_state(), timeout_s=OPEN_TIMEOUT_S)
        return ws
    except (websockets.ConnectionClosed, OSError, TimeoutError):
        return await lecturer.reopen(url)


async def checked(what: str, hall: Hall, lecturer: Browser, ws, students: list[Browser], room, cast: Cast,
                  frame: int, figures: str):
    """After a fault: the lecturer's step reaching every student, what the store kept, both exports; one line."""
    moved = time.perf_counter()
    await step_to(lecturer, ws, frame)
    reached = await all_at(students, frame, moved)
    predictions = await exported(lecturer, ws, PREDICTIONS, hall.http, cast.predictions_right)
    gradebook = await exported(lecturer, ws, GRADEBOOK, hall.http, cast.gradebook_right)
    exports = f"predictions CSV {predictions}, gradebook CSV {gradebook}"
    print(f"{what}: {figures}; the lecturer's next step reached every student {seconds(reached)}; "
          f"{kept(room, cast)}; {exports} ({load()})", flush=True)


async def faults(hall: Hall, count: int):
    registry = Registry(store=RedisStore(hall.redis.url))  # the bench's look at what the class holds
    lecturer = Browser(-1, ASSIGNMENT)
    gate, stop = asyncio.Semaphore(SETUP_AT_ONCE), asyncio.Event()
    ws = await lecturer.open(hall.ws_url)
    await lecturer.press(ws, "Start a class")
    lecturer.query = f"{ASSIGNMENT}&class={lecturer.page.code}"
    await lecturer.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
    room = registry.get(lecturer.page.code)
    students = [Browser(i, f"class={room.code}") for i in range(count)]
    sockets = await asyncio.gather(*(join(s, hall.ws_url, gate) for s in students))
    toggle_id, fragment = lecturer.page.widgets["Predict, then reveal"]
    await lecturer.rerun(ws, [WidgetState(id=toggle_id, bool_value=True), *lecturer._component_state()], fragment)
    voted = await asyncio.gather(*(vote(s, w, gate) for s, w in zip(students, sockets, strict=True)))
    handing = [(s, w) for s, w in zip(students, sockets, strict=True) if s.number % SUBMIT_EVERY == 0]
    handed = await asyncio.gather(*(hand_in(s, w, gate) for s, w in handing))
    cast = Cast([s for s, ok in zip(students, voted, strict=True) if ok],
                [s for (s, _), ok in zip(handing, handed, strict=True) if ok])
    print(f"    the class: {count} students through nginx named, {sum(cast.votes.values())} answers sent, "
          f"{len(cast.handed)} assignments handed in; {kept(room, cast)} before any fault", flush=True)
    tasks = [asyncio.create_task(attend(s, hall.ws_url, w, stop)) for s, w in zip(students, sockets, strict=True)]
    await checked("before any fault", hall, lecturer, ws, students, room, cast, 1, "all processes up")
    try:
        # 1. the lecturer's process killed, started again on its port once the lecturer's page is on another
        process, _ = json.loads(registry.store.get(room.keys.lectern))
        victim = hall.index_of(process)
        killed = time.perf_counter()
        await hall.stop(victim, signal.SIGKILL)
        ws = await lecturer.reopen(hall.ws_url)
        leads_again = time.perf_counter() - killed
        counted = await desk_counts(lecturer, ws, lambda counts: counts[1] == count, killed)
        await hall.start(victim)
        restarted = time.perf_counter() - killed
        await asyncio.sleep(max(0.0, FAIL_TIMEOUT_S + 1 - (time.perf_counter() - killed)))  # nginx asks it again
        ws = await live(lecturer, ws, hall.ws_url)
        await checked(f"process {victim + 1} (the lecturer's) killed (SIGKILL) and started again", hall, lecturer,
                      ws, students, room, cast, 2, f"the lecturer's page led again {leads_again:.1f} s after the kill "
                      f"(on another process), its desk counted the {count} tabs (none of the dead process's) "
                      f"{after(counted)}, the process answered again {restarted:.1f} s after the kill")

        # 2. Redis killed, started again from its append-only file
        await asyncio.sleep(1.5)  # its append-only file is written every second (appendfsync everysec)
        hall.kill_redis()
        down = time.perf_counter()
        await step_to(lecturer, ws, 3)  # the lecturer's stage moves while the class cannot be reached
        said = any(STORE_DOWN in alert for alert in lecturer.page.alerts)
        await asyncio.sleep(2.0)
        hall.redis.start()
        up = time.perf_counter()
        back = await all_at(students, 3, up)
        ws = await live(lecturer, ws, hall.ws_url)
        await checked("Redis killed (SIGKILL) and started again from its append-only file", hall, lecturer, ws,
                      students, room, cast, 4, f"down {up - down:.1f} s, the lecturer's page "
                      f"{'said' if said else 'did NOT say'} the class cannot be reached; every student on the "
                      f"lecturer's frame after Redis was back {seconds(back)}")

        # 3. a process stopped (not the lecturer's): a new page whose route cookie names it
        lectern, _ = json.loads(registry.store.get(room.keys.lectern))
        process, hung = max(((p, n) for p, n in room.seats.tabs_by_process().items()
                             if p != lectern and hall.index_of(p) is not None), key=lambda pn: pn[1])
        stopped = hall.index_of(process)  # the process with most students but the lecturer's
        newcomer = f"schedlab_route={await asyncio.to_thread(hall.route_to, stopped)}"
        hall.servers[stopped].send_signal(signal.SIGSTOP)
        halted = time.perf_counter()
        status, _, page_s = await asyncio.to_thread(http_get, hall.http + "/", newcomer, 2 * PAGE_LIMIT_S)
        health, _, health_s = await asyncio.to_thread(http_get, hall.http + "/_stcore/health", newcomer,
                                                      2 * PAGE_LIMIT_S)
        uncounted = await desk_counts(lecturer, ws, lambda counts: counts[1] == count - hung, halted, STOP_S)
        await asyncio.sleep(max(0.0, STOP_S - (time.perf_counter() - halted)))
        hall.servers[stopped].send_signal(signal.SIGCONT)
        await checked(f"process {stopped + 1} stopped (SIGSTOP) {STOP_S:.0f} s, then SIGCONT", hall, lecturer, ws,
                      students, room, cast, 5, f"a new page whose route cookie names it answered HTTP {status} in "
                      f"{page_s:.1f} s, then its health check HTTP {health} in {health_s:.1f} s (the limit "
                      f"{PAGE_LIMIT_S:.0f} s); its {hung} tabs left the desk's counts {after(uncounted)}")

        # 4. a rolling restart: each process in turn, the next once this one serves pages again and nginx, which set
        # it aside when it stopped, asks it again (fail_timeout): never two set aside at once
        started = time.perf_counter()
        for i in range(len(hall.servers)):
            stopping = time.perf_counter()
            await hall.stop(i, signal.SIGTERM)
            await hall.start(i)
            await warm_up(f"ws://127.0.0.1:{hall.ports[i]}/_stcore/stream", False)
            await asyncio.sleep(max(0.0, FAIL_TIMEOUT_S + 1 - (time.perf_counter() - stopping)))
        took = time.perf_counter() - started
        ws = await live(lecturer, ws, hall.ws_url)
        await checked(f"a rolling restart of the {len(hall.servers)} processes", hall, lecturer, ws, students,
                      room, cast, 6, f"each stopped (SIGTERM) and started again in turn, the next once it served a "
                      f"page and nginx's fail_timeout had passed, {took:.0f} s in all")
        fetched, elsewhere = hall.media_fetches()
        print(f"    the exports' files fetched through nginx: {fetched}, of which {elsewhere} were not on the process "
              "the route cookie named (404 there) and were served by the page's own process", flush=True)
    finally:
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        registry.store.close()
