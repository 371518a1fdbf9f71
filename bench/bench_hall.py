"""A lecture hall (issue 34): one class across several server processes through Redis, behind nginx, and its faults.

Starts a Redis of its own (tests/helpers/redis_server.py: a free port, append-only file on, bounded in time), N
`streamlit run app.py` processes on the fake model with $SCHEDLAB_REDIS_URL set, and nginx as this user on a free
port of 127.0.0.1 with tools/nginx_schedlab_hall.conf (any process serves any student; a browser keeps to one by a
route cookie, and a process that does not answer is skipped). Everything is on 127.0.0.1, and the whole bench is
bounded (LIMIT_S; Redis and nginx run under `timeout`).

1. The lecture: bench/bench_class_follow.py's lecture through nginx, M followers (and the lecturer) spread by it:
   steps, Play and Pause, a prediction; printed as that bench prints it.
2. A process killed: a class on assignment 1 with F students in browsers of their own (a cookie for the token, a
   route cookie), through nginx; the lecturer's page straight on process 1. Every student names themselves and
   answers the question; every SUBMIT_EVERY-th breaks away, runs the assignment to its end, hands it in and
   follows again. The lecturer steps; then process N is killed (SIGKILL). Its students' websockets close; each
   reconnects through nginx after RECONNECT_S (as Streamlit's page does) and reruns: the time from the kill until
   each is back on the lecturer's frame, then the lecturer's next step reaching every student, and the votes and
   submissions the class holds afterwards (read from the store) against those sent.
3. Redis restarted: the same class; Redis stopped, the lecturer steps while it is down (its page says the class
   cannot be reached; its stage moves), Redis started again: the time until every student shows the lecturer's
   frame, and the votes and submissions kept.
`uptime` is printed before and after: other work on the machine slows every figure.
Run: python bench/bench_hall.py [followers] [processes] [--fault-followers F]
"""

import argparse
import asyncio
import contextlib
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import websockets
from redis import Redis
from streamlit.proto.WidgetStates_pb2 import WidgetState

from bench.bench_class_follow import Member, Named, lead, report, token_of
from bench.bench_class_proxy import nginx_binary
from bench.class_client import CLASS_CACHE_MB, OPEN_TIMEOUT_S, start_server, wait_for_server, warm_up
from bench.process_stats import family_cpu_seconds
from session.classroom import Registry
from session.redis_store import RedisStore
from tests.helpers.redis_server import RedisServer, installed
from tools.app_server import ROOT, free_port

LIMIT_S = 1500  # the whole bench, at most
ASSIGNMENT = "scenario=assignment_1_vip_deadline"
SUBMIT_EVERY, RECONNECT_S, BACK_LIMIT_S, SETUP_AT_ONCE = 5, 1.0, 30.0, 8
STORE_DOWN = "The class cannot be reached right now"
NGINX_LIFETIME_S = LIMIT_S + 60


def nginx_conf(folder: Path, listen: int, ports: list[int]) -> Path:
    """tools/nginx_schedlab_hall.conf on these ports, in an nginx.conf that keeps every file of nginx's in
    `folder` (nginx as this user)."""
    site = (ROOT / "tools" / "nginx_schedlab_hall.conf").read_text().replace("listen 80;",
                                                                            f"listen 127.0.0.1:{listen};")
    lines = site.splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if "server 127.0.0.1:" in line)
    servers = [line for line in lines if "server 127.0.0.1:" in line]
    template = servers[0].replace("127.0.0.1:8501", "127.0.0.1:{port}")
    lines[first:first + len(servers)] = [template.format(port=port) for port in ports]
    temp = " ".join(f"{kind}_temp_path {folder}/{kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi",
                                                                        "scgi"))
    conf = folder / "nginx.conf"
    conf.write_text(f"pid {folder}/nginx.pid; error_log {folder}/error.log; daemon off; events {{}}\n"
                    f"http {{ access_log off; {temp}\n{''.join(lines)}\n}}\n")
    return conf


class Browser(Named):
    """A student's browser: its token's cookie and nginx's route cookie, sent with every connection; after its
    websocket closes, it reconnects (through nginx) as Streamlit's page does."""

    def __init__(self, number: int, query: str):
        super().__init__(number, query, token_of(100 + number))
        self.route = f"student-{number}"
        self.dropped: float | None = None  # when its websocket closed
        self.connections = 0

    def connect(self, url: str):
        cookie = f"schedlab_browser={self.token}; schedlab_route={self.route}"
        return websockets.connect(url, subprotocols=["streamlit"], max_size=2**27, max_queue=None,
                                  ping_interval=None, additional_headers={"Cookie": cookie})

    def back_at(self, frame: int, since: float) -> float | None:
        """Seconds from `since` until the server first moved its player to `frame`."""
        return next((at - since for at, shown in self.page.moves if at >= since and shown == frame), None)


