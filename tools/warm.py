"""Warm every server process before a class: `python -m tools.warm URL [URL ...] [--limit SECONDS]`
(`make warm URLS="http://127.0.0.1:8501/p1 http://127.0.0.1:8502/p2"`).

A process computes the presets $SCHEDLAB_PRECOMPUTE names once its first page is opened (session/precompute.py;
Streamlit runs nothing before a page). This opens one page on each process, as a browser would (Streamlit's
websocket protocol, the messages its own frontend sends): the process loads the model and starts the presets.
Then it reads that process's "This server" panel every few seconds until every preset is computed, at most
--limit seconds for all, and prints per process what is ready. Exits 1 if a process could not be reached or is
not ready in time. The panel is read in English (the page is opened with lang=en), its words from i18n/en.py.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from urllib.parse import urlsplit, urlunsplit

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from i18n import text

LIMIT_S, EVERY_S = 600.0, 5.0
PANEL = text("en", "server.precomputed", presets="")  # the panel's line on the presets computed at start
PENDING = (text("en", "precompute.waiting"), text("en", "precompute.computing"))


def stream_url(url: str) -> str:
    """Streamlit's websocket under a page address: http://host:8501/p1 -> ws://host:8501/p1/_stcore/stream."""
    parts = urlsplit(url)
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    return urlunsplit((scheme, parts.netloc, parts.path.rstrip("/") + "/_stcore/stream", "", ""))


def pending(line: str) -> list[str]:
    """The presets the panel's line says are still waiting or being computed ("name state; name state ...")."""
    entries = line.removeprefix(PANEL).split("; ") if line else []
    return [name for name, _, state in (e.partition(" ") for e in entries) if state.startswith(PENDING)]


async def open_page(ws, timeout_s: float) -> str | None:
    """One run of the page (what a browser's first message asks); the panel's precompute line, None without one."""
    back = BackMsg()
    back.rerun_script.query_string = "lang=en"
    await ws.send(back.SerializeToString())
    line = None
    async with asyncio.timeout(timeout_s):
        while True:
            msg = ForwardMsg()
            msg.ParseFromString(await ws.recv())
            kind = msg.WhichOneof("type")
            if kind == "delta" and msg.delta.HasField("new_element") and \
                    msg.delta.new_element.WhichOneof("type") == "markdown" and \
                    msg.delta.new_element.markdown.body.startswith(PANEL):
                line = msg.delta.new_element.markdown.body
            elif kind == "script_finished":
                return line


async def warm(url: str, deadline: float) -> tuple[bool, str]:
    """(ready, what to print) for one process."""
    start = time.monotonic()
    try:
        async with websockets.connect(stream_url(url), subprotocols=["streamlit"], max_size=2**27,
                                      open_timeout=max(1.0, deadline - start)) as ws:
            line = await open_page(ws, max(1.0, deadline - time.monotonic()))
            while pending(line) and time.monotonic() + EVERY_S < deadline:
                await asyncio.sleep(EVERY_S)
                line = await open_page(ws, max(1.0, deadline - time.monotonic()))
    except (OSError, TimeoutError, websockets.WebSocketException) as e:
        return False, f"{url}: not reached ({type(e).__name__}: {e})"
    took = f"{time.monotonic() - start:.0f} s"
    if line is None:
        return True, f"{url}: page opened in {took}; no presets to compute ($SCHEDLAB_PRECOMPUTE is not set there)"
    if left := pending(line):
        return False, f"{url}: NOT ready after {took}, still {', '.join(left)}: {line}"
    return True, f"{url}: ready in {took}: {line}"


async def warm_all(urls: list[str], limit_s: float) -> bool:
    deadline = time.monotonic() + limit_s
    results = await asyncio.gather(*(warm(url, deadline) for url in urls))
    for _, said in results:
        print(said, flush=True)
    return all(ready for ready, _ in results)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("urls", nargs="+", help="each process's own address, e.g. http://127.0.0.1:8501/p1")
    parser.add_argument("--limit", type=float, default=LIMIT_S, help="seconds to wait for all (default 600)")
    args = parser.parse_args(argv)
    return 0 if asyncio.run(warm_all(args.urls, args.limit)) else 1


if __name__ == "__main__":
    sys.exit(main())
