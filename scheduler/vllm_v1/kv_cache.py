"""vLLM V1's KV-cache bookkeeping for one full-attention group: its block pool and the parts of its KV cache
manager the scheduler calls (prefix-cache lookup, `allocate_slots`, `free`), so block ids are vLLM's.

Where it differs from scheduler/article/block_manager.py (the article's pool), on purpose:
- block 0 is the null block, taken out of the free queue at start and never given to a request, so a pool of
  N usable blocks holds N + 1 ids and requests get ids 1..N;
- freeing puts blocks with a prefix-cache hash at the tail of the free queue (evicted last, LRU) and blocks
  without one at its head (reused first), each group in the order given, the request's last block first;
- a block is cached (hashed) when it is allocated full of known tokens, not once computed; two blocks may
  hold the same hash (vLLM never de-duplicates, so block tables stay append-only) and a lookup takes the
  one cached first;
- blocks taken for draft tokens that were rejected stay with the request (vLLM never shrinks a table);
- a waiting request is admitted only if its whole sequence fits (`scheduler_reserve_full_isl`, on by default;
  off, once this step's chunk fits), leaving the watermark's blocks free (`watermark`, 0 by default).
"""

from __future__ import annotations

from collections import OrderedDict

from scheduler.block_pool_view import NO_HASH, Block, BlockPoolView, FreeLog, chain_hash
from scheduler.sequence import Sequence

NULL_BLOCK_ID = 0


