"""A Redis server of a test's own: Debian's `redis-server` (installed by `make test`'s install step,
tools/ensure_debian_packages.py) on a free port of 127.0.0.1, its files in a temporary folder, stopped when the test
is done; it can be stopped and started again on the same port and folder (a restart, its append-only file kept).
Bounded: it runs under `timeout`, so it never outlives LIFETIME_S even if the test process dies.

    with RedisServer() as server:
        client = redis.Redis.from_url(server.url)
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from tools.app_server import free_port

REDIS_SERVER = "redis-server"
LIFETIME_S = 600  # the longest a test's Redis may run
START_TIMEOUT_S = 10.0


def installed() -> bool:
    return shutil.which(REDIS_SERVER) is not None


class RedisServer:
    def __init__(self, append_only: bool = True):
        self.port, self.append_only = free_port(), append_only
        self._folder = tempfile.TemporaryDirectory(prefix="schedlab-redis-")
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def folder(self) -> Path:
        return Path(self._folder.name)

    def start(self):
        """Start it (again) and wait until it answers; RuntimeError when it does not within START_TIMEOUT_S."""
        command = ["timeout", "--kill-after=5", str(LIFETIME_S), REDIS_SERVER, "--port", str(self.port),
                   "--bind", "127.0.0.1", "--dir", str(self.folder), "--save", "",
                   "--appendonly", "yes" if self.append_only else "no", "--daemonize", "no", "--loglevel", "warning"]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self.answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.02)

    def answers(self) -> bool:
        """Whether it answers PING now."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self):
        """Stop it (SIGTERM: it writes its append-only file and exits; killed after 10 s)."""
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def restart(self):
        self.stop()
        self.start()

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def __exit__(self, *_):
        self.stop()
        self._folder.cleanup()
