"""A lecture hall (issue 34): one class across several server processes through Redis, behind nginx, and its faults.

Starts a Redis of its own (tests/helpers/redis_server.py: a free port, append-only file on, bounded in time), N
`streamlit run serve.py` processes on the fake model with $SCHEDLAB_REDIS_URL set, and nginx as this user on a free
port of 127.0.0.1 with tools/nginx_schedlab_hall.conf (any process serves any student; a browser keeps to one by a
route cookie, and a process that does not answer is skipped). Everything is on 127.0.0.1, and the whole bench is
bounded (LIMIT_S; Redis and nginx run under `timeout`).

1. The lecture: bench/bench_class_follow.py's lecture through nginx, M followers (and the lecturer) spread by it:
   steps, Play and Pause, a prediction; printed as that bench prints it.
2. The faults (bench/bench_hall_faults.py): a named class through nginx, then the lecturer's process killed and
   started again, Redis killed and started again from its append-only file, a process stopped (SIGSTOP), a rolling
   restart; after each, the lecturer's next step, what the store kept and both exports against what was cast.
`uptime` is printed before and after: other work on the machine slows every figure.
Run: python -m bench.bench_hall [followers] [processes] [--fault-followers F] (followers 0: the faults only)
"""

import argparse
import asyncio
import os
import subprocess
import tempfile
from pathlib import Path

from redis import Redis

from bench.bench_class_follow import Member, lead, report
from bench.bench_class_proxy import nginx_binary
from bench.bench_hall_faults import Hall, faults
from bench.class_client import CLASS_CACHE_MB, start_server, wait_for_server, warm_up
from bench.process_stats import family_cpu_seconds
from tests.helpers.redis_server import RedisServer, installed
from tools.app_server import ROOT, free_port

LIMIT_S = 1500  # the whole bench, at most
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
                    f"http {{ log_format hall '$cookie_schedlab_route|$upstream_addr|$upstream_status|$status|$uri';\n"
                    f"access_log {folder}/access.log hall; {temp}\n{''.join(lines)}\n}}\n")
    return conf


def redis_commands(redis: RedisServer) -> dict[str, int]:
    """Commands Redis has answered so far, by name."""
    client = Redis.from_url(redis.url)
    try:
        return {name.removeprefix("cmdstat_"): stat["calls"] for name, stat in client.info("commandstats").items()}
    finally:
        client.close()


async def lecture(hall_url: str, servers: list, redis: RedisServer, followers: int):
    """bench_class_follow's lecture through nginx, the Redis commands it cost."""
    students = [Member(i, "") for i in range(followers)]
    cpu_start = sum(family_cpu_seconds(server.pid) for server in servers)
    commands = redis_commands(redis)
    result = await lead(hall_url, students, [hall_url])
    cpu = sum(family_cpu_seconds(server.pid) for server in servers) - cpu_start
    commands = {name: n - commands.get(name, 0) for name, n in redis_commands(redis).items()}
    report(students, result, f"preset 05, fake model, {len(servers)} processes through Redis, all through "
           "nginx", cpu)
    moves, total = len(result["steps"]) * followers, sum(commands.values())
    print(f"    Redis commands during the lecture: {total}, {total / moves:.1f} "
          f"per follower per lecturer's step (" + ", ".join(
              f"{name} {n}" for name, n in sorted(commands.items(), key=lambda kv: -kv[1])[:6]) + ")")
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


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
            if followers:
                await lecture(f"ws://127.0.0.1:{listen}/_stcore/stream", servers, redis, followers)
            await faults(Hall(listen, Path(folder) / "access.log", ports, servers, env, redis), fault_followers)
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
