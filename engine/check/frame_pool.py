"""The invariants' pool rules (engine/check/invariants.py) over a trace's frames, for the referee
(engine/check/referee.py): no block listed twice in a table, none held by a request that has ended or reserved,
each block's holders counted by the pool, free + used + cached = the pool the config gives. The holders each block has
and the free and cached counts are kept as running tallies, updated by what changed since the frame before, so a
frame costs what changed in it rather than the pool's size; a fresh pool (frame 0, a rebuild) is counted whole."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from engine.check.invariants import holders_counted, holds, listed_once, pool_counted
from engine.run.frame import BlockView, Frame, PoolRebuilt, RequestView
from engine.run.metrics import DONE
from scheduler import Config
from scheduler.factory import runner_config

UNIT = "block"


class FramePool:
    def __init__(self, kind: str):
        self.kind = kind
        self.reserved: frozenset[int] = frozenset()
        self.counted: Counter[int] = Counter()  # block -> the tables listing it
        self.size = self.free = self.cached = 0  # the pool's blocks; those no one holds (the reserved aside), and
        # those of them cached
        self._units: tuple[Config | None, int] = (None, 0)

    @property
    def used(self) -> int:
        return self.size - len(self.reserved) - self.free

    def check(self, before: Frame | None, frame: Frame, changed: Iterable[tuple[RequestView | None, RequestView]]):
        """The pool rules at `frame`; `changed`: the requests whose views changed since `before` (old, new)."""
        fresh = before is None or len(frame.blocks) != len(before.blocks) or any(
            isinstance(event, PoolRebuilt) for event in frame.events)
        touched: Iterable[int]
        tables: Iterable[RequestView]
        if fresh:
            touched, tables = self._count_whole(frame), frame.requests
        else:
            assert before is not None  # a pool is fresh at frame 0
            touched, tables = self._count_changes(before, frame, changed)
        for view in tables:
            self._check_table(view)
        for u in touched:
            block = frame.blocks[u]
            reserved = u in self.reserved
            if block.ref_count != self.counted[u] + reserved:
                owners = [view.id for view in frame.requests if u in view.block_table]
                holders_counted(UNIT, u, block.ref_count, owners, reserved)
        pool_counted(self.free - self.cached, self.used, self.cached, self._pool_units(frame.config))

    def _count_whole(self, frame: Frame) -> range:
        """Every tally counted anew; a unit counted held by no request is one the pool reserves (vLLM's null
        block). Returns the blocks to check: all."""
        self.size = len(frame.blocks)
        self.reserved = frozenset(b.id for b in frame.blocks if b.ref_count and not frame.block_owners(b.id))
        self.counted = Counter(u for view in frame.requests for u in view.block_table)
        self.free = self.cached = 0
        for block in frame.blocks:
            self._tally(block, +1)
        return range(self.size)

    def _count_changes(self, before: Frame, frame: Frame, changed) -> tuple[set[int], list[RequestView]]:
        """The tallies moved on by the tables and blocks that changed. Returns the blocks to check and the tables."""
        touched: set[int] = set()
        tables = []
        for old, new in changed:
            old_table = old.block_table if old is not None else ()
            if new.block_table != old_table:
                self.counted.subtract(old_table)
                self.counted.update(new.block_table)
                touched.update(old_table, new.block_table)
            tables.append(new)
        for block, old_block in zip(frame.blocks, before.blocks, strict=True):
            if block is not old_block:
                self._tally(old_block, -1)
                self._tally(block, +1)
                touched.add(block.id)
        return touched, tables

    def _tally(self, block: BlockView, sign: int):
        if not block.ref_count and block.id not in self.reserved:
            self.free += sign
            self.cached += sign * (block.hash is not None)

    def _check_table(self, view: RequestView):
        table = view.block_table
        if not table:
            return
        if len(set(table)) != len(table):
            listed_once(view.id, table, UNIT)
        holds(view.status not in DONE, "done_holds", seq=view.id, status=view.status, units=len(table))
        for u in self.reserved.intersection(table):
            holds(False, "reserved", seq=view.id, unit=UNIT, id=u)

    def _pool_units(self, config: Config) -> int:
        """The units a pool under `config` has for requests: the runner's, less those its kind reserves (the last
        config's kept: frames share their config until it changes)."""
        if self._units[0] is not config:
            self._units = (config, runner_config(self.kind, config).num_kvcache_blocks)
        return self._units[1] - len(self.reserved)
