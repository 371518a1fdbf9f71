"""V0's LRU evictor (vllm/core/evictor.py): the cached blocks no sequence holds, still findable by their hash and
counted as free. `evict` takes the least recently used (its stamp: the step its last holder was last scheduled),
then the deepest (most tokens hashed up to it), then the lowest id.

As in V0 the order lives in a heap with lazy deletion: `update` (a block touched again while free) changes the
stamp in `free_table` only, and a heap entry whose stamp no longer matches is dropped when it surfaces. The twin
keeps that shape on purpose: which block goes when stamps tie or were updated is V0's."""

from __future__ import annotations

import heapq

CLEANUP_THRESHOLD = 50  # rebuild the heap when it holds this many entries per free block


class LRUEvictor:
    __slots__ = ("free_table", "_heap")

    def __init__(self) -> None:
        self.free_table: dict[int, list] = {}  # block id -> [content hash, tokens hashed, last accessed]
        self._heap: list[tuple[float, int, int, int]] = []

    def __contains__(self, block_id: int) -> bool:
        return block_id in self.free_table

    @property
    def num_blocks(self) -> int:
        return len(self.free_table)

    def add(self, block_id: int, content_hash: int, num_hashed_tokens: int, last_accessed: float):
        self.free_table[block_id] = [content_hash, num_hashed_tokens, last_accessed]
        heapq.heappush(self._heap, (last_accessed, -num_hashed_tokens, block_id, content_hash))
        if len(self._heap) > CLEANUP_THRESHOLD * len(self.free_table):
            self._heap = [(meta[2], -meta[1], b, meta[0]) for b, meta in self.free_table.items()]
            heapq.heapify(self._heap)

    def update(self, block_id: int, last_accessed: float):
        self.free_table[block_id][2] = last_accessed

    def remove(self, block_id: int):
        del self.free_table[block_id]

    def evict(self) -> tuple[int, int]:
        """(block id, content hash) of the block to reuse, out of the evictor."""
        table = self.free_table
        while self._heap:
            last_accessed, _, block_id, content_hash = heapq.heappop(self._heap)
            meta = table.get(block_id)
            if meta is not None and meta[2] == last_accessed:
                del table[block_id]
                return block_id, content_hash
        raise ValueError("No usable cache memory left")

    def order(self) -> list[int]:
        """The free table's blocks in the order `evict` would take them now (for the pool's view)."""
        return sorted(self.free_table, key=lambda b: (self.free_table[b][2], -self.free_table[b][1], b))
