"""Issue 47's guess and flood figures: a real `streamlit run serve.py` on 127.0.0.1 (fake model, the README's class
command, a server key of 12 characters: short enough that its guesses are limited), spoken to over Streamlit's
websocket protocol as browsers do (bench/class_client.py's way):

- a lecturer starts a class; then, at once, 30 real students behind one address join by the class's link, name
  themselves and reload twice, and the lecturer reloads 3 times, while 40 guessing sessions behind the same
  address try 100 wrong class codes (20 sessions x 5: the link, then the sidebar's Join) and 100 wrong server keys
  (20 sessions x 5); each guessing session also sends an X-Forwarded-For of its own (a client's word: ignored);
- the same through the trusted-proxy path: the server told SCHEDLAB_TRUSTED_PROXIES=127.0.0.1 and every connection
  carrying the X-Forwarded-For a proxy sets (one hall address, 198.51.100.7, for students and guessers alike);
- a flood: fresh browsers of one address each naming themselves in a class (its lecturer set the most names it
  takes to 500), as fast as the server answers, for FLOOD_S (at most FLOOD_MOST tries): the distinct names
  accepted in that minute.

Printed: legitimate refusals (must be 0), guesses checked (answered "no such class" / "not the server key")
against the allowed few (PER_IDENTITY each for codes and keys within the window), and the flood's names.
`--processes N` runs it all against a lecture hall instead: N server processes sharing a Redis of the bench's own
(the README's recipe, each page and each reload opened on the next process in turn): the guesses checked across
all of them must still be at most the allowance of one. `--before REV` runs the same against REV's tree first.
Bounded: every phase under PHASE_LIMIT_S, at most CONCURRENT connections at once; the servers are stopped at the end.
Run: python -m bench.bench_guesses [--processes 2] [--before main]
"""

import argparse
import asyncio
import contextlib
import functools
import itertools
import os
import secrets
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from bench.before import THIS_TREE, add_argument, tree_at
from bench.class_client import BENCH_TOKEN_SECRET, CLASS_CACHE_MB, start_server, wait_for_server
from engine.run.limits import BOUNDS
from i18n.en import MESSAGES
from session.limits import PER_IDENTITY
from session.tokens import signed
from tests.helpers.redis_server import RedisServer, installed
from tools.app_server import ROOT, free_port

STUDENTS, GUESSERS, GUESSES, LECTURER_RELOADS = 30, 40, 5, 3
SERVER_KEY = "bench-key-12"  # 12 characters: a key short enough to be found is limited by identity
HALL = "198.51.100.7"  # the address a declared proxy names for every connection of the hall
FLOOD_S, FLOOD_MOST = 60.0, 600
CONCURRENT, RUN_TIMEOUT_S, PHASE_LIMIT_S = 12, 60, 240
COOKIE = "schedlab_browser"
WAIT = "Too many"  # how a refusal for waiting begins (limit.codes, limit.keys, limit.names)
NO_CLASS, NOT_KEY = MESSAGES["class.unknown"][:30], MESSAGES["class.wrong_key"]