async def attend(student: Browser, url: str, ws, stop: asyncio.Event):
    """Listen on `ws`; when it closes, reconnect (RECONNECT_S later, as the page does) and open the class's page
    again, until `stop`."""
    while not stop.is_set():
        if ws is not None:
            with contextlib.suppress(websockets.ConnectionClosed, OSError):
                await student.listen(ws)
            student.dropped = time.perf_counter()
        if stop.is_set():
            return
        await asyncio.sleep(RECONNECT_S)
        try:
            ws = await student.connect(url).__aenter__()
            student.connections += 1
            await student.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
        except (OSError, websockets.ConnectionClosed, websockets.InvalidStatus, TimeoutError):
            ws = None


async def join(student: Browser, url: str, gate: asyncio.Semaphore):
    """Open the class's page, name oneself; the websocket."""
    async with gate:
        ws = await student.connect(url).__aenter__()
        student.connections += 1
        await student.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
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
    """The lecturer's player stops on `frame` (its state "play"), the page run waited for."""
    lecturer.state = {"play": {"frame": frame, "speed": 0}}
    lecturer.page.alerts.clear()
    await lecturer.rerun(ws, lecturer._component_state(), lecturer.page.player_fragment, timeout_s=OPEN_TIMEOUT_S)


async def all_at(students: list[Browser], frame: int, since: float, limit_s: float = BACK_LIMIT_S) -> list:
    """Waits (bounded) until every student's player was moved to `frame` after `since`; each one's seconds."""
    deadline = time.perf_counter() + limit_s
    while time.perf_counter() < deadline and any(s.back_at(frame, since) is None for s in students):
        await asyncio.sleep(0.05)
    return [s.back_at(frame, since) for s in students]


def most_students(room, servers: list):
    """Of the servers but the first (the lecturer's), the one with most of the class's tabs (the store names a
    process by its pid first: session/class_store.py `process_name`)."""
    tabs = {int(process.split("-")[0]): n for process, n in room.seats.tabs_by_process().items()}
    return max(servers[1:], key=lambda server: tabs.get(server.pid, 0))


def redis_commands(redis: RedisServer) -> dict[str, int]:
    """Commands Redis has answered so far, by name."""
    client = Redis.from_url(redis.url)
    try:
        return {name.removeprefix("cmdstat_"): stat["calls"] for name, stat in client.info("commandstats").items()}
    finally:
        client.close()


def kept(room) -> tuple[int, int]:
    """(votes, submissions) the class holds in the store."""
    return sum(len(poll.votes) for poll in room.polls.all()), len(room.submissions.of())


def seconds(values: list) -> str:
    came = sorted(v for v in values if v is not None)
    if not came:
        return "none came"
    return (f"p50 {came[len(came) // 2]:.1f} s, max {came[-1]:.1f} s ({len(came)} of {len(values)}"
            f"{'' if len(came) == len(values) else ', the others NOT within the limit'})")


