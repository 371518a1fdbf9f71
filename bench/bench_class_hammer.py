"""The class's atomic changes hammered harder than tests/test_class_hammer.py does: two server processes (spawned)
make one change at once, N times each (default 2000: classes of PER_CLASS names each side, a class holding at most
500), against a Redis of the bench's own, straight and through a proxy that holds every EVERY-th reply past the
client's timeout (tests/helpers/delay_proxy.py); what each side's calls returned is compared with what the store
holds. Bounded: each class's round at most ROUND_LIMIT_S.
Run: python -m bench.bench_class_hammer [N]
"""

import argparse
import concurrent.futures
import multiprocessing
import os
import time

from session.classroom import Registry
from session.redis_store import RedisStore
from tests.helpers.class_hammer import big_class, hammer
from tests.helpers.delay_proxy import DelayProxy
from tests.helpers.redis_server import RedisServer, installed

TIMEOUT_S, DELAY_S, EVERY = 0.5, 0.8, 120  # through the proxy: the client's timeout, a held reply, how often
START_S, ROUND_LIMIT_S, PER_CLASS = 1.0, 600, 200


def names_kept(room, n: int, a: list, b: list) -> tuple[int, int, int]:
    """claim_same: (calls that named their browser, names lost, names doubled)."""
    named = sum(x == f"Student {i}" for i, x in enumerate(a)) + sum(x == f"Student {i}" for i, x in enumerate(b))
    lost = sum(room.names.name_of(f"browser{i}") != f"Student {i}" for i in range(n))
    return named, lost, len(room.names.all()) - (n - lost)


def hand_ins_kept(room, n: int, a: list, b: list) -> tuple[int, int, int]:
    """hand_in: (hand-ins that returned, lost, doubled)."""
    kept = [s.key for s in room.submissions.of("assignment")]
    return len(a) + len(b), len(set(a + b) - set(kept)), len(kept) - len(set(kept))


def prepare_hand_ins(room, n: int):
    for side in "ab":
        for i in range(n):
            room.names.claim(f"{side}-browser{i}", f"{side} {i}")


JOBS = {"claim_same": (None, names_kept, "calls named their browser"),
        "hand_in": (prepare_hand_ins, hand_ins_kept, "hand-ins returned")}


def hammered(pool, url: str, timeout_s: float, main: Registry, job: str, n: int) -> str:
    """`job` from both sides, n calls each, in classes of PER_CLASS: what was lost, doubled, raised, how long."""
    prepare, judge, done_words = JOBS[job]
    totals, errors, took = [0, 0, 0], 0, 0.0
    for first in range(0, n, PER_CLASS):
        count = min(PER_CLASS, n - first)
        room = big_class(main)
        if prepare is not None:
            prepare(room, count)
        start_at, began = time.time() + START_S, time.perf_counter()
        sides = [pool.submit(hammer, url, timeout_s, room.code, job, side, count, start_at) for side in "ab"]
        a, b = (side.result(timeout=ROUND_LIMIT_S) for side in sides)
        took += time.perf_counter() - began - START_S
        errors += len(a["errors"]) + len(b["errors"])
        totals = [t + x for t, x in zip(totals, judge(room, count, a["results"], b["results"]), strict=True)]
        main.close(room.code)
    return (f"{totals[0]} of {2 * n} {done_words}, {totals[1]} lost, {totals[2]} doubled, {errors} exceptions; "
            f"{took:.1f} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", nargs="?", type=int, default=2000, help="calls per process")
    n = parser.parse_args().n
    if not installed():
        print("class hammer: skipped, redis-server is not installed")
        return
    print(f"load average {os.getloadavg()[0]:.1f}")
    with RedisServer() as server, concurrent.futures.ProcessPoolExecutor(
            2, mp_context=multiprocessing.get_context("spawn")) as pool:
        main_registry = Registry(store=RedisStore(server.url))
        for job in JOBS:
            print(f"{job}, 2 x {n}, straight: {hammered(pool, server.url, 2.0, main_registry, job, n)}", flush=True)
            with DelayProxy(server.port, EVERY, DELAY_S) as proxy:
                said = hammered(pool, proxy.url, TIMEOUT_S, main_registry, job, n)
                print(f"{job}, 2 x {n}, every {EVERY}th reply held {DELAY_S} s past a {TIMEOUT_S} s timeout "
                      f"({proxy.delayed} held): {said}", flush=True)
        main_registry.store.close()
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
