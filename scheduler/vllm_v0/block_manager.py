"""V0's block space manager (vllm/core/block_manager.py SelfAttnBlockSpaceManager over vllm/core/block/*): a GPU
and a CPU block allocator, each sequence's block table, the prefix cache's computed-blocks tracker, and the
questions the scheduler asks (`can_allocate` -> OK / LATER / NEVER, `can_append_slots`, `can_swap_in`,
`can_swap_out`) with the moves it makes (`allocate`, `append_slots`, `swap_out`, `swap_in`, `free`).

Block ids are V0's: GPU blocks 0..G-1, CPU blocks G..G+C-1 (`swap_out`/`swap_in` report CPU blocks by their
number in the CPU pool, 0..C-1, as V0's physical ids). An allocator hands out the head of its free list and puts
a freed block back at the head (the last freed is reused first). With prefix caching a full block is known by
its chained hash: allocating a full block whose hash is cached shares that block, a block that fills up takes
the cached twin of its content when there is one (its own id goes back to the free list), and a freed cached
block goes to the LRU evictor (scheduler/vllm_v0/evictor.py), still free and still findable, until a new block
finds the free list empty. The CPU pool caches the same way (V0 builds it from the same allocator class)."""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from enum import Enum

from scheduler.vllm_v0.evictor import LRUEvictor

NONE_HASH = hash("None")  # the hash a first block chains from


class AllocStatus(Enum):
    """can_allocate / can_swap_in's answer: now, once blocks are freed, or never (the pool is too small)."""
    OK = "OK"
    LATER = "LATER"
    NEVER = "NEVER"


class NoFreeBlocksError(ValueError):
    pass


