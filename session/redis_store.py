"""A class's state in Redis ($SCHEDLAB_REDIS_URL; session/class_store.py: the interface): every server process of a
lecture hall reads and writes the same class, hears the wake-ups published on one channel, and keeps a heartbeat
(a key that expires) so the others know its seats are still there. Redis's own commands, under a prefix.

When Redis cannot be reached, every call raises `StoreUnavailable` (no retries beyond the client's one reconnect:
a page must not hang); the listener and the heartbeat keep trying in their own thread, so the class picks up when
Redis is back (with its append-only file on, nothing of the class is lost over a restart).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from session.class_keys import heartbeat
from session.class_store import MAX_TRIES, ClassStore, Listener, StoreUnavailable, Tx, process_name

PREFIX = "schedlab:"
CHANNEL = PREFIX + "wake"  # each message: "<class code> <what happened>"
HEARTBEAT_S, HEARTBEAT_TTL_S = 1.0, 4.0  # a process silent for HEARTBEAT_TTL_S is gone, and its seats with it
TIMEOUT_S = 2.0
FAIL_FAST_S = 1.0
DOWN = (redis.ConnectionError, redis.TimeoutError)
LOG = logging.getLogger("schedlab")
# hset_while: KEYS[1] the guard hash, ARGV[1] its field; then each further key with its field and value in ARGV
HSET_WHILE = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
for i = 2, #KEYS do redis.call('HSET', KEYS[i], ARGV[2 * i - 2], ARGV[2 * i - 1]) end
return 1
"""


def _reached(method):
    """A store call: Redis's failure to answer becomes StoreUnavailable, and for FAIL_FAST_S after one every call
    fails at once (a page asks the store many times a run: it must not wait a timeout each time)."""
    def call(self, *args, **kwargs):
        if time.monotonic() < self._down_until:
            raise StoreUnavailable("class.store_down")
        try:
            return method(self, *args, **kwargs)
        except DOWN as e:
            self._down_until = time.monotonic() + FAIL_FAST_S
            raise StoreUnavailable("class.store_down") from e
    call.__doc__ = method.__doc__
    return call


