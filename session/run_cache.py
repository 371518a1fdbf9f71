"""Runs computed once per process and shared by every session: the run cache.

A run is a pure function of its recipe (engine/run/recipe.py): the `RunSpec` (config, workload, runner, seed,
options; the model is the process's one default model) with the changes made mid-run, each stamped with the
frame it was made at. The cache files each run under a hash of its recipe, its address, so thirty students
opening the same preset share one run, and two who make the same change at the same frame share the branch.

Sharing without spoiling: a `SharedRun`'s engine only ever moves forward along its own recipe, under its lock,
stepped by whichever session first asks for a frame not recorded yet; each session keeps its own cursor and
how far it has stepped. A change never touches an engine someone else holds: it forks a new run (the engine
copied when it stands at that frame, else replayed to it, then changed), or finds that fork in the cache when
someone made it before. Only a session that is a run's sole holder, acting at the run's last frame, changes
the engine in place (no replay) and re-files the run under its new address. On the real model a replay costs
a forward pass per frame, so a run keeps copies of its engine every few frames (checkpoints) and a branch
steps on from the latest one.

The cache keeps runs up to a byte budget (an estimate of frames and KV cache), evicting the least recently
used; a run evicted while sessions hold it lives on for them, only later sessions no longer find it. Pinned runs
(the presets computed at start, any run a lecturer pins) are never evicted, nor changed in place. One run may take
at most a share of the budget (`share_bytes`, a quarter by default): a larger one (a 4096-block pool, a run of
tens of thousands of frames) is kept out of the cache, computed for its sessions alone (`SharedRun.kept_out`, which
the page tells its student), so it cannot push the class's runs out.

Beside the runs, the cache keeps results made elsewhere once per recipe (`made`: a learner's scheduler run in the
sandbox, as its outcome and trace), filed by an address of their own inputs, under the same budget and share.
"""

from __future__ import annotations

import copy
import logging
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import TypeVar

from engine.run.engine import Engine
from engine.run.recipe import Change

BUDGET_ENV = "SCHEDLAB_RUN_CACHE_MB"
DEFAULT_BUDGET_MB = 1024
SHARE_ENV = "SCHEDLAB_RUN_SHARE_MB"  # the most one run may hold and be kept; default: SHARE_OF_BUDGET of the budget
SHARE_OF_BUDGET = 0.25  # 256 MB of the default budget: preset 08's 256 x 16-block run (188 MB of KV cache) fits
# Frame-store bytes per frame, measured with tracemalloc on presets 02, 05 and 08: about 2 KiB plus a little
# per request (requests that changed are stored again).
FRAME_BYTES, FRAME_BYTES_PER_REQUEST = 2048, 128
# A run on the real model keeps a copy of its engine every CHECKPOINT_EVERY frames (the CHECKPOINTS_KEPT latest),
# so a branch a few frames back costs at most that many forward passes, not one per frame since frame 0; copies
# are made only while they fit in the cache's budget. On the fake model a replay is instant: no copies.
CHECKPOINT_EVERY, CHECKPOINTS_KEPT, CHECKPOINT_RUNNERS = 8, 2, frozenset({"model"})
LOG = logging.getLogger("schedlab")
T = TypeVar("T")


def frames_bytes(frames: int, requests: int) -> int:
    """An estimate of what `frames` frames of a run of `requests` requests hold."""
    return frames * (FRAME_BYTES + FRAME_BYTES_PER_REQUEST * requests)


def engine_bytes(engine: Engine) -> int:
    """An estimate of what an engine holds: its frames and its runner's KV cache."""
    kv = getattr(engine.runner, "kv_cache", None)
    kv_bytes = sum(t.nbytes for t in (*kv.keys, *kv.values)) if kv is not None else 0
    return frames_bytes(len(engine.frames), len(engine.requests)) + kv_bytes


class Made:
    """A result made elsewhere (`RunCache.made`), filed like a run: no engine steps it, no session holds it."""

    def __init__(self, address: str, value, nbytes: int):
        self.address, self.value, self.nbytes = address, value, nbytes
        self.kept_out = False


