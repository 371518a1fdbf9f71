"""The peek bench (issue 47 point 2): a class's followers at an open question, every message they are sent read.

Starts `streamlit run serve.py` on 127.0.0.1 on the fake model (the README's class command), the lecturer opens
assignment 1, starts a class, stands at frame 3 and switches predictions on ("Step 5: which running request is
preempted?" opens). N students (half in English, half in Chinese) open the class's link, each in a browser of its
own, name themselves and try every way to see further while following (bench/peek_client.py `try_to_peek`: the
player asked for frame 40 and told it shows frame 40, every view below the stage, the handout built and fetched,
"Run to the end" where offered), then answer. Every ForwardMsg each is sent, and every file it fetches, is read
for anything past the lecturer's frame: a frame after 3 in the player's data, a key frame or title after it, a
chart drawing a later step, or any fact only a later frame states (`later_facts`: narration, verdicts at the end,
key frames' notes). A control browser breaks away and runs to the end: its messages must show those facts (the
markers are real). Bounded: at most 60 students, the whole class within TIME_LIMIT_S; stops by itself.
Run: python -m bench.bench_peek [students]
"""

import argparse
import asyncio
import os
import time

from bench.class_client import bench_token, start_server, wait_for_server, warm_up
from bench.peek_client import ASKED, SCENARIO, Follower, K, Peek, later_facts, name_tab, start_class, try_to_peek
from i18n import text
from tools.app_server import free_port

MAX_STUDENTS, TIME_LIMIT_S = 60, 600
LANGS = ("en", "zh")


async def follower(number: int, url: str, base: str, code: str, lang: str, peek: Peek) -> bool:
    """One student's browser: joins, tries to peek, answers; whether its answer was taken (the page says so)."""
    tab = Follower(number, code, lang, bench_token(1000 + number), peek)
    async with tab.connect(url) as ws:
        await name_tab(tab, ws, lang, f"Student {number}")
        await tab.settle(ws, lambda page: text(lang, "class.send") in page.widgets)
        await try_to_peek(tab, ws, lang, base)
        await tab.answer(ws, number)
    sent = text(lang, "class.sent", answer="\0").split("\0")[0]  # "Your answer: " before the answer
    return any(word.startswith(sent) for word in tab.page.words)


async def control(url: str, code: str, peek: Peek):
    """A browser that breaks away and runs to the end: what it reads is not judged, only the markers it shows."""
    tab = Follower(999, code, "en", bench_token(999), peek, judged=lambda: False)
    async with tab.connect(url) as ws:
        await name_tab(tab, ws, "en", "Control")
        await tab.press(ws, text("en", "class.break_away"))
        await tab.settle(ws, lambda page: text("en", "assignment.run_to_end") in page.widgets)
        await tab.press(ws, text("en", "assignment.run_to_end"))


async def one_class(students: int) -> dict:
    port = free_port()
    server = start_server(dict(os.environ, SCHEDLAB_RUNNER="fake"), port)
    try:
        await wait_for_server(port)
        base, url = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/_stcore/stream"
        await warm_up(url, False)
        lecturer, lecturer_ws = await start_class(url)
        peeks = {lang: Peek(K, later_facts(SCENARIO, K, lang, ASKED)) for lang in LANGS}
        start = time.perf_counter()
        taken = await asyncio.gather(*(follower(i, url, base, lecturer.page.code, LANGS[i % 2], peeks[LANGS[i % 2]])
                                       for i in range(students)))
        seconds = time.perf_counter() - start
        checked = Peek(K, peeks["en"].markers)
        await control(url, lecturer.page.code, checked)
        await lecturer_ws.close()
        return {"peeks": peeks, "taken": sum(taken), "seconds": seconds, "control": checked}
    finally:
        server.terminate()
        server.wait(30)


def report(students: int, result: dict):
    peeks, control_peek = result["peeks"], result["control"]
    messages, size = sum(p.messages for p in peeks.values()), sum(p.bytes for p in peeks.values())
    past = [said for p in peeks.values() for said in p.past]
    print(f"{students} followers ({' and '.join(LANGS)}) of a class on {SCENARIO}, the lecturer at frame {K} with the "
          f"question on step {ASKED} open: {messages} messages and downloads read, {size / 2**20:.1f} MB; "
          f"{sum(p.peeking for p in peeks.values())} said anything past frame {K} ({len(set(past))} distinct "
          f"things); {result['taken']} answers taken; {result['seconds']:.1f} s")
    for said in sorted(set(past))[:10]:
        print(f"    {said}")
    print(f"    markers planted: {', '.join(f'{lang} {len(p.markers)}' for lang, p in peeks.items())}; the control "
          f"browser that broke away and ran to the end read {len(control_peek.markers_seen)} of them")


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("students", nargs="?", type=int, default=30)
    students = min(parser.parse_args().students, MAX_STUDENTS)
    print(f"load average {os.getloadavg()[0]:.2f}")
    report(students, await asyncio.wait_for(one_class(students), TIME_LIMIT_S))


if __name__ == "__main__":
    asyncio.run(main())