class KVCache(BlockPoolView):
    """The pool (`blocks`, `free_block_ids` in eviction order, the hash map) and each request's block table,
    kept in `seq.block_table` like the article's pool, so the engine's recorder and runners read it as before;
    its read-only view is `BlockPoolView`'s, the null block its one reserved unit."""

    reserved_unit_ids = (NULL_BLOCK_ID,)
    places_at_head = True

    def __init__(self, num_blocks: int, block_size: int, max_model_len: int, enable_caching: bool):
        self.block_size, self.max_model_len, self.enable_caching = block_size, max_model_len, enable_caching
        self.blocks = [Block(i) for i in range(num_blocks + 1)]  # + the null block
        self.blocks[NULL_BLOCK_ID].ref_count = 1  # held for good (vLLM does not count its references)
        self.free_block_ids: OrderedDict[int, None] = OrderedDict.fromkeys(range(1, num_blocks + 1))
        self.hash_to_block_ids: dict[int, dict[int, None]] = {}  # several blocks may share a hash: first wins
        self.num_cached_blocks: dict[int, int] = {}  # request id -> leading blocks of its table already hashed
        self.num_prefix_queries = self.num_prefix_hits = 0  # full blocks looked up and found, as the article counts
        # vLLM's PrefixCacheStats, in tokens: looked up and found, for requests never preempted (its log's hit rate)
        # and, apart, for preempted ones looking themselves up again
        self.prefix_query_tokens = self.prefix_hit_tokens = 0
        self.preempted_query_tokens = self.preempted_hit_tokens = 0
        self.evicted: list[int] = []  # cached blocks reused since the scheduler last told them (its evicted events)
        self.free_log = FreeLog()

    @property
    def num_blocks(self) -> int:
        """Usable blocks (the null block is not one)."""
        return len(self.blocks) - 1

    @property
    def num_free_blocks(self) -> int:
        return len(self.free_block_ids)

    def blocks_for(self, num_tokens: int) -> int:
        return -(-num_tokens // self.block_size)

    # -- prefix cache ----------------------------------------------------------------------------------

    def block_hashes(self, seq: Sequence, num_tokens: int) -> list[int]:
        """The chained hashes of `seq`'s full blocks among its first `num_tokens` tokens (computed once each)."""
        hashes, bs = seq.block_hashes, self.block_size
        for i in range(len(hashes), num_tokens // bs):
            hashes.append(chain_hash(seq.token_ids[i * bs:(i + 1) * bs], hashes[-1] if i else NO_HASH))
        return hashes

    def find_cached_prefix(self, seq: Sequence, num_tokens: int) -> list[int]:
        """Block ids of `seq`'s longest cached prefix of full blocks, never its last token (it must be computed
        for the logits): vLLM's `get_computed_blocks`."""
        if not self.enable_caching:
            return []
        hits, lookup = [], self.hash_to_block_ids.get
        for h in self.block_hashes(seq, num_tokens)[:(num_tokens - 1) // self.block_size]:
            ids = lookup(h)
            if ids is None:
                break
            hits.append(next(iter(ids)))
        self.num_prefix_queries += (num_tokens - 1) // self.block_size
        self.num_prefix_hits += len(hits)
        if seq.num_preemptions:
            self.preempted_query_tokens += num_tokens
            self.preempted_hit_tokens += len(hits) * self.block_size
        else:
            self.prefix_query_tokens += num_tokens
            self.prefix_hit_tokens += len(hits) * self.block_size
        return hits

    def _cache_full_blocks(self, seq: Sequence, num_tokens: int):
        """Hash the blocks the first `num_tokens` known tokens fill, past those already hashed."""
        start, end = self.num_cached_blocks.get(seq.seq_id, 0), num_tokens // self.block_size
        if start >= end:
            return
        hashes, table, blocks = self.block_hashes(seq, num_tokens), seq.block_table, self.blocks
        for i in range(start, end):
            block = blocks[table[i]]
            block.hash = hashes[i]
            self.hash_to_block_ids.setdefault(block.hash, {})[block.block_id] = None
        self.num_cached_blocks[seq.seq_id] = end

    def cache_blocks(self, seq: Sequence, num_tokens: int):
        if self.enable_caching:
            self._cache_full_blocks(seq, num_tokens)

    # -- allocation ------------------------------------------------------------------------------------

    def _evictable(self, hits: list[int]) -> int:
        """Cache hits that sit in the free queue: touching them takes them out of it."""
        return sum(1 for b in hits if self.blocks[b].ref_count == 0)

    def allocate_slots(self, seq: Sequence, num_new_tokens: int, num_tokens: int, hits: list[int] | None = None,
                       full_sequence_must_fit: bool = False, keep_free: int = 0) -> bool:
        """vLLM's `allocate_slots`: blocks for `seq` to compute `num_new_tokens` more tokens after its computed
        ones, for a waiting request after its cache hits `hits` (taken here); False, changing nothing, when the
        free queue is too short (or, `full_sequence_must_fit`, too short for all its `num_tokens` known tokens),
        `keep_free` blocks (the watermark) left over. Then the blocks full of known tokens are hashed."""
        held = len(seq.block_table) + (len(hits) if hits else 0)
        need_hits = self._evictable(hits) if hits else 0
        computed = seq.num_computed_tokens + (len(hits) * self.block_size if hits else 0)
        free = len(self.free_block_ids) - keep_free
        if full_sequence_must_fit:
            whole = self.blocks_for(min(num_tokens, self.max_model_len))
            if max(whole - held, 0) + need_hits > free:
                return False
        new = max(self.blocks_for(min(computed + num_new_tokens, self.max_model_len)) - held, 0)
        if new + need_hits > free:
            return False
        if hits is not None and self.enable_caching:  # a waiting request takes its hits (vLLM "touches" them)
            self._touch(hits)
            seq.block_table = list(hits)
            self.num_cached_blocks[seq.seq_id] = len(hits)
        if new:
            seq.block_table += self._take_free_blocks(new)
        self.cache_blocks(seq, min(computed + num_new_tokens, num_tokens))
        return True

    def _touch(self, hits: list[int]):
        blocks, free = self.blocks, self.free_block_ids
        for b in hits:
            block = blocks[b]
            if block.ref_count == 0:
                del free[b]
            block.ref_count += 1

    def _take_free_blocks(self, n: int) -> list[int]:
        """From the head of the free queue; a block still in the prefix cache leaves it (evicted)."""
        taken, free, blocks = [], self.free_block_ids, self.blocks
        for _ in range(n):
            block_id, _ = free.popitem(last=False)
            block = blocks[block_id]
            if block.hash != NO_HASH:
                self.free_log.evicted(block_id)
                self.evicted.append(block_id)
                ids = self.hash_to_block_ids[block.hash]
                del ids[block_id]
                if not ids:
                    del self.hash_to_block_ids[block.hash]
                block.hash = NO_HASH
            block.ref_count = 1
            taken.append(block_id)
        return taken

    def free(self, seq: Sequence) -> tuple[int, ...]:
        """Drop `seq`'s blocks, last first: hashed ones go to the tail of the free queue, the others to its head
        (in that order). Returns the table it held."""
        held = tuple(seq.block_table)
        self.num_cached_blocks.pop(seq.seq_id, None)
        seq.block_table = []
        blocks, free = self.blocks, self.free_block_ids
        to_head = []
        for b in reversed(held):
            block = blocks[b]
            block.ref_count -= 1
            if block.ref_count == 0:
                if block.hash == NO_HASH or not self.enable_caching:
                    to_head.append(b)
                else:
                    free[b] = None
                    self.free_log.placed(b, at_head=False)
        for b in reversed(to_head):
            free[b] = None
            free.move_to_end(b, last=False)
            self.free_log.placed(b, at_head=True)
        return held