@dataclass
class Page:
    """One browser tab: a websocket session, the texts its last runs showed and its widgets by label."""
    url: str
    query: str = ""
    cookie: str | None = None
    forwarded: str | None = None
    texts: list[str] = field(default_factory=list)
    widgets: dict[str, str] = field(default_factory=dict)
    numbers: dict[str, str] = field(default_factory=dict)  # number inputs' ids by label
    shown_query: str = ""

    async def open(self, gate: asyncio.Semaphore):
        headers = {**({"Cookie": f"{COOKIE}={self.cookie}"} if self.cookie else {}),
                   **({"X-Forwarded-For": self.forwarded} if self.forwarded else {})}
        await gate.acquire()
        try:
            self.ws = await websockets.connect(self.url, subprotocols=["streamlit"], max_size=2**27,
                                               additional_headers=headers)
        except BaseException:
            gate.release()
            raise
        self.gate = gate
        await self.run()
        return self

    async def close(self):
        await self.ws.close()
        self.gate.release()

    async def run(self, widgets: list[WidgetState] = ()):
        """A rerun with `widgets`; what it showed replaces `texts`."""
        back = BackMsg()
        back.rerun_script.query_string = self.query
        back.rerun_script.widget_states.widgets.extend(widgets)
        await self.ws.send(back.SerializeToString())
        self.texts = []
        async with asyncio.timeout(RUN_TIMEOUT_S):
            while True:
                msg = ForwardMsg()
                msg.ParseFromString(await self.ws.recv())
                kind = msg.WhichOneof("type")
                if kind == "page_info_changed":
                    self.shown_query = msg.page_info_changed.query_string
                elif kind == "delta" and msg.delta.HasField("new_element"):
                    self.read(msg.delta.new_element)
                elif kind == "script_finished" and msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    return

    def read(self, element):
        kind = element.WhichOneof("type")
        if kind == "alert":
            self.texts.append(element.alert.body)
        elif kind == "markdown":
            self.texts.append(element.markdown.body)
        elif kind in ("button", "text_input"):
            widget = getattr(element, kind)
            self.widgets[widget.label] = widget.id
        elif kind == "number_input":
            self.numbers[element.number_input.label] = element.number_input.id

    async def submit(self, typed: dict[str, str], button: str):
        """Type into text inputs (by label) and click a button (a form's too)."""
        await self.run([*(WidgetState(id=self.widgets[label], string_value=value) for label, value in typed.items()),
                        WidgetState(id=self.widgets[MESSAGES[button]], trigger_value=True)])

    def says(self, text: str) -> bool:
        return any(text in shown for shown in self.texts)


@dataclass
class Tally:
    legit: int = 0
    refused: list[str] = field(default_factory=list)  # what a legitimate action was told instead
    checked: dict[str, int] = field(default_factory=lambda: {"codes": 0, "keys": 0})
    waited: dict[str, int] = field(default_factory=lambda: {"codes": 0, "keys": 0})
    other: int = 0

    def legitimate(self, ok: bool, page: Page, what: str):
        self.legit += 1
        if not ok:
            told = [text for text in page.texts if any(word in text for word in (WAIT, NO_CLASS, "has ended"))]
            self.refused.append(f"{what}: {told[-1] if told else 'not in the class'}")

    def guessed(self, kind: str, page: Page):
        if page.says(WAIT):
            self.waited[kind] += 1
        elif page.says(NO_CLASS if kind == "codes" else NOT_KEY):
            self.checked[kind] += 1
        else:
            self.other += 1


def token() -> str:
    """A new browser's token, signed as the bench's servers issue them (a made-up one they refuse)."""
    return signed(BENCH_TOKEN_SECRET, secrets.token_hex(12))


async def lecturer_starts(urls: Iterator[str], gate, forwarded: str | None, most_names: int = 0) -> tuple[str, str]:
    """(the lecturer's token, the class's code); `most_names`: the lecturer sets the most names the class takes
    (where the app has that setting)."""
    mine = token()
    page = await Page(next(urls), cookie=mine, forwarded=forwarded).open(gate)
    await page.submit({MESSAGES["class.lecturer_key"]: SERVER_KEY}, "class.start")
    code = urllib.parse.parse_qs(page.shown_query).get("class", [""])[0]
    if most_names and MESSAGES.get("class.most_names") in page.numbers:
        await page.run([WidgetState(id=page.numbers[MESSAGES["class.most_names"]], int_value=most_names)])
    await page.close()
    if not code:
        raise RuntimeError(f"the lecturer could not start a class: {page.texts}")
    return mine, code