async def faults(hall_url: str, lecturer_url: str, servers: list, redis: RedisServer, count: int):
    registry = Registry(store=RedisStore(redis.url))  # the bench's look at what the class holds
    lecturer = Named(-1, ASSIGNMENT, token_of(99_999))
    gate, stop = asyncio.Semaphore(SETUP_AT_ONCE), asyncio.Event()
    async with lecturer.connect(lecturer_url) as ws:
        await lecturer.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
        await lecturer.press(ws, "Start a class")
        lecturer.query = f"{ASSIGNMENT}&class={lecturer.page.code}"
        await lecturer.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
        room = registry.get(lecturer.page.code)
        students = [Browser(i, f"class={room.code}") for i in range(count)]
        sockets = await asyncio.gather(*(join(s, hall_url, gate) for s in students))
        toggle_id, fragment = lecturer.page.widgets["Predict, then reveal"]
        await lecturer.rerun(ws, [WidgetState(id=toggle_id, bool_value=True), *lecturer._component_state()], fragment)
        voted = sum(await asyncio.gather(*(vote(s, w, gate) for s, w in zip(students, sockets, strict=True))))
        handing = [(s, w) for s, w in zip(students, sockets, strict=True) if s.number % SUBMIT_EVERY == 0]
        handed = sum(await asyncio.gather(*(hand_in(s, w, gate) for s, w in handing)))
        sent = kept(room)
        print(f"    the class: {count} students through nginx named, {voted} answers sent, {handed} assignments "
              f"handed in; the store holds {sent[0]} votes, {sent[1]} submissions")
        tasks = [asyncio.create_task(attend(s, hall_url, w, stop)) for s, w in zip(students, sockets, strict=True)]
        moved = time.perf_counter()
        await step_to(lecturer, ws, 1)
        await all_at(students, 1, moved)

        victim = most_students(room, servers)
        killed = time.perf_counter()
        victim.send_signal(signal.SIGKILL)
        await asyncio.sleep(RECONNECT_S + 0.5)
        dropped = [s for s in students if s.dropped is not None and s.dropped >= killed]
        back = await all_at(dropped, 1, killed)
        moved = time.perf_counter()
        await step_to(lecturer, ws, 2)
        everyone = await all_at(students, 2, moved)
        votes, submissions = kept(room)
        print(f"process {servers.index(victim) + 1} killed (SIGKILL): {len(dropped)} of {count} students' "
              f"websockets closed; back on the lecturer's frame after the kill {seconds(back)}; the lecturer's next "
              f"step reached every student {seconds(everyone)}; {sent[0] - votes} votes and {sent[1] - submissions} "
              f"submissions lost ({votes} and {submissions} kept)")

        redis.stop()
        down = time.perf_counter()
        await step_to(lecturer, ws, 3)  # the lecturer's stage moves while the class cannot be reached
        said = any(STORE_DOWN in alert for alert in lecturer.page.alerts)
        await lecturer.request(ws, lecturer.page.last + 10)  # and its player fetches frames ahead
        stage = lecturer.page.last
        await asyncio.sleep(2.0)
        redis.start()
        up = time.perf_counter()
        following = await all_at(students, 3, down)
        votes, submissions = kept(room)
        print(f"Redis restarted (append-only file on; down {up - down:.1f} s, the lecturer stepped meanwhile: its "
              f"page {'said' if said else 'did NOT say'} the class cannot be reached, its player fetched frames up "
              f"to {stage}): "
              f"every student on the lecturer's frame after Redis was back "
              f"{seconds([None if x is None else max(0.0, x - (up - down)) for x in following])}; "
              f"{sent[0] - votes} votes and {sent[1] - submissions} submissions lost")
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    registry.store.close()


async def hall(followers: int, processes: int, fault_followers: int) -> None:
    with RedisServer() as redis, tempfile.TemporaryDirectory(prefix="schedlab-nginx-") as folder:
        env = dict(os.environ, SCHEDLAB_RUNNER="fake", SCHEDLAB_RUN_CACHE_MB=CLASS_CACHE_MB,
                   SCHEDLAB_REDIS_URL=redis.url, SCHEDLAB_PRECOMPUTE="")
        ports, listen = [free_port() for _ in range(processes)], free_port()
        servers = [start_server(env, port) for port in ports]
        nginx = subprocess.Popen(["timeout", str(NGINX_LIFETIME_S), nginx_binary(),
                                  "-c", str(nginx_conf(Path(folder), listen, ports))],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            urls = [f"ws://127.0.0.1:{port}/_stcore/stream" for port in ports]
            for port, url in zip(ports, urls, strict=True):
                await wait_for_server(port)
                await warm_up(url, False)
            await wait_for_server(listen)
            hall_url = f"ws://127.0.0.1:{listen}/_stcore/stream"
            students = [Member(i, "") for i in range(followers)]
            cpu_start = sum(family_cpu_seconds(server.pid) for server in servers)
            commands = redis_commands(redis)
            result = await lead(hall_url, students, [hall_url])
            cpu = sum(family_cpu_seconds(server.pid) for server in servers) - cpu_start
            commands = {name: n - commands.get(name, 0) for name, n in redis_commands(redis).items()}
            report(students, result, f"preset 05, fake model, {processes} processes through Redis, all through "
                   "nginx", cpu)
            moves, total = len(result["steps"]) * followers, sum(commands.values())
            print(f"    Redis commands during the lecture: {total}, {total / moves:.1f} "
                  f"per follower per lecturer's step (" + ", ".join(
                      f"{name} {n}" for name, n in sorted(commands.items(), key=lambda kv: -kv[1])[:6]) + ")")
            print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
            await faults(hall_url, urls[0], servers, redis, fault_followers)
        finally:
            nginx.terminate()
            for server in servers:
                server.terminate()
            for server in servers:
                server.wait(30)
            nginx.wait(10)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("followers", nargs="?", type=int, default=90)
    parser.add_argument("processes", nargs="?", type=int, default=3)
    parser.add_argument("--fault-followers", type=int, default=30, help="students of the class the faults hit")
    args = parser.parse_args()
    if not installed() or nginx_binary() is None:
        print("lecture hall: skipped, redis-server or nginx is not installed (make install: "
              "tools/ensure_debian_packages.py)")
        return
    asyncio.run(asyncio.wait_for(hall(args.followers, args.processes, args.fault_followers), LIMIT_S))


if __name__ == "__main__":
    main()
