"""A lecture hall: one class across several server processes through Redis (issue 34). Starts a Redis of its own
(tests/helpers/redis_server.py: a free port, append-only file on, bounded in time) and N `streamlit run app.py`
processes with $SCHEDLAB_REDIS_URL set; the lecturer opens process 1 and starts a class; M followers (speaking
Streamlit's websocket protocol, bench/class_client.py) are spread over the processes, student i on process i mod N,
as a spreading proxy would send them (the followers connect to the processes directly, not through nginx). Then
bench/bench_class_follow.py's lecture: steps, Play and Pause, a prediction; printed as that bench prints it. The
processes that did not compute the lecturer's run build it from the recipe in the lead (session/lead_recipe.py).
Run: python -m bench.bench_hall [followers] [processes]
"""

import argparse
import asyncio
import os

from bench.bench_class_follow import CLASS_CACHE_MB, Member, lead, report
from bench.class_client import start_server, wait_for_server, warm_up
from bench.process_stats import family_cpu_seconds
from tests.helpers.redis_server import RedisServer, installed
from tools.app_server import free_port

LIMIT_S = 600  # the whole bench, at most


async def hall(followers: int, processes: int) -> None:
    with RedisServer() as redis:
        env = dict(os.environ, SCHEDLAB_RUNNER="fake", SCHEDLAB_RUN_CACHE_MB=CLASS_CACHE_MB,
                   SCHEDLAB_REDIS_URL=redis.url, SCHEDLAB_PRECOMPUTE="")
        ports = [free_port() for _ in range(processes)]
        servers = [start_server(env, port) for port in ports]
        try:
            urls = [f"ws://127.0.0.1:{port}/_stcore/stream" for port in ports]
            for port, url in zip(ports, urls, strict=True):
                await wait_for_server(port)
                await warm_up(url, False)
            students = [Member(i, "") for i in range(followers)]
            cpu_start = sum(family_cpu_seconds(server.pid) for server in servers)
            result = await lead(urls[0], students, urls)
            cpu = sum(family_cpu_seconds(server.pid) for server in servers) - cpu_start
        finally:
            for server in servers:
                server.terminate()
            for server in servers:
                server.wait(30)
    report(students, result, f"preset 05, fake model, {processes} processes through Redis", cpu)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("followers", nargs="?", type=int, default=90)
    parser.add_argument("processes", nargs="?", type=int, default=3)
    args = parser.parse_args()
    if not installed():
        print("lecture hall: skipped, redis-server is not installed (make install: tools/ensure_debian_packages.py)")
        return
    asyncio.run(asyncio.wait_for(hall(args.followers, args.processes), LIMIT_S))


if __name__ == "__main__":
    main()
