"""Where frames live: one small record of changes per step, a keyframe every K steps, frames rebuilt on demand.

A record holds the step's scalars, batch and events, the request views and block views that changed, and the
queues as diffs against the previous step. A request that only advanced as its batch entry says (its computed
tokens grew by the scheduled count, and it gained one token when its prompt was complete) is not stored at all:
`_advance` replays that rule, which is the store's encoding, not the scheduler's: the recorder checks each such
request's counts, as the scheduler left them, against it and stores any it does not fit. Memory therefore grows
with what changes per step, and reading frame k costs one keyframe copy plus at most K - 1 records. A trace file
holds these records as they are (engine/traces/records.py): the store's encoding is the only one frames have on
the server.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence, Set
from itertools import chain
from typing import NamedTuple

from engine.run.frame import BlockView, Frame, RequestView, StepHeader, StepMetrics
from scheduler.contract import DecidedBy

KEYFRAME_EVERY = 16


class QueueDiff(NamedTuple):
    """new == old[start:start + keep] + middle + old[len(old) - tail:]"""
    start: int
    keep: int
    middle: tuple[int, ...]
    tail: int

    def apply(self, old: tuple[int, ...]) -> tuple[int, ...]:
        return old[self.start:self.start + self.keep] + self.middle + (old[len(old) - self.tail:] if self.tail else ())


def _common_prefix(a: tuple, b: tuple) -> int:
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while lo < hi:  # largest n with a[:n] == b[:n], by slice comparisons (fast for long equal runs)
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def diff_queue(old: tuple[int, ...], new: tuple[int, ...]) -> QueueDiff | None:
    """None when unchanged. Cheap for the usual edits: pops at the head, appends at the tail, one insertion
    or one run of removals in between."""
    if old == new:
        return None
    start = 0
    if new and old and new[0] != old[0]:
        try:
            start = old.index(new[0])
        except ValueError:
            start = 0
    keep = _common_prefix(old[start:], new)
    rest_old, rest_new = old[start + keep:], new[keep:]
    tail = _common_prefix(rest_old[::-1], rest_new[::-1])
    return QueueDiff(start, keep, rest_new[:len(rest_new) - tail], tail)


NONE: dict = {}  # (never written to) a record's queues or side pools where none changed


class StepRecord(NamedTuple):
    header: StepHeader
    metrics: StepMetrics
    requests: dict[int, RequestView]  # changed views the batch rule does not explain (new requests included)
    blocks: dict[int, BlockView] | tuple[BlockView, ...]  # changed blocks, or the whole pool after a resize
    waiting: QueueDiff | None
    running: QueueDiff | None
    queues: dict[str, QueueDiff] = NONE  # the declared queues beyond waiting and running that changed
    side_pools: dict[str, tuple[int | None, ...]] = NONE  # the side pools that changed, whole (a holder per unit)


PAGE_SIZE = 64  # small pages: a keyframe copies only the pages a step dirtied, so large pools stay cheap


def paged(items: Sequence, previous: tuple[tuple, ...] = (), dirty: Set[int] = frozenset()) -> tuple[tuple, ...]:
    """`items` cut into pages of PAGE_SIZE, reusing each page of `previous` that holds no `dirty` index: a
    keyframe then costs only the pages that changed since the last one, not the whole pool."""
    dirty_pages = {i // PAGE_SIZE for i in dirty}
    pages = []
    for p, start in enumerate(range(0, len(items), PAGE_SIZE)):
        size = min(PAGE_SIZE, len(items) - start)
        if p < len(previous) and p not in dirty_pages and len(previous[p]) == size:
            pages.append(previous[p])
        else:
            pages.append(tuple(items[start:start + size]))
    return tuple(pages)


class Paged(NamedTuple):
    """A keyframe's requests and blocks, as pages (see `paged`)."""
    requests: tuple[tuple[RequestView, ...], ...]
    blocks: tuple[tuple[BlockView, ...], ...]


