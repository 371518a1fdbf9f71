"""The class's two stores for a test (session/class_store.py): this process's memory, and Redis (a server of the
test's own: the `redis_server` fixture). With Redis, wake-ups arrive on the store's own thread: `settle` waits
until everything published so far has been heard (a marker published after it comes back), bounded."""

from __future__ import annotations

import secrets
import threading

from session.class_store import ClassStore, MemoryStore

SETTLE_TIMEOUT_S = 10.0


def store_of(kind: str, redis_url: str | None = None) -> ClassStore:
    if kind == "memory":
        return MemoryStore()
    from session.redis_store import RedisStore
    return RedisStore(redis_url)


def settle(*stores: ClassStore):
    """Return once every store has heard every wake-up published before (at once for the memory store)."""
    for store in stores:
        if isinstance(store, MemoryStore):
            continue
        heard, marker = threading.Event(), secrets.token_hex(8)
        store.listen(lambda code, what, marker=marker, heard=heard: code == "__settle__" and what == marker and
                     heard.set())
        store.publish("__settle__", marker)
        if not heard.wait(SETTLE_TIMEOUT_S):
            raise TimeoutError("the store's listener heard nothing back")
