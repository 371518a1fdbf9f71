"""Half-open clients: N connections that each send part of a request's headers and then nothing (a slowloris, or
clients gone without closing), held HOLD_S, while a student keeps stepping a page of the same server (Streamlit's
websocket protocol, tools/websocket_page.py). First straight to the Streamlit server (fake model, under the path
p1), then through nginx with tools/nginx_schedlab.conf where nginx is installed (as bench/bench_class_proxy.py runs
it; skipped with a note without it). Prints how many of the N were closed by the server and when, and the
student's step latencies meanwhile.
Run: python -m bench.bench_half_open [connections] [--hold S]
"""

import argparse
import asyncio
import re
import subprocess
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from bench.bench_class_proxy import NO_NGINX, nginx_binary, nginx_conf
from bench.stats import p50
from tools.app_server import app_server, free_port
from tools.websocket_page import WebsocketPage

PARTIAL_REQUEST = b"GET /p1/ HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: half-open\r\n"  # never the blank line
STEP_EVERY_S = 0.5


async def half_open(port: int, opened: float) -> float | None:
    """Seconds from `opened` until the server closed this connection; None while it holds it (cancelled)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(PARTIAL_REQUEST)
    await writer.drain()
    try:
        await reader.read()  # until the server closes it (nginx first answers 408 to some, then closes)
        return time.monotonic() - opened
    except ConnectionError:
        return time.monotonic() - opened
    finally:
        writer.close()


async def student(url: str, until: float) -> list[float]:
    """Step a page from frame 0, one step every STEP_EVERY_S until `until`; each step's seconds."""
    latencies = []
    async with WebsocketPage(url, "scenario=05_prefix_caching") as page:
        await page.rerun()
        while time.monotonic() < until:
            asked, want = time.monotonic(), page.last + 1
            await page.rerun([page.request_trigger(want), page.player_state({})], page.player_fragment)
            if page.last >= want:
                latencies.append(time.monotonic() - asked)
            await asyncio.sleep(STEP_EVERY_S)
    return latencies


async def hold(port: int, url: str, connections: int, hold_s: float) -> tuple[list[float], list[float], int]:
    """(seconds until each closed connection closed, the student's step latencies, connections still open)."""
    opened = time.monotonic()
    tasks = [asyncio.create_task(half_open(port, opened)) for _ in range(connections)]
    latencies = await student(url, opened + hold_s)
    done = [task.result() for task in tasks if task.done() and not task.exception()]
    for task in tasks:
        task.cancel()
    return sorted(done), latencies, connections - len(done)


def report(where: str, connections: int, hold_s: float, closed: list[float], latencies: list[float], still: int):
    after = f", the last after {closed[-1]:.1f} s" if closed else ""
    steps = (f"p50 {p50(latencies):.2f} s, max {max(latencies):.2f} s ({len(latencies)} steps)"
             if latencies else "no step answered")
    print(f"{where}: {connections} half-open connections held {hold_s:.0f} s: {len(closed)} closed by the server"
          f"{after}, {still} still open; a student stepping meanwhile: {steps}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("connections", type=int, nargs="?", default=100)
    parser.add_argument("--hold", type=float, default=20.0, help="seconds (nginx closes them after 10)")
    args = parser.parse_args()
    with ExitStack() as stack, tempfile.TemporaryDirectory() as folder:
        base, _ = stack.enter_context(app_server("fake", base_path="p1"))
        port = int(re.search(r":(\d+)/", base).group(1))
        report("straight to Streamlit", args.connections, args.hold,
               *asyncio.run(hold(port, base, args.connections, args.hold)))
        nginx = nginx_binary()
        if nginx is None:
            print(f"through nginx: skipped, {NO_NGINX}")
            return
        listen = free_port()
        conf = nginx_conf(Path(folder), listen, {"p1": port})
        subprocess.run([nginx, "-t", "-c", str(conf)], check=True, capture_output=True)
        proxy = subprocess.Popen([nginx, "-c", str(conf), "-g", "daemon off;"], stderr=subprocess.DEVNULL)
        stack.callback(lambda: (proxy.terminate(), proxy.wait(10)))
        time.sleep(0.5)
        report("through nginx (tools/nginx_schedlab.conf)", args.connections, args.hold,
               *asyncio.run(hold(listen, f"http://127.0.0.1:{listen}/p1", args.connections, args.hold)))


if __name__ == "__main__":
    main()
