"""A class stepping while learners' hostile programs run in the sandbox, in the same server process (issue 44 point 4).

The server is the app's (serve.py, as the README's class command starts it: bench/class_client.py start_server), run
through this module (`--serve FOLDER`: Streamlit's command line in this process, after a thread that waits for the
bench's word), so that the learners' runs go through `run_learner` in the server's own process, as a learner's Run on
the Workbench page does. When told (FOLDER/go), LEARNERS threads (past the server's SANDBOXES slots a Run is told
"busy", and clicked again BUSY_AGAIN_S later, not counted among the runs) share the sandbox's hostile suite
(tests/helpers/hostile.py HOSTILE: each program with its limits and how it must end; its socket aimed at the server's
own port here; learner i runs programs i, i + LEARNERS, ...) and run their share over and over on the suite's preset
with the fake model, until told to stop (FOLDER/stop): each then finishes its pass through its share (so every program
runs at least once; each run within its wall-clock limit) and the server says so (FOLDER/done). Each run's outcome,
whether it ended as the suite says, when it started, and the seconds `run_learner` took (the time until it was
contained) go to FOLDER/runs.jsonl.

The class is bench/bench_class_follow.py's lecture, unchanged (`lead`: the lecturer starts a class on preset 05,
steps LED_STEPS frames, plays, pauses and asks; N followers over websockets). Rounds (--rounds): the class alone,
then the class while the learners run, the order reversed every other round, all on one server. Printed: each
class's report (bench_class_follow.report), the steps' arrival p50 and p95 with the learners over alone, the server
process's own CPU seconds per class (the jails' processes are not in it), its RSS before the first class and after
the last, each hostile program's outcomes and time until contained (p50, max), and how many runs started while a
class was stepping (the others finished a learner's pass after it). A run that did not end as the suite says, or
took longer than its wall-clock limit and a margin, is flagged. Bounded: 127.0.0.1 only, each round's class bounded
by the lecture's own limits, the learners stopped with their class.

With --before REV, the same on REV's tree (bench/before.py: its sandbox and suite, this tree's bench), one server
each, REV's first; then the ratios this/REV of the arrivals with the learners and of the slowdown (with over alone).

Run: python -m bench.bench_sandbox [students] [--learners 4] [--rounds 1] [--before REV]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

from bench import before as alternate
from bench.bench_class_follow import Member, arrivals, lead, report
from bench.class_client import CLASS_CACHE_MB, MAX_STUDENTS, start_server, wait_for_server, warm_up
from bench.process_stats import cpu_seconds, peak_rss_mb, rss_mb
from bench.stats import p50, percentiles
from sandbox import run_learner
from tests.helpers.hostile import HOSTILE, Hostile, socket_to
from tests.helpers.sandboxed import preset_spec
from tools.app_server import free_port

LEARNERS, DONE_MARGIN_S = 4, 10.0
BUSY, BUSY_AGAIN_S = "sandbox.busy", 1.0  # the server's slots all taken: "try again in a moment"
ALONE, WITH_LEARNERS = "the class alone", "the class while learners run hostile code"


# -- the server's side: `--serve FOLDER run serve.py ...` -------------------------------------------------------------

def serve(folder: Path, streamlit: list[str]):
    """Streamlit's command line in this process, the learners waiting for the bench's word in a thread."""
    threading.Thread(target=learners_when_told, args=(folder,), daemon=True).start()
    sys.argv = ["streamlit", *streamlit]
    from streamlit.web.cli import main as streamlit_main

    streamlit_main()


def learners_when_told(folder: Path):
    """Each time FOLDER/go appears ({"learners": n, "port": p}), n learners share the hostile programs and run them
    until FOLDER/stop appears; then FOLDER/done."""
    spec, records, lock = preset_spec(), folder / "runs.jsonl", threading.Lock()
    while True:
        go = folder / "go"
        if not go.exists():
            time.sleep(0.1)
            continue
        told = json.loads(go.read_text())
        go.unlink()
        programs, count, stop = aimed_at(told["port"]), told["learners"], threading.Event()
        names = list(programs)
        threads = [threading.Thread(target=run_hostile, args=({n: programs[n] for n in names[number::count]}, number,
                                                              spec, stop, records, lock)) for number in range(count)]
        for thread in threads:
            thread.start()
        while not (folder / "stop").exists():
            time.sleep(0.1)
        (folder / "stop").unlink()
        stop.set()
        for thread in threads:
            thread.join()
        tell(folder, "done")


def aimed_at(port: int) -> dict[str, Hostile]:
    """The hostile suite's programs, its socket aimed at the server's own port."""
    return {**HOSTILE, "socket": replace(HOSTILE["socket"], source=socket_to(port))}


def run_hostile(programs: dict[str, Hostile], number: int, spec, stop: threading.Event, records: Path,
                lock: threading.Lock):
    """Learner `number`: passes through its `programs` until `stop` (the pass under way finished), each program run
    again a moment later while the sandbox is busy; each Run recorded (when it started: the epoch's seconds, as the
    bench's clock reads them)."""
    while not stop.is_set():
        for name, hostile in programs.items():
            busy = True
            while busy:
                started, clock = time.time(), time.perf_counter()
                outcome = run_learner(hostile.source, hostile.class_name, spec, hostile.limits)
                record = {"learner": number, "program": name, "started": started, "wall_s": hostile.limits.wall_s,
                          "seconds": time.perf_counter() - clock, "as_told": ended_as_told(hostile, outcome),
                          **described(outcome)}
                with lock, records.open("a") as out:
                    out.write(json.dumps(record) + "\n")
                busy = record["key"] == BUSY
                if busy:
                    time.sleep(BUSY_AGAIN_S)  # the learner clicks Run again a moment later


def ended_as_told(hostile: Hostile, outcome) -> bool:
    """Whether the run ended as the hostile suite says it must (tests/test_sandbox_hostile.py): stopped with its
    message, their own exception with its words, or else the invariant the referee found broken."""
    if hostile.stopped:
        return outcome.stopped is not None and outcome.stopped.key == hostile.stopped
    if hostile.raised:
        return outcome.fault is not None and hostile.raised in outcome.fault.text
    return outcome.broken is not None


def described(outcome) -> dict:
    """An Outcome as data: how it ended (ok, stopped, fault, broken) and its words (English)."""
    if outcome.stopped is not None:
        return {"ended": "stopped", "key": outcome.stopped.key, "words": str(outcome.stopped)}
    if outcome.fault is not None:
        error = (outcome.fault.text.strip().splitlines() or [""])[-1]
        return {"ended": "fault", "key": outcome.fault.message.key, "words": error}
    if outcome.broken is not None:
        return {"ended": "broken", "key": outcome.broken.message_id, "words": str(outcome.broken)}
    return {"ended": "ok", "key": "", "words": "ran to its end"}


# -- the bench's side -------------------------------------------------------------------------------------------------

def tell(folder: Path, word: str, data: dict | None = None):
    """A word to the server's learners: a file in FOLDER, whole when it appears (written aside, then renamed)."""
    aside = folder / f".{word}"
    aside.write_text(json.dumps(data or {}))
    os.replace(aside, folder / word)


async def one_class(url: str, count: int, server_pid: int, folder: Path, port: int, learners: int) -> dict:
    """A lecture of `count` followers; with `learners`, those learners run the hostile programs meanwhile (stopped
    after it, their passes waited for). The followers, the lecture, the server's own CPU seconds for it and when it
    ran."""
    students = [Member(i, "") for i in range(count)]
    if learners:
        tell(folder, "go", {"learners": learners, "port": port})
    cpu_start, began = cpu_seconds(server_pid), time.time()
    result = await lead(url, students)
    cpu, window = cpu_seconds(server_pid) - cpu_start, (began, time.time())
    if learners:
        await learners_stopped(folder)
    return {"students": students, "result": result, "cpu": cpu, "window": window}


async def learners_stopped(folder: Path):
    """Tell the learners to stop and wait for their passes to end (bounded: a pass through every program, each to its
    wall-clock limit and a margin)."""
    tell(folder, "stop")
    deadline = time.perf_counter() + sum(h.limits.wall_s + DONE_MARGIN_S for h in HOSTILE.values())
    while not (folder / "done").exists():
        if time.perf_counter() > deadline:
            print("    the learners' passes did NOT end in time after the stop")
            return
        await asyncio.sleep(0.2)
    (folder / "done").unlink()


def report_hostile(records: Path, windows: list[tuple[float, float]]):
    """Each program's outcomes (how many of each) and its time until contained; flagged: the runs that did not end as
    the hostile suite says, or took longer than their wall-clock limit and a margin; how many started while a class
    stepped (in one of `windows`)."""
    runs = [json.loads(line) for line in records.read_text().splitlines()] if records.exists() else []
    busy = sum(1 for r in runs if r["key"] == BUSY)
    runs = [r for r in runs if r["key"] != BUSY]
    if not runs:
        print("    no learner's run ended (none recorded)")
        return
    during = sum(1 for r in runs if any(start <= r["started"] <= end for start, end in windows))
    print(f"    {len(runs)} runs by the learners ({during} started while the class stepped, the others finished a "
          f"learner's pass after it; besides, {busy} Runs told the sandbox was busy, each clicked again "
          f"{BUSY_AGAIN_S:.0f} s later); each program's outcomes and seconds until run_learner returned:")
    for name in dict.fromkeys(r["program"] for r in runs):  # the server's suite (another tree's, with --before)
        mine = [r for r in runs if r["program"] == name]
        ends = {}
        for run in mine:
            said = f"{run['ended']} ({run['key']}: {run['words'][:70]})" if run["key"] else run["ended"]
            ends[said] = ends.get(said, 0) + 1
        loose = sum(1 for r in mine if not r["as_told"] or r["seconds"] > r["wall_s"] + DONE_MARGIN_S)
        seconds = [r["seconds"] for r in mine]
        print(f"      {name}: {len(mine)} runs, contained in p50 {p50(seconds):.1f} s, max {max(seconds):.1f} s; "
              + "; ".join(f"{n}x {said}" for said, n in ends.items())
              + (f"  <- {loose} NOT AS THE SUITE SAYS" if loose else ""))


async def bench(args) -> None:
    count, learners = min(args.students, MAX_STUDENTS), args.learners
    if not args.before:
        await on_tree(alternate.ROOT, count, learners, args.rounds)
        return
    arrivals_with, slowdown = {}, {}
    with alternate.tree_at(args.before) as old:
        for name, root in ((args.before, old), (alternate.THIS_TREE, alternate.ROOT)):
            print(f"== {name}")
            latencies = await on_tree(root, count, learners, args.rounds)
            arrivals_with[name] = latencies[WITH_LEARNERS]
            slowdown[name] = [percentiles(latencies[WITH_LEARNERS], q)[0] / percentiles(latencies[ALONE], q)[0]
                              for q in (50, 95)]
    now, rev = alternate.THIS_TREE, args.before
    print(f"this tree against {rev}:")
    for i, q in enumerate((50, 95)):
        with_now, with_rev = (percentiles(arrivals_with[side], q)[0] for side in (now, rev))
        print("  " + alternate.ratio_line(f"a lecturer's step until a follower shows it with the learners, p{q} (s)",
                                          with_now, with_rev, rev))
        print("  " + alternate.ratio_line(f"p{q} with the learners over alone", slowdown[now][i], slowdown[rev][i],
                                          rev))


async def on_tree(root: Path, count: int, learners: int, rounds: int) -> dict[str, list[float]]:
    """A server of the app at `root` (its sandbox, its hostile suite), warmed; `rounds` of its class alone and with
    the learners, each reported, then compared and the learners' runs reported. The arrivals, alone and with them."""
    with tempfile.TemporaryDirectory(prefix="schedlab-bench-sandbox-") as name:
        folder, port = Path(name), free_port()
        env = dict(os.environ, SCHEDLAB_RUNNER="fake", SCHEDLAB_RUN_CACHE_MB=CLASS_CACHE_MB, SCHEDLAB_PRECOMPUTE="")
        server = start_server(env, port, root, launcher=("-m", "bench.bench_sandbox", "--serve", str(folder)))
        try:
            await wait_for_server(port)
            url = f"ws://127.0.0.1:{port}/_stcore/stream"
            await warm_up(url, False)
            rss_start = rss_mb(server.pid)
            print(f"{count} followers of a lecturer (preset 05, fake model); {learners} learner"
                  f"{'s' * (learners != 1)} running the hostile programs in the same server process meanwhile; "
                  f"server RSS {rss_start:.0f} MB after warming up")
            classes: dict[str, list[dict]] = {ALONE: [], WITH_LEARNERS: []}
            for number, what, hostile in alternate.rounds({ALONE: 0, WITH_LEARNERS: learners}, rounds):
                done = await one_class(url, count, server.pid, folder, port, hostile)
                print(f"[round {number + 1}, {what}, load average {os.getloadavg()[0]:.1f}] ", end="")
                report(done["students"], done["result"], "preset 05, fake model", done["cpu"])
                classes[what].append(done)
            rss_end, rss_peak = rss_mb(server.pid), peak_rss_mb(server.pid)
        finally:
            server.terminate()
            server.wait(30)
        latencies = compare(classes, rss_start, rss_end, rss_peak)
        report_hostile(folder / "runs.jsonl", [done["window"] for done in classes[WITH_LEARNERS]])
    return latencies


def compare(classes: dict[str, list[dict]], rss_start: float, rss_end: float, rss_peak: float
            ) -> dict[str, list[float]]:
    """The steps' arrival p50 and p95 and the server's CPU per class, with the learners over alone; the arrivals."""
    latencies = {what: [x for done in each for x in arrivals(done["students"], done["result"])[0]]
                 for what, each in classes.items()}
    cpu = {what: p50(done["cpu"] for done in each) for what, each in classes.items()}
    print(f"{WITH_LEARNERS} against {ALONE}:")
    for q in (50, 95):
        with_, alone = (percentiles(latencies[w], q)[0] for w in (WITH_LEARNERS, ALONE))
        print(f"    a lecturer's step until a follower shows it, p{q}: {with_ * 1e3:.0f} ms / {alone * 1e3:.0f} ms = "
              f"{with_ / alone if alone else float('nan'):.2f}x")
    print(f"    the server process's own CPU per class (median): {cpu[WITH_LEARNERS]:.1f} s / {cpu[ALONE]:.1f} s = "
          f"{cpu[WITH_LEARNERS] / cpu[ALONE] if cpu[ALONE] else float('nan'):.2f}x")
    print(f"    server RSS: {rss_start:.0f} MB before the first class, {rss_end:.0f} MB after the last (its peak "
          f"{rss_peak:.0f} MB)")
    return latencies


def main():
    if sys.argv[1:2] == ["--serve"]:
        serve(Path(sys.argv[2]), sys.argv[3:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("students", nargs="?", type=int, default=30)
    parser.add_argument("--learners", type=int, default=LEARNERS, help="learners running hostile code at once "
                        "(past the server's sandbox slots, a Run is told 'busy' and clicked again a moment later)")
    parser.add_argument("--rounds", type=int, default=1, help="classes alone and with learners, alternating")
    alternate.add_argument(parser)
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
