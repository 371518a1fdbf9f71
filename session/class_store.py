"""Where a class's state lives (session/classroom.py keeps its logic, not its data): one small interface, two
stores. `MemoryStore` keeps it in this process (the default: `make run` needs nothing else); `RedisStore`
(session/redis_store.py) keeps it in Redis when $SCHEDLAB_REDIS_URL is set, so several server processes hold one
class and a class outlives the process its lecturer is on.

The interface is a few of Redis's own data types, so the class logic is written once over both: strings, hashes,
keys that expire (a process's heartbeat), and messages published on a class's channel that every process hears
(`listen`), each waking its own tabs. What was published while a process could not hear it is lost: `on_resume`
tells it to look again. Values are strings (the class logic writes JSON); session/class_keys.py names every key.

A change of several keys, or one that depends on what it reads, is one function over a `Tx` run by `atomically`:
it reads, decides, and its writes are applied together, with nothing changed in between by anyone (Redis: WATCH,
then MULTI/EXEC, the function run again when a watched key changed; memory: under the store's lock). Each change
is written so that running it again after it took effect changes nothing more: Redis's client sends a command
again when its reply is late, and a transaction whose EXEC took effect but whose reply was lost is run again.

A store that cannot be reached raises `StoreUnavailable`: a message the page shows as it is, in either language.
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from i18n import MessageError

REDIS_ENV = "SCHEDLAB_REDIS_URL"

Listener = Callable[[str, str], None]  # (class code, what happened) -> None
T = TypeVar("T")
MAX_TRIES = 200  # the most times a change is run again because a key it watched changed meanwhile


class StoreUnavailable(MessageError):
    """The class's store cannot be reached (Redis down): the class waits, the lecturer's own stage goes on."""


class Tx:
    """One atomic change's view of the store: reads answer at once, writes are kept and applied together once the
    change returns (as in a Redis transaction: a change decides from what it read, then writes; a change that
    raises writes nothing). `watch` adds keys whose change meanwhile runs the change again (Redis); read only
    keys watched, or ones whose change meanwhile does not matter to the decision."""

    def __init__(self, read: Callable, watch: Callable[[tuple[str, ...]], None]):
        self._read, self._watch = read, watch
        self.writes: list[tuple[str, tuple]] = []

    def watch(self, *keys: str):
        self._watch(keys)

    def get(self, key: str) -> str | None:
        return self._read("get", key)

    def hget(self, key: str, field: str) -> str | None:
        return self._read("hget", key, field)

    def hgetall(self, key: str) -> dict[str, str]:
        return self._read("hgetall", key)

    def hlen(self, key: str) -> int:
        return self._read("hlen", key)

    def set(self, key: str, value: str, ttl_s: float | None = None):
        self.writes.append(("set", (key, value, ttl_s)))

    def hset(self, key: str, field: str, value: str):
        self.writes.append(("hset", (key, field, value)))

    def hdel(self, key: str, field: str):
        self.writes.append(("hdel", (key, field)))

    def delete(self, key: str):
        self.writes.append(("delete", (key,)))


class ClassStore:
    """What the class logic asks of a store. `process` names this server process (its seats are filed under it)."""

    process: str
    silent_after_s: float | None = None  # a process silent this long is gone, with its seats (None: one process)

    def get(self, key: str) -> str | None: ...
    def set(self, key: str, value: str, ttl_s: float | None = None): ...
    def hget(self, key: str, field: str) -> str | None: ...
    def hgetall(self, key: str) -> dict[str, str]: ...
    def hlen(self, key: str) -> int: ...
    def hset(self, key: str, field: str, value: str): ...
    def hsetnx(self, key: str, field: str, value: str) -> bool: ...
    def hdel(self, key: str, field: str) -> bool: ...
    def delete(self, *keys: str): ...
    def delete_prefix(self, prefix: str): ...
    def atomically(self, keys: tuple[str, ...], change: Callable[[Tx], T]) -> T: ...  # `change` over `keys`
    # watched, its writes applied together (module docstring); what it returns
    def hset_while(self, guard: tuple[str, str], fields: list[tuple[str, str, str]]) -> bool: ...  # each (key,
    # field, value) set, all together, only while the hash `guard[0]` has the field `guard[1]`; whether they were
    # (one command: for a write made at every step of every tab, where a transaction's round trips would cost)
    def publish(self, code: str, what: str): ...
    def listen(self, listener: Listener): ...
    def is_up(self, process: str) -> bool: ...  # whether that process still serves its seats (its heartbeat)
    def on_beat(self, beat: Callable[[], None]): ...  # called every few seconds from the store's thread
    def on_resume(self, resumed: Callable[[], None]): ...  # called when the store is heard again after a loss
    def settled(self) -> bool:  # whether a process silent now has really stopped answering: not while every
        return True  # process may still be beating again after the store came back (session/redis_store.py)
    def check(self): ...  # StoreUnavailable while the store is known to be unreachable (what a process kept of it
    # is then not served either: the page says the class cannot be reached)
    def close(self): ...


class MemoryStore(ClassStore):
    """The class's state in this process's memory: what a single server needs; `publish` calls the listeners at
    once, in the caller's thread."""

    def __init__(self):
        self.process = "local"
        self._strings: dict[str, tuple[str, float | None]] = {}  # key -> (value, expires at time.monotonic())
        self._hashes: dict[str, dict[str, str]] = {}
        self._listeners: list[Listener] = []
        self._lock = threading.RLock()  # held through a change's reads and writes (`atomically`)

    def get(self, key):
        with self._lock:
            value, expires = self._strings.get(key, (None, None))
            return None if expires is not None and expires < time.monotonic() else value

    def set(self, key, value, ttl_s=None):
        with self._lock:
            now = time.monotonic()
            if ttl_s is not None:  # what expired goes (as Redis drops it): bounded by those set within a ttl
                for gone in [k for k, (_, expires) in self._strings.items() if expires is not None and expires < now]:
                    del self._strings[gone]
            self._strings[key] = (value, None if ttl_s is None else now + ttl_s)

    def hget(self, key, field):
        with self._lock:
            return self._hashes.get(key, {}).get(field)

    def hgetall(self, key):
        with self._lock:
            return dict(self._hashes.get(key, {}))

    def hlen(self, key):
        with self._lock:
            return len(self._hashes.get(key, {}))

    def hset(self, key, field, value):
        with self._lock:
            self._hashes.setdefault(key, {})[field] = value

    def hsetnx(self, key, field, value):
        with self._lock:
            fields = self._hashes.setdefault(key, {})
            if field in fields:
                return False
            fields[field] = value
            return True

    def hdel(self, key, field):
        with self._lock:
            return self._hashes.get(key, {}).pop(field, None) is not None

    def delete(self, *keys):
        with self._lock:
            for key in keys:
                self._strings.pop(key, None)
                self._hashes.pop(key, None)

    def delete_prefix(self, prefix):
        with self._lock:
            for kept in (self._strings, self._hashes):
                for key in [k for k in kept if k.startswith(prefix)]:
                    del kept[key]

    def atomically(self, keys, change):
        with self._lock:
            tx = Tx(lambda read, *args: getattr(self, read)(*args), lambda keys: None)
            done = change(tx)
            for write, args in tx.writes:
                getattr(self, write)(*args)
            return done

    def hset_while(self, guard, fields):
        with self._lock:
            if self.hget(*guard) is None:
                return False
            for key, field, value in fields:
                self.hset(key, field, value)
            return True

    def publish(self, code, what):
        for listener in list(self._listeners):
            listener(code, what)

    def listen(self, listener):
        self._listeners.append(listener)

    def is_up(self, process):
        return process == self.process  # the only process

    def on_beat(self, beat):
        pass  # one process: it sweeps its seats as it counts them

    def on_resume(self, resumed):
        pass  # never lost

    def check(self):
        pass

    def close(self):
        self._listeners.clear()


def process_name() -> str:
    """A name for this server process, unique among the processes sharing a store (a restarted one gets a new one:
    its old seats are not its own)."""
    return f"{os.getpid()}-{secrets.token_hex(4)}"


def store_from_env() -> ClassStore:
    """Redis when $SCHEDLAB_REDIS_URL is set, else this process's memory."""
    url = os.environ.get(REDIS_ENV)
    if not url:
        return MemoryStore()
    from session.redis_store import RedisStore  # only a lecture hall needs the client
    return RedisStore(url)