async def student(urls, gate, code, n, tally: Tally, forwarded):
    mine, query, name = token(), f"class={code}", f"Student {n}"
    page = await Page(next(urls), query, mine, forwarded).open(gate)
    tally.legitimate(page.says(f"Following the lecturer (class {code})"), page, "join")
    if MESSAGES["class.your_name"] in page.widgets:
        await page.submit({MESSAGES["class.your_name"]: name}, "class.use_name")
    tally.legitimate(page.says(f"You are **{name}** in this class."), page, "name")
    await page.close()
    for _ in range(2):
        page = await Page(next(urls), query, mine, forwarded).open(gate)
        tally.legitimate(page.says(f"You are **{name}** in this class."), page, "reload")
        await page.close()


async def lecturer_reloads(urls, gate, code, mine, tally: Tally, forwarded):
    for _ in range(LECTURER_RELOADS):
        page = await Page(next(urls), f"class={code}", mine, forwarded).open(gate)
        tally.legitimate(page.says(f"You lead class **{code}**"), page, "lecturer's reload")
        await page.close()
        await asyncio.sleep(1.0)


def wrong_code() -> str:
    return "".join(secrets.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(5))


async def code_guesser(urls, gate, n, tally: Tally, forwarded):
    page = await Page(next(urls), f"class={wrong_code()}", token(), forwarded or f"10.66.{n}.1").open(gate)
    tally.guessed("codes", page)
    for _ in range(GUESSES - 1):
        await page.submit({MESSAGES["class.code"]: wrong_code()}, "class.join")
        tally.guessed("codes", page)
    await page.close()


async def key_guesser(urls, gate, n, tally: Tally, forwarded):
    page = await Page(next(urls), "", token(), forwarded or f"10.77.{n}.1").open(gate)
    for guess in range(GUESSES):
        await page.submit({MESSAGES["class.lecturer_key"]: f"guess-{n}-{guess}"}, "class.start")
        tally.guessed("keys", page)
    await page.close()


async def bounded(tasks) -> list:
    done, unfinished = await asyncio.wait([asyncio.ensure_future(t) for t in tasks], timeout=PHASE_LIMIT_S)
    for task in unfinished:
        task.cancel()
    return [t.exception() for t in done if t.exception() is not None] + \
        [TimeoutError(f"unfinished after {PHASE_LIMIT_S} s")] * len(unfinished)