class _Keyframe(NamedTuple):
    requests: tuple[tuple[RequestView, ...], ...]
    blocks: tuple[tuple[BlockView, ...], ...]
    waiting: tuple[int, ...]
    running: tuple[int, ...]
    queues: dict[str, tuple[int, ...]]
    side_pools: dict[str, tuple[int | None, ...]]


class FrameStore:
    """Append-only sequence of frames: `store[k]` rebuilds frame k, `len(store)` counts them."""

    def __init__(self, keyframe_every: int = KEYFRAME_EVERY, decided_by: DecidedBy | None = None):
        self.keyframe_every = keyframe_every
        self.decided_by = decided_by  # the scheduler every frame was decided by (None: not known)
        self._records: list[StepRecord] = []
        self._keyframes: dict[int, _Keyframe] = {}
        self._keyframe_steps: list[int] = []
        self._waiting: tuple[int, ...] = ()
        self._running: tuple[int, ...] = ()
        self._queues: dict[str, tuple[int, ...]] = {}  # the declared queues beyond waiting and running, now
        self._side_pools: dict[str, tuple[int | None, ...]] = {}
        self._last_frame: Frame | None = None  # only for append_frame

    def __len__(self) -> int:
        return len(self._records)

    def __getitem__(self, k: int) -> Frame:
        if k < 0:
            k += len(self._records)
        if not 0 <= k < len(self._records):
            raise IndexError(f"frame {k} does not exist; the run has frames 0 to {len(self._records) - 1}")
        return self._build(k)

    def __iter__(self):
        return (self[k] for k in range(len(self)))

    # -- writing -----------------------------------------------------------------------------------------

    def append(self, header: StepHeader, metrics: StepMetrics, requests: dict[int, RequestView],
               blocks: dict[int, BlockView] | tuple[BlockView, ...], waiting: tuple[int, ...],
               running: tuple[int, ...], snapshot: Callable[[], Paged] | None = None,
               queues: dict[str, tuple[int, ...]] = NONE, side_pools: dict[str, tuple[int | None, ...]] = NONE):
        """Record step `header.step` (== len(self)). `requests` are the views the batch rule does not explain;
        `blocks` is a dict of changed blocks, or a tuple holding the whole pool (the first step, or after the
        pool was rebuilt). `snapshot()`, when given, returns the step's complete requests and blocks, sparing
        a replay when a keyframe is due. `queues` and `side_pools`: the scheduler's declared queues beyond waiting
        and running and its side pools, whole."""
        queue_diffs = {name: diff for name, ids in queues.items()
                       if (diff := diff_queue(self._queues.get(name, ()), ids)) is not None}
        changed_pools = {name: units for name, units in side_pools.items() if self._side_pools.get(name) != units}
        record = StepRecord(header, metrics, requests, blocks, diff_queue(self._waiting, waiting),
                            diff_queue(self._running, running), queue_diffs or NONE, changed_pools or NONE)
        self._add(record, waiting, running, snapshot)

    def append_record(self, record: StepRecord):
        """Record a step as `records` gave it (a trace holds them: engine/traces/records.py), its queues as diffs
        against the step before."""
        waiting = self._waiting if record.waiting is None else record.waiting.apply(self._waiting)
        running = self._running if record.running is None else record.running.apply(self._running)
        self._add(record, waiting, running, None)

    def _add(self, record: StepRecord, waiting: tuple[int, ...], running: tuple[int, ...],
             snapshot: Callable[[], Paged] | None):
        step, blocks = record.header.step, record.blocks
        if step != len(self._records):
            raise ValueError(f"step {step} recorded after {len(self._records)} steps; frames go in step order")
        self._records.append(record)
        self._waiting, self._running = waiting, running
        if record.queues:
            self._queues = {**self._queues, **{name: diff.apply(self._queues.get(name, ()))
                                               for name, diff in record.queues.items()}}
        if record.side_pools:
            self._side_pools = {**self._side_pools, **record.side_pools}
        if step % self.keyframe_every == 0 or isinstance(blocks, tuple):
            if snapshot is None:
                frame = self._build(step)
                pages = Paged(paged(frame.requests), paged(frame.blocks))
            else:
                pages = snapshot()
            self._keyframes[step] = _Keyframe(*pages, waiting, running, self._queues, self._side_pools)
            self._keyframe_steps.append(step)

    def append_frame(self, frame: Frame):
        """Record a complete frame (e.g. read from a trace), storing only what differs from the previous one."""
        last = self._last_frame
        blocks: dict[int, BlockView] | tuple[BlockView, ...]
        if last is None or len(last.blocks) != len(frame.blocks):
            blocks = frame.blocks
        else:
            blocks = {b.id: b for b, old in zip(frame.blocks, last.blocks, strict=True) if b != old}
        old_requests = last.requests if last else ()
        requests = {r.id: r for r in frame.requests if r.id >= len(old_requests) or r != old_requests[r.id]}
        self.append(frame.header, frame.metrics, requests, blocks, frame.waiting, frame.running, None, frame.queues,
                    frame.side_pools)
        self._last_frame = frame

    # -- reading -----------------------------------------------------------------------------------------

    @property
    def records(self) -> Sequence[StepRecord]:
        """Every step's record, in order: what the store holds besides its keyframes (which it derives)."""
        return tuple(self._records)

    def _build(self, k: int) -> Frame:
        i = bisect_right(self._keyframe_steps, k) - 1
        if i >= 0:
            first = self._keyframe_steps[i]
            key = self._keyframes[first]
            requests, blocks = list(chain.from_iterable(key.requests)), list(chain.from_iterable(key.blocks))
            waiting, running, queues, side_pools = key.waiting, key.running, dict(key.queues), dict(key.side_pools)
            first += 1
        else:
            first, requests, blocks, waiting, running, queues, side_pools = 0, [], [], (), (), {}, {}
        progress: dict[int, list[int]] = {}
        for rec in self._records[first:k + 1]:
            _advance(rec, requests, progress)
            if rec.requests:  # arrivals of this step
                requests.extend(rec.requests[rid] for rid in range(len(requests), max(rec.requests) + 1))
            for rid, view in rec.requests.items():
                requests[rid] = view
                progress.pop(rid, None)
            if isinstance(rec.blocks, tuple):
                blocks = list(rec.blocks)
            else:
                for bid, block in rec.blocks.items():
                    blocks[bid] = block
            if rec.waiting is not None:
                waiting = rec.waiting.apply(waiting)
            if rec.running is not None:
                running = rec.running.apply(running)
            for name, diff in rec.queues.items():
                queues[name] = diff.apply(queues.get(name, ()))
            side_pools.update(rec.side_pools)
        for rid, (num_tokens, num_computed) in progress.items():
            requests[rid] = requests[rid].progressed(num_tokens, num_computed)
        rec = self._records[k]
        return Frame(rec.header, waiting, running, tuple(requests), tuple(blocks), rec.metrics, self.decided_by, queues,
                     side_pools)


def _advance(rec: StepRecord, requests: list[RequestView], progress: dict[int, list[int]]):
    """Apply the batch rule to the requests of `rec.batch` whose views were not recorded."""
    recorded, batch = rec.requests, rec.header.batch
    for rid, n in zip(batch.seq_ids, batch.num_tokens, strict=True):
        if rid in recorded:
            continue
        state = progress.get(rid)
        if state is None:
            view = requests[rid]
            state = progress[rid] = [view.num_tokens, view.num_computed_tokens]
        state[0], state[1] = advanced_by_batch(state[0], state[1], n)


def advanced_by_batch(num_tokens: int, num_computed: int, scheduled: int) -> tuple[int, int]:
    """(num_tokens, num_computed_tokens) after a step that computed `scheduled` tokens, per the batch rule."""
    num_computed += scheduled
    return (num_tokens + 1 if num_computed >= num_tokens else num_tokens), num_computed