class RedisStore(ClassStore):
    silent_after_s = HEARTBEAT_TTL_S
    def __init__(self, url: str, timeout_s: float = TIMEOUT_S):
        """`timeout_s`: how long a reply is waited for before the command is sent again (once)."""
        self.process, self.url = process_name(), url
        self._redis = redis.Redis.from_url(url, decode_responses=True, socket_timeout=timeout_s,
                                           socket_connect_timeout=timeout_s, retry=Retry(NoBackoff(), 1))
        self._hset_while = self._redis.register_script(HSET_WHILE)  # sent again by the client after a restart
        self._listeners: list[Listener] = []
        self._beats: list = []
        self._resumed: list = []
        self._down_until = 0.0  # time.monotonic() until which calls fail at once (Redis did not answer)
        self._lost = False  # the listener's connection lost, not subscribed again yet
        self._heard_since = time.monotonic()  # when the store was last heard again after a loss
        self._stop = threading.Event()
        with contextlib.suppress(*DOWN):  # up from the start: another process never takes its first seats for gone
            self._beat()
        self._thread = threading.Thread(target=self._serve, name="schedlab-redis", daemon=True)
        self._thread.start()

    @_reached
    def get(self, key):
        return self._redis.get(PREFIX + key)

    @_reached
    def set(self, key, value, ttl_s=None):
        self._redis.set(PREFIX + key, value, px=_px(ttl_s))


    @_reached
    def hget(self, key, field):
        return self._redis.hget(PREFIX + key, field)

    @_reached
    def hgetall(self, key):
        return self._redis.hgetall(PREFIX + key)

    @_reached
    def hlen(self, key):
        return int(self._redis.hlen(PREFIX + key))

    @_reached
    def hset(self, key, field, value):
        self._redis.hset(PREFIX + key, field, value)

    @_reached
    def hsetnx(self, key, field, value):
        return bool(self._redis.hsetnx(PREFIX + key, field, value))

    @_reached
    def hdel(self, key, field):
        return bool(self._redis.hdel(PREFIX + key, field))

    @_reached
    def delete(self, *keys):
        if keys:
            self._redis.delete(*(PREFIX + key for key in keys))

    @_reached
    def delete_prefix(self, prefix):
        keys = list(self._redis.scan_iter(match=PREFIX + prefix + "*", count=500))
        if keys:
            self._redis.delete(*keys)

    @_reached
    def atomically(self, keys, change):
        """WATCH the keys, run `change` (its reads answered at once), then its writes in MULTI/EXEC; run again while
        a watched key changed meanwhile (a lost connection while watching counts as such: redis.WatchError)."""
        pipe = self._redis.pipeline()
        try:
            for _ in range(MAX_TRIES):
                try:
                    pipe.watch(*(PREFIX + key for key in keys))
                    tx = Tx(lambda read, key, *args: getattr(pipe, read)(PREFIX + key, *args),
                            lambda more: pipe.watch(*(PREFIX + key for key in more)))
                    done = change(tx)
                    pipe.multi()
                    for write, (key, *args) in tx.writes:
                        if write == "set":  # its time to live in milliseconds, as `set` has it
                            pipe.set(PREFIX + key, args[0], px=_px(args[1]))
                        else:
                            getattr(pipe, write)(PREFIX + key, *args)
                    pipe.execute()
                    return done
                except redis.WatchError:
                    _reset(pipe)
        finally:
            _reset(pipe)
        raise StoreUnavailable("class.store_down")  # never settled: the store is too busy to be of use

    @_reached
    def hset_while(self, guard, fields):
        keys = [PREFIX + guard[0], *(PREFIX + key for key, _, _ in fields)]
        return bool(self._hset_while(keys=keys, args=[guard[1], *(x for _, field, value in fields
                                                                   for x in (field, value))]))

    @_reached
    def publish(self, code, what):
        self._redis.publish(CHANNEL, f"{code} {what}")

    @_reached
    def check(self):
        if self._lost:  # the listener has not heard Redis since it was lost: ask it
            self._redis.ping()

    def settled(self) -> bool:
        """Not within HEARTBEAT_TTL_S of the store coming back: a restarted Redis has dropped the heartbeats that
        expired while it was down, and every process beats again only within HEARTBEAT_S of hearing it."""
        return not self._lost and time.monotonic() - self._heard_since >= HEARTBEAT_TTL_S

    def is_up(self, process: str) -> bool:
        return process == self.process or self.get(heartbeat(process)) is not None

    def listen(self, listener):
        self._listeners.append(listener)

    def on_beat(self, beat):
        self._beats.append(beat)

    def on_resume(self, resumed):
        self._resumed.append(resumed)

    def close(self):
        self._stop.set()
        self._thread.join(timeout=TIMEOUT_S + HEARTBEAT_S)
        self._redis.close()

    # -- the store's own thread: the heartbeat and the wake-ups heard ------------------------------------------

    def _beat(self):
        self._redis.set(PREFIX + heartbeat(self.process), "1", px=int(HEARTBEAT_TTL_S * 1000))

    def _serve(self):
        """Beat and listen until closed; while Redis is down, try again every heartbeat (subscribing anew). Once
subscribed again, the wake-ups published meanwhile are lost: `on_resume`'s callables look again."""
        pubsub, next_beat, lost = None, 0.0, False
        while not self._stop.is_set():
            try:
                if pubsub is None:
                    pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
                    pubsub.subscribe(CHANNEL)
                    pubsub.get_message(timeout=TIMEOUT_S)  # the subscription confirmed: heard from now on
                if lost:
                    lost, self._lost, self._down_until = False, False, 0.0  # heard again: no failing fast
                    self._heard_since = time.monotonic()
                    for resumed in list(self._resumed):
                        resumed()
                now = time.monotonic()
                if now >= next_beat:
                    self._beat()
                    next_beat = now + HEARTBEAT_S
                    for beat in list(self._beats):
                        beat()
                message = pubsub.get_message(timeout=0.5)
                if message is not None and message.get("type") == "message":
                    code, _, what = message["data"].partition(" ")
                    for listener in list(self._listeners):
                        listener(code, what)
            except (*DOWN, StoreUnavailable):
                pubsub, lost = _dropped(pubsub), True
                self._lost = True
                self._stop.wait(HEARTBEAT_S / 2)
            except Exception:  # a listener's own failure: logged, the thread goes on
                LOG.exception("the class store's listener failed")
        _dropped(pubsub)


def _px(ttl_s: float | None) -> int | None:
    return None if ttl_s is None else max(1, int(ttl_s * 1000))


def _reset(pipe):
    """pipe.reset(), whose UNWATCH may be answered late too: then its connection is dropped (which drops the
    WATCH) rather than the change's own outcome lost to the late reply."""
    try:
        pipe.reset()
    except DOWN:
        pipe.connection.disconnect()
        pipe.watching = False
        pipe.reset()


def _dropped(pubsub):
    if pubsub is not None:
        with contextlib.suppress(Exception):  # closing a connection already lost
            pubsub.close()
    return None
