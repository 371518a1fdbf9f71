"""`KVPoolView` (scheduler/contract.py) over one of V0's block allocators: the GPU pool (the scheduler's `pool`), and
the CPU pool swapped-out blocks wait in (its declared side pool, `SidePool("cpu", ...)`). Units are numbered
in their pool (CPU block G + k is the CPU pool's unit k, V0's physical id). The free order is V0's: the hashless
free list head first, then the evictor's blocks in the order it evicts them (least recently used, deepest,
lowest id; a block touched again while free has lost its place in V0's heap and is listed by its stamp)."""

from __future__ import annotations

from scheduler.contract import PoolChanges, UnitState
from scheduler.vllm_v0.block_manager import BlockAllocator


class V0PoolView:
    unit_name = "block"
    reserved_unit_ids: tuple[int, ...] = ()

    def __init__(self, allocator: BlockAllocator):
        self.allocator = allocator
        self._offset = allocator.first_id

    @property
    def tokens_per_unit(self) -> int:
        return self.allocator.block_size

    @property
    def num_units(self) -> int:
        return self.allocator.num_blocks

    @property
    def unit_ids(self) -> range:
        return range(self.allocator.num_blocks)

    @property
    def num_free_units(self) -> int:
        return self.allocator.num_free

    @property
    def num_prefix_queries(self) -> int:
        return self.allocator.num_queries

    @property
    def num_prefix_hits(self) -> int:
        return self.allocator.num_hits

    def unit_state(self, unit_id: int) -> tuple[int, int | None]:
        block_id = unit_id + self._offset
        return self.allocator.refcount[block_id], self.allocator.hash_of.get(block_id)

    def state(self, unit_id: int) -> UnitState:
        block_id = unit_id + self._offset
        if self.allocator.refcount[block_id]:
            return UnitState.USED
        return UnitState.CACHED if block_id in self.allocator.evictor else UnitState.FREE

    def free_order(self):
        offset = self._offset
        return [b - offset for b in (*self.allocator.free_ids, *self.allocator.evictor.order())]

    def cached_keys(self) -> dict[int, int]:
        return {b - self._offset: h for b, h in self.allocator.hash_of.items()}

    def recent_changes(self) -> PoolChanges:
        """V0's free list and evictor move blocks inside the order: the reader reads free_order() whole."""
        return PoolChanges(reordered=True)



class CpuPoolView:
    """The CPU pool as the contract's `SidePoolView`: its units (V0's CPU block numbers) and the swapped-out request
    each one holds (None: free), read from the swapped queue's block tables when asked."""

    def __init__(self, num_units: int, holders: dict[int, int]):
        self._num_units, self._holders = num_units, holders

    @property
    def unit_ids(self) -> range:
        return range(self._num_units)

    def holder(self, unit_id: int) -> int | None:
        return self._holders.get(unit_id)