class SharedRun:
    """One run's engine and its recipe; held by the sessions looking at it."""

    def __init__(self, inputs, engine: Engine):
        self.inputs, self.engine = inputs, engine
        self.spec = engine.spec
        self.address = self.spec.address
        self.lock = threading.RLock()  # held while the engine steps or is changed
        self.checkpoints: dict[int, Engine] = {}  # frame -> a copy of the engine there, before changes made at it
        self._copyable = True
        self.holders: weakref.WeakSet = weakref.WeakSet()
        self.kept_out = False  # larger than a run's share of the cache: computed for its own sessions only
        self.broken = False  # a step failed half-way: the engine is restored (`restored`) before it steps again

    @property
    def nbytes(self) -> int:
        """An estimate of what the run holds: its engine's frames and KV cache, and its checkpoints'."""
        return sum(engine_bytes(engine) for engine in (self.engine, *self.checkpoints.values()))

    def fork(self, change: Change) -> Engine:
        """A new engine: this run to the change's frame, with the changes made at that frame, then `change`."""
        return self._replayed(self.spec.with_change(change), change.step)

    def restored(self) -> Engine:
        """A new engine standing where this run's last good frame left it, for a run whose step failed (`broken`):
        the same frames again, and the next step computed anew."""
        return self._replayed(self.spec, len(self.engine.frames) - 1)

    def _replayed(self, spec, frame: int) -> Engine:
        """An engine on `spec` at `frame`, replayed (Engine.follow) from the nearest engine standing on the run at
        or before that frame: the engine itself when it stands there (no replay: on the real model a replay costs
        a forward pass per frame), else the latest checkpoint, else frame 0. A broken engine is never a start."""
        with self.lock:  # a checkpoint never changes once kept: it is copied outside the lock
            start = self.engine if self.engine.step_count == frame and not self.broken else None
            start = self._copy(start) if start is not None else None
            at = max((k for k in self.checkpoints if k <= frame), default=None)
            checkpoint, script = self.checkpoints.get(at), self.engine.adaptive_sizes[:frame]
        if start is None and checkpoint is not None:
            start = self._copy(checkpoint)
        if start is None:
            return Engine(spec, self.engine.record).follow(spec, frame, script)
        return start.follow(spec, frame, script)

    def checkpoint(self, every: int, kept: int = CHECKPOINTS_KEPT):
        """Keep a copy of the engine when it stands at a multiple of `every` (the `kept` latest), so that a
        branch at a later frame replays from there, not from frame 0. Called under the lock, after a step."""
        frame = self.engine.step_count
        if frame % every or frame in self.checkpoints or not self._copyable:
            return
        if (copied := self._copy(self.engine)) is None:
            self._copyable = False  # e.g. an overlapped run's worker thread: no checkpoints, branches replay
            return
        self.checkpoints[frame] = copied
        while len(self.checkpoints) > kept:
            del self.checkpoints[min(self.checkpoints)]

    @staticmethod
    def _copy(engine: Engine) -> Engine | None:
        """A deep copy of `engine` sharing the loaded model, or None when it cannot be copied."""
        runner = engine.runner
        shared = [getattr(runner, name) for name in ("loaded", "model", "tokenizer") if hasattr(runner, name)]
        try:
            return copy.deepcopy(engine, {id(obj): obj for obj in shared if obj is not None})
        except (TypeError, RuntimeError, copy.Error):  # e.g. a thread or lock inside: replay instead
            return None


