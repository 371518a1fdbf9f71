"""A TCP proxy of a test's own in front of a Redis server that holds some of its replies past the client's timeout,
so the client gives up on them and sends the command again (on a new connection) although Redis has already done
it: what a loaded network or a stalled Redis does to a lecture hall. On each connection every `every`-th chunk
Redis sends back is held `delay_s`; `delayed` counts them. Threads of the test process, on 127.0.0.1; stopped with
the `with` block.

    with DelayProxy(redis_port, every=80, delay_s=0.3) as proxy:
        RedisStore(proxy.url, timeout_s=0.2)
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time


class DelayProxy:
    def __init__(self, target_port: int, every: int, delay_s: float):
        self.target_port, self.every, self.delay_s = target_port, every, delay_s
        self.delayed = 0
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._stop = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def __enter__(self) -> DelayProxy:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *_):
        self._stop.set()
        self._server.close()
        with self._lock:
            for s in self._sockets:
                with contextlib.suppress(OSError):
                    s.close()

    def _accept(self):
        while not self._stop.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            with self._lock:
                self._sockets += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, True), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, replies: bool):
        chunks = 0
        try:
            while data := source.recv(65536):
                chunks += 1
                if replies and chunks % self.every == 0:
                    with self._lock:
                        self.delayed += 1
                    time.sleep(self.delay_s)
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