async def class_under_guessing(urls: Iterator[str], forwarded: str | None) -> tuple[Tally, list, float]:
    gate, tally = asyncio.Semaphore(CONCURRENT), Tally()
    mine, code = await lecturer_starts(urls, gate, forwarded)
    start = time.perf_counter()
    failed = await bounded([*(student(urls, gate, code, n, tally, forwarded) for n in range(STUDENTS)),
                            lecturer_reloads(urls, gate, code, mine, tally, forwarded),
                            *(code_guesser(urls, gate, n, tally, forwarded) for n in range(GUESSERS // 2)),
                            *(key_guesser(urls, gate, n, tally, forwarded) for n in range(GUESSERS // 2))])
    return tally, failed, time.perf_counter() - start


async def flood(urls: Iterator[str]) -> tuple[int, int, float]:
    """(names accepted, refused for waiting, seconds) of fresh browsers of one address naming themselves."""
    gate = asyncio.Semaphore(CONCURRENT)
    _, code = await lecturer_starts(urls, gate, None, most_names=BOUNDS["class_names"][1])
    accepted = waited = 0
    start = time.perf_counter()

    async def one(n: int):
        nonlocal accepted, waited
        if time.perf_counter() - start > FLOOD_S:
            return
        page = await Page(next(urls), f"class={code}", token()).open(gate)
        if MESSAGES["class.your_name"] in page.widgets and time.perf_counter() - start <= FLOOD_S:
            await page.submit({MESSAGES["class.your_name"]: f"Flood {n}"}, "class.use_name")
            accepted += page.says(f"You are **Flood {n}** in this class.")
            waited += page.says(WAIT)
        await page.close()

    failed = await bounded([one(n) for n in range(FLOOD_MOST)])
    if failed:
        print(f"    flood: {len(failed)} browsers failed: {sorted({repr(f)[:100] for f in failed})[:2]}")
    return accepted, waited, min(FLOOD_S, time.perf_counter() - start)


def report(label: str, tally: Tally, failed: list, seconds: float):
    allowed = PER_IDENTITY
    met = not tally.refused and not failed and all(n <= allowed for n in tally.checked.values())
    print(f"  {label}: {STUDENTS} students joined, named, reloaded twice and the lecturer reloaded "
          f"{LECTURER_RELOADS} times while {GUESSERS} sessions guessed, {seconds:.0f} s: legitimate refusals "
          f"{len(tally.refused)} of {tally.legit}; wrong codes checked {tally.checked['codes']} of "
          f"{tally.checked['codes'] + tally.waited['codes']} (allowed {allowed}), wrong keys checked "
          f"{tally.checked['keys']} of {tally.checked['keys'] + tally.waited['keys']} (allowed {allowed}); the "
          f"rest refused unchecked, told to wait; {'met' if met else 'NOT MET'}")
    for refusal in tally.refused[:3]:
        print(f"    refused: {refusal}")
    if failed:
        print(f"    {len(failed)} clients failed: {sorted({repr(f)[:120] for f in failed})[:3]}")


def server_env(trusted: str, redis_url: str | None) -> dict:
    return dict(os.environ, SCHEDLAB_RUNNER="fake", SCHEDLAB_RUN_CACHE_MB=CLASS_CACHE_MB,
                SCHEDLAB_LECTURER_KEY=SERVER_KEY, SCHEDLAB_TRUSTED_PROXIES=trusted,
                **({"SCHEDLAB_REDIS_URL": redis_url} if redis_url else {}))


async def on_servers(root: Path, processes: int, trusted: str, measure):
    """`measure(urls)` against servers of their own (the counts of guesses start from nothing), stopped after:
    one, or a lecture hall of `processes` sharing a Redis of the bench's own, each page (each reload) opened on the
    next process in turn, as a proxy without sticky sessions hands them out."""
    with contextlib.ExitStack() as stack:
        redis_url = stack.enter_context(RedisServer()).url if processes > 1 else None
        ports = [free_port() for _ in range(processes)]
        servers = [start_server(server_env(trusted, redis_url), port, root) for port in ports]
        try:
            for port in ports:
                await wait_for_server(port)
            return await measure(itertools.cycle([f"ws://127.0.0.1:{port}/_stcore/stream" for port in ports]))
        finally:
            for server in servers:
                server.terminate()
            for server in servers:
                server.wait(30)


async def side(root: Path, name: str, processes: int):
    print(f"{name}" + (f", a lecture hall of {processes} processes sharing one Redis:" if processes > 1 else ":"))
    on_server = functools.partial(on_servers, root, processes)
    for label, trusted, forwarded in (("straight to the server (each guesser claims an X-Forwarded-For of its own)",
                                       "", None),
                                      (f"behind a declared proxy (SCHEDLAB_TRUSTED_PROXIES=127.0.0.1, X-Forwarded-For "
                                       f"{HALL} on every connection)", "127.0.0.1", HALL)):
        report(label, *await on_server(trusted, functools.partial(class_under_guessing, forwarded=forwarded)))
    accepted, waited, seconds = await on_server("", flood)
    print(f"  flood from one address: {accepted} distinct names accepted in {seconds:.0f} s, {waited} told to "
          f"wait")


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_argument(parser)
    parser.add_argument("--processes", type=int, default=1,
                        help="server processes sharing a Redis of the bench's own (the README's lecture hall)")
    args = parser.parse_args()
    if args.processes > 1 and not installed():
        parser.error("--processes needs Debian's redis-server (make test installs it)")
    if args.before:
        with tree_at(args.before) as tree:
            await side(tree, args.before, args.processes)
    await side(ROOT, THIS_TREE, args.processes)


if __name__ == "__main__":
    asyncio.run(main())