class RunCache:
    def __init__(self, budget_bytes: int, checkpoint_every: int = CHECKPOINT_EVERY,
                 checkpoint_runners: frozenset[str] = CHECKPOINT_RUNNERS, share_bytes: int | None = None):
        self.budget_bytes = budget_bytes
        self.share_bytes = int(budget_bytes * SHARE_OF_BUDGET) if share_bytes is None else share_bytes
        self.pinned: set[str] = set()  # addresses never evicted
        self.checkpoint_every, self.checkpoint_runners = checkpoint_every, checkpoint_runners
        self._runs: OrderedDict[str, SharedRun] = OrderedDict()  # least recently used first
        self._lock = threading.Lock()
        self._building: dict[str, threading.Lock] = {}  # one builder per address; the others wait for it
        self.hits = self.misses = 0

    # -- what sessions call ---------------------------------------------------------------------------

    def open(self, inputs, holder) -> SharedRun:
        """The run of `inputs` from frame 0, computed by whoever opened it first."""
        return self.open_recipe(inputs, inputs.spec, holder)

    def open_recipe(self, inputs, spec, holder) -> SharedRun:
        """The run of `spec` (the recipe of a run of `inputs`, with its changes): a run another process computed (a
        lecture hall's lead, session/lead_recipe.py), built here from its recipe, replayed to its last change's
        frame (a run stands where its recipe is whole). An adaptive run's sizes, measured where it first ran, are
        measured here anew."""
        last_change = max((change.step for change in spec.changes), default=0)
        return self._find_or_build(spec.address, holder,
                                   lambda: SharedRun(inputs, Engine(spec).follow(spec, last_change)))

    def act(self, run: SharedRun, change: Change, holder) -> SharedRun:
        """The run `run` would be with `change` made at its frame (frames 0..change.step are `run`'s)."""
        address = run.spec.with_change(change).address
        with self._lock:
            in_place = (address not in self._runs and set(run.holders) == {holder}
                        and change.step == run.engine.step_count and run.address not in self.pinned)
            if in_place:
                self._runs.pop(run.address, None)
        if not in_place:
            return self._find_or_build(address, holder, lambda: SharedRun(run.inputs, run.fork(change)))
        try:
            with run.lock:
                run.engine.change(change)
            run.spec, run.address = run.engine.spec, address
        finally:
            with self._lock:
                self._file(run)
        return run

    def advance(self, run: SharedRun, frame: int):
        """Step `run` until `frame` is recorded, unless another session already did. A step that fails (the model
        process killed under it) leaves the engine half-way through it: the run is marked broken and dropped from
        the cache, so no later session inherits that; its frames stay readable, and the next advance first
        restores the engine to the last good frame (from a checkpoint, else replayed), files the run again and
        computes the failed step anew. A run is never frozen by a failed step."""
        with run.lock:
            restored = run.broken
            try:
                if restored:  # a restore that fails too leaves the run broken, for the next try
                    run.engine, run.broken = run.restored(), False
                    LOG.warning("run %s restored at frame %d after a failed step", run.address, run.engine.step_count)
                while len(run.engine.frames) <= frame:
                    run.engine.step()
                    if self._checkpoint_due(run):
                        run.checkpoint(self.checkpoint_every)
            except BaseException:
                run.broken = True
                LOG.warning("step %d of run %s failed", run.engine.step_count, run.address, exc_info=True)
                with self._lock:
                    if self._runs.get(run.address) is run:
                        del self._runs[run.address]
                raise
        with self._lock:
            if self._runs.get(run.address) is run or (restored and run.address not in self._runs):
                self._file(run)  # most recently used again, and grown; or filed again once restored

    def _checkpoint_due(self, run: SharedRun) -> bool:
        """A copy is due at every `checkpoint_every` frames of a run on a model that replays slowly, while the
        cache's runs and the copy fit in the budget (a copy that replaces the run's oldest always fits)."""
        engine = run.engine
        if run.kept_out or engine.runner_kind not in self.checkpoint_runners or \
                engine.step_count % self.checkpoint_every:
            return False
        if len(run.checkpoints) >= CHECKPOINTS_KEPT:
            return True
        with self._lock:
            used = sum(r.nbytes for r in self._runs.values())
            shared = run.address in self.pinned or run.nbytes + engine_bytes(engine) <= self.share_bytes
        return shared and used + engine_bytes(engine) <= self.budget_bytes

    def made(self, address: str, make: Callable[[], T], nbytes: Callable[[T], int]) -> T:
        """What `make()` returns for `address` (the digest of everything it is made from), made once: a second
        session asking meanwhile waits for the first; kept (and evicted) like a run of `nbytes(value)` bytes."""
        def build() -> Made:
            value = make()
            return Made(address, value, nbytes(value))
        return self._find_or_build(address, None, build).value

    def forget(self, address: str):
        """Drop what is filed at `address`, unless pinned (a result made elsewhere that says only what one try met)."""
        with self._lock:
            if address not in self.pinned:
                self._runs.pop(address, None)

    def hold(self, run: SharedRun, holder) -> SharedRun:
        """Hold `run` as it is, found by another session (a class following its lecturer's run)."""
        with self._lock:
            self._hold_run(run, holder)
        return run

    def release(self, run: SharedRun, holder):
        with self._lock:
            run.holders.discard(holder)

    def pin(self, run: SharedRun):
        """Keep `run` whatever students open: never evicted, never changed in place (a change forks it)."""
        with self._lock:
            self.pinned.add(run.address)
            run.kept_out = False
            self._file(run)

    def unpin(self, run: SharedRun):
        with self._lock:
            self.pinned.discard(run.address)

    def frames_of(self, address: str) -> int | None:
        """How many frames the cached run at `address` holds now; None when it is not in the cache."""
        with self._lock:
            run = self._runs.get(address)
            return None if run is None else len(run.engine.frames)

    # -- what the server panel shows ------------------------------------------------------------------

    def stats(self) -> dict:
        with self._lock:
            return {"runs": len(self._runs), "pinned": len(self.pinned & self._runs.keys()), "hits": self.hits,
                    "misses": self.misses, "bytes": sum(r.nbytes for r in self._runs.values()),
                    "budget_bytes": self.budget_bytes, "share_bytes": self.share_bytes}

    def __contains__(self, address: str) -> bool:
        return address in self._runs

    # -- internals ------------------------------------------------------------------------------------

    def _find_or_build(self, address: str, holder, build: Callable[[], SharedRun]) -> SharedRun:
        with self._lock:
            if (run := self._hold(address, holder)) is not None:
                return run
            building = self._building.setdefault(address, threading.Lock())
        with building:  # a second session asking for the same run waits for the first to build it
            with self._lock:
                if (run := self._hold(address, holder)) is not None:
                    return run
            try:
                run = build()
                with self._lock:
                    self.misses += 1
                    self._hold_run(run, holder)
                    self._file(run)
            finally:
                with self._lock:
                    self._building.pop(address, None)
        return run

    def _hold(self, address: str, holder) -> SharedRun | None:
        run = self._runs.get(address)
        if run is not None:
            self.hits += 1
            self._hold_run(run, holder)
            self._runs.move_to_end(address)
        return run

    def _hold_run(self, run: SharedRun, holder):
        if holder is not None:  # a result made elsewhere has no holders
            run.holders.add(holder)

    def _file(self, run: SharedRun):
        """Keep `run` as the most recently used, then evict the least recently used beyond the budget (pinned runs
        stay); a run larger than its share is kept out instead, unless pinned."""
        if run.address not in self.pinned and run.nbytes > self.share_bytes:
            run.kept_out = True
            if self._runs.get(run.address) is run:
                del self._runs[run.address]
            return
        self._runs[run.address] = run
        self._runs.move_to_end(run.address)
        total = sum(r.nbytes for r in self._runs.values())
        for address in [a for a in self._runs if a not in self.pinned]:  # least recently used first
            if total <= self.budget_bytes:
                break
            total -= self._runs.pop(address).nbytes


_shared: RunCache | None = None
_shared_lock = threading.Lock()


def shared_run_cache() -> RunCache:
    """The process's one run cache, $SCHEDLAB_RUN_CACHE_MB (default 1024) megabytes, of which one run may take
    $SCHEDLAB_RUN_SHARE_MB (default a quarter)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            share = os.environ.get(SHARE_ENV)
            _shared = RunCache(int(float(os.environ.get(BUDGET_ENV, DEFAULT_BUDGET_MB)) * 2**20),
                               share_bytes=None if not share else int(float(share) * 2**20))
        return _shared