def blocks_touched_by_append(num_full_slots: int, num_tokens: int, block_size: int) -> int:
    """V0's worst case for appending `num_tokens` to a table holding `num_full_slots` tokens: every block the
    tokens touch might need a new one, and even zero tokens touch the last block when it is partly full."""
    first_chunk = block_size - num_full_slots % block_size
    return 1 - ((first_chunk - num_tokens) // block_size)


class BlockAllocator:
    """One device's blocks: V0's NaiveBlockAllocator, or its PrefixCachingBlockAllocator when `caching` (the
    hashless free list first, then the evictor). Reference counts start at 0; a block a table holds has 1 or more."""

    def __init__(self, first_id: int, num_blocks: int, block_size: int, caching: bool):
        self.first_id, self.num_blocks, self.block_size, self.caching = first_id, num_blocks, block_size, caching
        self.free_ids: deque[int] = deque(range(first_id, first_id + num_blocks))
        self.refcount = dict.fromkeys(self.free_ids, 0)
        self.cached: dict[int, int] = {}  # content hash -> block id (prefix caching)
        self.hash_of: dict[int, int] = {}  # block id -> content hash, for the blocks in `cached`
        self.evictor = LRUEvictor()
        self.active: set[int] = set()  # V0's BlockTracker: blocks allocated and tracked
        self.last_accessed: dict[int, float] = {}
        self.computed: set[int] = set()
        self.touched: set[int] = set()  # blocks cached since the last mark_blocks_as_computed
        self.evicted: list[int] = []  # evicted since the scheduler last read them (its events)
        self.num_queries = self.num_hits = 0

    @property
    def num_free(self) -> int:
        return len(self.free_ids) + self.evictor.num_blocks

    def _track(self, block_id: int, computed: bool):
        self.active.add(block_id)
        self.last_accessed[block_id] = -1
        if computed:
            self.computed.add(block_id)
        else:
            self.computed.discard(block_id)

    def _untrack(self, block_id: int):
        self.active.discard(block_id)
        self.last_accessed[block_id] = -1
        self.computed.discard(block_id)

    def allocate_mutable(self) -> int:
        """A block for new tokens: the head of the free list, else (prefix caching) the evictor's choice."""
        if self.free_ids:
            block_id = self.free_ids.popleft()
            self.refcount[block_id] += 1
            if self.caching:
                self._track(block_id, computed=False)
            return block_id
        if self.caching and self.evictor.num_blocks:
            block_id, content_hash = self.evictor.evict()
            if self.cached.get(content_hash) != block_id or self.refcount[block_id]:
                # a stale heap entry (same stamp, same depth) won on its hash: V0's own assertions fail here
                raise AssertionError(f"vLLM 0.10.2's evictor returned block {block_id} with a hash it no longer "
                                     "caches (its assertions in _maybe_allocate_evicted_block_id fail)")
            del self.cached[content_hash], self.hash_of[block_id]
            self.refcount[block_id] += 1
            self._track(block_id, computed=False)
            self.evicted.append(block_id)
            return block_id
        raise NoFreeBlocksError()

    def allocate_immutable(self, content_hash: int) -> int:
        """A full block of known content: the cached block of that hash (shared), else a new one, cached."""
        if not self.caching:
            return self.allocate_mutable()
        self.num_queries += 1
        cached = self.cached.get(content_hash)
        if cached is not None:
            self.num_hits += 1
            self._hold_cached(cached)
            return cached
        return self.promote(self.allocate_mutable(), content_hash)

    def promote(self, block_id: int, content_hash: int) -> int:
        """A block that just filled up: cached under its hash, or, when another block holds that content, given
        back and that block shared instead. Returns the block the table holds now."""
        cached = self.cached.get(content_hash)
        if cached is None:
            self.cached[content_hash], self.hash_of[block_id] = block_id, content_hash
            self.touched.add(block_id)
            return block_id
        self._release_hashless(block_id)
        self._hold_cached(cached)
        return cached

    def _hold_cached(self, block_id: int):
        self.refcount[block_id] += 1
        if self.refcount[block_id] == 1:
            if block_id in self.evictor:
                self.evictor.remove(block_id)
            self._track(block_id, computed=True)

    def _release_hashless(self, block_id: int):
        if self.caching and self.refcount[block_id] == 1:
            self._untrack(block_id)
        self.refcount[block_id] -= 1
        if self.refcount[block_id] == 0:
            self.free_ids.appendleft(block_id)

    def free(self, block_id: int, content_hash: int | None, num_hashed_tokens: int):
        """One holder fewer. A cached block no one holds goes to the evictor, stamped with its last access; any
        other goes back to the head of the free list."""
        if content_hash is None or not self.caching:
            self._release_hashless(block_id)
            return
        self.refcount[block_id] -= 1
        if self.refcount[block_id] == 0:
            self.evictor.add(block_id, content_hash, num_hashed_tokens, self.last_accessed[block_id])
            self._untrack(block_id)

    def num_full_blocks_touched(self, full_hashes: list[int]) -> int:
        """Full blocks a swap onto this device would need a block for (prefix caching: those not cached here,
        or cached in the evictor)."""
        if not self.caching:
            return len(full_hashes)
        cached, evictor = self.cached, self.evictor
        return sum(1 for h in full_hashes if h not in cached or cached[h] in evictor)

    def mark_accessed(self, block_ids: list[int], now: float):
        for block_id in block_ids:
            if block_id in self.active:
                self.last_accessed[block_id] = now
            elif block_id in self.evictor:
                self.evictor.update(block_id, now)
            else:
                raise ValueError("Mark block as accessed which is not belonged to GPU")

    def mark_computed(self):
        self.computed |= self.touched
        self.touched.clear()

    def _is_computed(self, block_id: int) -> bool:
        return block_id in self.computed if block_id in self.active else block_id in self.evictor

    def cached_prefix(self, hashes: list[int]) -> int:
        """How many leading hashes are cached and computed, found by V0's bisection (which assumes they are)."""
        cached = self.cached
        return bisect_left(hashes, True, key=lambda h: not (h in cached and self._is_computed(cached[h])))


class BlockTable:
    """A sequence's blocks (`ids`, on the GPU or the CPU) and how many of its tokens they hold; block i is full
    once `num_full_slots` reaches (i + 1) x block size, and then known by the sequence's i-th chained hash."""
    __slots__ = ("ids", "num_full_slots")

    def __init__(self) -> None:
        self.ids: list[int] = []
        self.num_full_slots = 0


class BlockSpaceManager:
    """V0's SelfAttnBlockSpaceManager for one-sequence groups (the only kind 0.10.2's engine makes)."""

    def __init__(self, block_size: int, num_gpu_blocks: int, num_cpu_blocks: int, watermark: float,
                 enable_caching: bool):
        self.block_size, self.enable_caching = block_size, enable_caching
        self.num_total_gpu_blocks = num_gpu_blocks
        self.watermark_blocks = int(watermark * num_gpu_blocks)
        self.gpu = BlockAllocator(0, num_gpu_blocks, block_size, enable_caching)
        self.cpu = BlockAllocator(num_gpu_blocks, num_cpu_blocks, block_size, enable_caching)
        self.block_tables: dict[int, BlockTable] = {}
        self.num_cached_tokens: dict[int, int] = {}  # V0's ComputedBlocksTracker: seq id -> its memo
        self.last_access: dict[int, float | None] = {}  # V0's LastAccessBlocksTracker

    # -- the scheduler's questions ------------------------------------------------------------------------

    def can_allocate(self, group) -> tuple[AllocStatus, int, int]:
        """(status, blocks the whole prompt needs, free GPU blocks): NEVER when the pool less the watermark
        cannot hold it, OK when the free blocks less it keep the watermark, else LATER."""
        required = -(-len(group.seq.token_ids) // self.block_size)
        free = self.gpu.num_free
        if self.num_total_gpu_blocks - required < self.watermark_blocks:
            return AllocStatus.NEVER, required, free
        return (AllocStatus.OK if free - required >= self.watermark_blocks else AllocStatus.LATER), required, free

    def can_append_slots(self, group) -> bool:
        """Every block the unseen tokens touch must be free (a decode needs one even when its token fits)."""
        return self.blocks_touched(group) <= self.gpu.num_free

    def blocks_touched(self, group) -> int:
        table = self.block_tables[group.request_id]
        return blocks_touched_by_append(table.num_full_slots, len(group.seq.token_ids) - table.num_full_slots,
                                        self.block_size)

    def can_swap_in(self, group) -> tuple[AllocStatus, int]:
        return self._can_swap(group, self.gpu, self.watermark_blocks)

    def can_swap_out(self, group) -> bool:
        return self._can_swap(group, self.cpu, 0)[0] is AllocStatus.OK

    def _can_swap(self, group, allocator: BlockAllocator, watermark: int) -> tuple[AllocStatus, int]:
        table = self.block_tables[group.request_id]
        touched = self.blocks_touched(group) + allocator.num_full_blocks_touched(self._full_hashes(group, table))
        if allocator.num_blocks < touched:
            return AllocStatus.NEVER, touched
        return (AllocStatus.OK if allocator.num_free - touched >= watermark else AllocStatus.LATER), touched

    def _full_hashes(self, group, table: BlockTable) -> list[int]:
        return group.block_hashes(table.num_full_slots // self.block_size)

    # -- the moves ------------------------------------------------------------------------------------------

    def allocate(self, group):
        """Blocks for the whole prompt (prompt and outputs, after a recompute): full blocks by content, then the
        partly filled last one."""
        seq, bs, gpu = group.seq, self.block_size, self.gpu
        n = len(seq.token_ids)
        table = self.block_tables[group.request_id] = BlockTable()
        table.ids = [gpu.allocate_immutable(h) for h in group.block_hashes(n // bs)]
        if n % bs:
            table.ids.append(gpu.allocate_mutable())
        table.num_full_slots = n
        self.last_access[group.request_id] = None

    def append_slots(self, group):
        """Slots for the unseen tokens: new blocks at the end as needed, then each block they fill cached."""
        table, bs, gpu = self.block_tables[group.request_id], self.block_size, self.gpu
        full, n = table.num_full_slots, len(group.seq.token_ids)
        if n == full:
            return
        missing = (n - full) - (len(table.ids) * bs - full)
        for _ in range(-(-missing // bs) if missing > 0 else 0):
            table.ids.append(gpu.allocate_mutable())
        if self.enable_caching:
            ids, hashes = table.ids, group.block_hashes(n // bs)
            for i in range(full // bs, n // bs):
                ids[i] = gpu.promote(ids[i], hashes[i])
        table.num_full_slots = n

    def free(self, group):
        """V0's free(seq): the blocks' last access stamped (prefix caching), then each block given back, in
        table order."""
        rid = group.request_id
        table = self.block_tables.pop(rid, None)
        if table is None:
            return
        stamp = self.last_access.pop(rid, None)
        if stamp is not None:
            self.gpu.mark_accessed(table.ids, stamp)
        self.remove_from_computed_tracker(group)
        self._release(self.gpu, group, table)

    def free_swapped(self, group):
        """Give back a swapped-out sequence's CPU blocks (an abort: V0's free would stamp them as GPU blocks and
        fail; the twin frees them from the CPU pool)."""
        table = self.block_tables.pop(group.request_id)
        self.last_access.pop(group.request_id, None)
        self.num_cached_tokens.pop(group.request_id, None)
        self._release(self.cpu, group, table)

    def _release(self, allocator: BlockAllocator, group, table: BlockTable):
        bs = self.block_size
        hashes = self._full_hashes(group, table)
        for i, block_id in enumerate(table.ids):
            allocator.free(block_id, hashes[i] if i < len(hashes) else None, (i + 1) * bs)

    def swap_out(self, group) -> list[tuple[int, int]]:
        """The sequence's blocks to the CPU pool: (GPU block, CPU block number) pairs."""
        return [(src, dst - self.num_total_gpu_blocks) for src, dst in self._swap(group, self.gpu, self.cpu)]

    def swap_in(self, group) -> list[tuple[int, int]]:
        """Back to the GPU: (CPU block number, GPU block) pairs."""
        return [(src - self.num_total_gpu_blocks, dst) for src, dst in self._swap(group, self.cpu, self.gpu)]

    def _swap(self, group, src: BlockAllocator, dst: BlockAllocator) -> list[tuple[int, int]]:
        table = self.block_tables[group.request_id]
        if not table.ids:
            return []
        self._release(src, group, table)
        hashes = self._full_hashes(group, table)
        new_ids = [dst.allocate_immutable(hashes[i]) if i < len(hashes) else dst.allocate_mutable()
                   for i in range(len(table.ids))]
        mapping = dict(zip(table.ids, new_ids, strict=True))
        table.ids = new_ids
        return list(mapping.items())

    # -- prefix caching ---------------------------------------------------------------------------------------

    def get_num_cached_tokens(self, group) -> int:
        """V0's ComputedBlocksTracker: the tokens of the leading blocks cached and computed, counted once while
        the sequence is in its prefill (the memo), afresh otherwise."""
        if not self.enable_caching:
            return 0
        rid = group.request_id
        memo = self.num_cached_tokens.get(rid)
        if memo is not None and group.is_prefill:
            return memo
        hashes = group.block_hashes(len(group.seq.token_ids) // self.block_size)
        count = self.num_cached_tokens[rid] = self.gpu.cached_prefix(hashes) * self.block_size
        return count

    def remove_from_computed_tracker(self, group):
        """Forget the memo; V0 asserts it was there."""
        if not self.enable_caching:
            return
        if self.num_cached_tokens.pop(group.request_id, None) is None:
            raise AssertionError(f"vLLM 0.10.2's ComputedBlocksTracker has no entry for sequence "
                                 f"{group.request_id} (remove_seq asserts it)")

    def access(self, group, now: float):
        if self.enable_caching:
            self.last_access[group.request_id] = now

    def computed_block_ids(self, group) -> list[int]:
        """The leading blocks an admission found cached (its memo)."""
        if not self.enable_caching:
            return []
        table = self.block_tables[group.request_id]
        return table.ids[:self.num_cached_tokens.get(group.request_id, 0) // self.block_size]

    def common_computed_block_ids(self, group) -> list[int]:
        """V0's get_common_computed_block_ids for a scheduled sequence (the model skips these blocks): it asks
        the computed-blocks tracker again, which counts a decode afresh and makes its entry anew."""
        if not self.enable_caching:
            return []
        self.get_num_cached_tokens(group)
        return self.computed_block_ids(group)
