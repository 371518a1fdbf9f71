"""`KVPoolView` (scheduler/contract.py) for a pool of blocks: the article's `BlockManager` and the vLLM twin's
`KVCache` both keep `blocks` (ref count and hash each), `free_block_ids` (an OrderedDict, head first) and
`block_size`; this mixin reads them, and `FreeLog` is where each pool states how its free order changed."""

from __future__ import annotations

from collections import OrderedDict
from typing import ClassVar

import xxhash

from scheduler.contract import PoolChanges, UnitState

NO_HASH = -1  # a block's hash while it holds no full, cached block


def chain_hash(token_ids: list[int], prefix_hash: int) -> int:
    """Hash of a full block, chained over the hash of the block before it (NO_HASH for the first)."""
    h = xxhash.xxh64()
    h.update(prefix_hash.to_bytes(8, "little", signed=True))
    h.update(str(token_ids)[1:-1].replace(" ", "").encode())  # "1,2,3": as ",".join(map(str, ...)), twice as fast
    return h.intdigest() - (1 << 63)  # a signed 64-bit int never equal to NO_HASH in practice


class Block:
    def __init__(self, block_id: int):
        self.block_id = block_id
        self.ref_count = 0
        self.hash = NO_HASH
        self.token_ids: list[int] = []

    def reset(self):
        self.ref_count = 1
        self.hash = NO_HASH
        self.token_ids = []


class FreeLog:
    """The units a pool placed at either end of its free order, and the cached units it evicted, since the last
    `take()`. Only each unit's last placement matters, so the log holds one entry per unit, in the order of their
    last placements: bounded by the pool however long nobody takes it."""

    __slots__ = ("_placed", "_evicted")

    def __init__(self):
        self._placed: dict[int, bool] = {}  # unit -> placed at the head (else the tail), in placement order
        self._evicted: dict[int, None] = {}

    def placed(self, unit_id: int, at_head: bool):
        self._placed.pop(unit_id, None)
        self._placed[unit_id] = at_head

    def evicted(self, unit_id: int):
        self._evicted[unit_id] = None

    def take(self) -> PoolChanges:
        placed = self._placed
        changes = PoolChanges(tuple(u for u, at_head in placed.items() if at_head),
                              tuple(u for u, at_head in placed.items() if not at_head), tuple(self._evicted))
        self._placed, self._evicted = {}, {}
        return changes


class BlockPoolView:
    """The read-only view of a block pool; the pool provides `blocks`, `free_block_ids`, `block_size`,
    `reserved_unit_ids`, `num_prefix_queries`, `num_prefix_hits` and its `free_log`; `places_at_head` says
    whether it frees blocks to the head of its free order too."""
    unit_name: ClassVar[str] = "block"
    places_at_head = False
    # What the pool provides
    blocks: list[Block]
    free_block_ids: OrderedDict[int, None]
    block_size: int
    reserved_unit_ids: tuple[int, ...]
    free_log: FreeLog

    @property
    def tokens_per_unit(self) -> int:
        return self.block_size

    @property
    def num_units(self) -> int:
        return len(self.blocks) - len(self.reserved_unit_ids)

    @property
    def unit_ids(self) -> range:
        return range(len(self.blocks))

    @property
    def num_free_units(self) -> int:
        return len(self.free_block_ids)

    def unit_state(self, unit_id: int) -> tuple[int, int | None]:
        block = self.blocks[unit_id]
        return block.ref_count, None if block.hash == NO_HASH else block.hash

    def state(self, unit_id: int) -> UnitState:
        block = self.blocks[unit_id]
        if block.ref_count:
            return UnitState.USED
        return UnitState.FREE if block.hash == NO_HASH else UnitState.CACHED

    def free_order(self):
        return iter(self.free_block_ids)

    def cached_keys(self) -> dict[int, int]:
        return {b.block_id: b.hash for b in self.blocks if b.hash != NO_HASH}

    def recent_changes(self) -> PoolChanges:
        """The free log's changes. A pool that frees to both ends, all of whose free blocks were placed since the
        last look, states them as placed at its head, one after the other from its tail (with no older free block
        to place them against, either end is its free order; this way the head is the one ranked from)."""
        changes = self.free_log.take()
        free = self.free_block_ids
        if (self.places_at_head and changes.to_tail and len(changes.to_head) + len(changes.to_tail) >= len(free)
                and free.keys() <= {*changes.to_head, *changes.to_tail}):
            return PoolChanges(tuple(reversed(free)), (), changes.evicted)
        return changes
