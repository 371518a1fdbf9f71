"""The article's KV-cache block pool: a free list, reference counts, and the prefix cache of full-block hashes."""

from collections import OrderedDict

from scheduler.article.settings import ArticleSettings
from scheduler.block_pool_view import NO_HASH, Block, BlockPoolView, FreeLog, chain_hash
from scheduler.config import Config
from scheduler.sequence import Sequence


class BlockManager(BlockPoolView):
    """Blocks are taken from the head of the free list and returned to its tail, a sequence's last block
    first. A freed block keeps its hash and tokens, so a later request can revive it until it is reused:
    the free list is therefore also the prefix cache's LRU order. Prefix caching follows
    `config.enable_prefix_caching`; the Scheduler that owns this pool swaps `config` when it is reconfigured.
    Its read-only view (what a frame records) is `BlockPoolView`'s."""

    reserved_unit_ids = ()

    def __init__(self, config: Config):
        self.config = config
        self.block_size = config.kvcache_block_size
        self.blocks = [Block(i) for i in range(config.num_kvcache_blocks)]
        self.free_block_ids: OrderedDict[int, None] = OrderedDict.fromkeys(range(config.num_kvcache_blocks))
        self.hash_to_block_id: dict[int, int] = {}
        self.num_prefix_queries = 0  # full prompt blocks looked up
        self.num_prefix_hits = 0
        self.free_log = FreeLog()

    @property
    def num_blocks(self) -> int:
        return len(self.blocks)

    @property
    def num_free_blocks(self) -> int:
        return len(self.free_block_ids)

    def blocks_for(self, num_tokens: int) -> int:
        return -(-num_tokens // self.block_size)

    # -- prefix cache ----------------------------------------------------------------------------------

    def block_hash(self, seq: Sequence, i: int) -> int:
        """The chained hash of `seq`'s full block i, computed once per sequence (its tokens never change)."""
        hashes, bs = seq.block_hashes, self.block_size
        while len(hashes) <= i:
            j = len(hashes)
            hashes.append(chain_hash(seq.token_ids[j * bs:(j + 1) * bs], hashes[-1] if j else NO_HASH))
        return hashes[i]

    def find_cached_prefix(self, seq: Sequence) -> list[int]:
        """Block ids holding this sequence's leading full blocks. Never covers its last token, which must
        be computed for the model to produce logits."""
        if not self.config.enable_prefix_caching:
            return []
        hits = []
        for i in range((len(seq.token_ids) - 1) // self.block_size):
            block_id = self.hash_to_block_id.get(self.block_hash(seq, i))
            if block_id is None or self.blocks[block_id].token_ids != seq.block_tokens(i, self.block_size):
                break
            hits.append(block_id)
        return hits

    def _forget_hash(self, block: Block):
        if block.hash != NO_HASH and self.hash_to_block_id.get(block.hash) == block.block_id:
            del self.hash_to_block_id[block.hash]

    def commit_full_blocks(self, seq: Sequence, computed_before: int):
        """Register in the prefix cache the blocks that became full of computed tokens this step."""
        self._register_full_blocks(seq, computed_before, seq.num_computed_tokens)

    def _register_full_blocks(self, seq: Sequence, start: int, end: int):
        """Register the blocks that tokens [start, end) of `seq` fill (those not registered yet)."""
        if not self.config.enable_prefix_caching:
            return
        bs = self.block_size
        for i in range(start // bs, end // bs):
            block = self.blocks[seq.block_table[i]]
            if block.hash == NO_HASH:
                prefix_hash = self.blocks[seq.block_table[i - 1]].hash if i else NO_HASH
                block.token_ids = seq.block_tokens(i, bs)
                if len(block.token_ids) == bs and (not i or self.block_hash(seq, i - 1) == prefix_hash):
                    block.hash = self.block_hash(seq, i)  # the same chain: the sequence's cached hash
                else:  # a block hashed before its accepted drafts were appended, or chained on an unhashed block
                    block.hash = chain_hash(block.token_ids, prefix_hash)
                self.hash_to_block_id[block.hash] = block.block_id

    # -- allocation ------------------------------------------------------------------------------------

    def _take_free_block(self) -> int:
        block_id, _ = self.free_block_ids.popitem(last=False)
        block = self.blocks[block_id]
        if block.hash != NO_HASH:
            self.free_log.evicted(block_id)
        self._forget_hash(block)
        block.reset()
        return block_id

    def _share(self, block_id: int):
        block = self.blocks[block_id]
        if block.ref_count == 0:
            del self.free_block_ids[block_id]  # revived from the cache
        block.ref_count += 1

    def blocks_to_admit(self, hits: list[int], num_tokens: int) -> int:
        """Free-list entries an admission consumes: fresh blocks for `num_tokens` tokens after the cached
        prefix `hits`, plus the hits that must be revived from the free list."""
        if self.config.of(ArticleSettings).notebook_block_bug:
            return 1
        new_blocks = self.blocks_for(len(hits) * self.block_size + num_tokens) - len(hits)
        return new_blocks + sum(1 for b in hits if self.blocks[b].ref_count == 0)

    def allocate(self, seq: Sequence, hits: list[int], num_tokens: int):
        """Give a sequence its cached prefix blocks plus fresh blocks for `num_tokens` more tokens."""
        for block_id in hits:
            self._share(block_id)
        seq.block_table = list(hits)
        seq.num_computed_tokens = seq.num_cached_tokens = len(hits) * self.block_size
        if self.config.enable_prefix_caching:
            self.num_prefix_queries += (len(seq.token_ids) - 1) // self.block_size
        self.num_prefix_hits += len(hits)
        self.grow(seq, num_tokens)

    def blocks_to_grow(self, seq: Sequence, num_tokens: int) -> int:
        """Free blocks needed for a running sequence to compute `num_tokens` more tokens."""
        if self.config.of(ArticleSettings).notebook_block_bug:
            return self.notebook_blocks_to_grow(seq, num_tokens)
        return max(0, self.blocks_for(seq.num_computed_tokens + num_tokens) - len(seq.block_table))

    def notebook_blocks_to_grow(self, seq: Sequence, num_tokens: int) -> int:
        """The InfraTech notebook's rule: a prefill, recompute included, takes one block whatever its length
        (its Sequence counts blocks of 256 tokens); a decode takes a new block when its token is the first
        of a block. A recomputed 11-token request thus holds one block of 10 that keeps filling past 10."""
        if seq.num_computed_tokens == 0:
            return max(0, 1 - len(seq.block_table))
        start = seq.num_computed_tokens
        return sum(1 for position in range(start, start + num_tokens) if position % self.block_size == 0)

    def take_blocks(self, seq: Sequence, n: int):
        """Append `n` free blocks to `seq`'s table (none where `n` is not positive)."""
        for _ in range(n):
            seq.block_table.append(self._take_free_block())

    def grow(self, seq: Sequence, num_tokens: int):
        self.take_blocks(seq, self.blocks_to_grow(seq, num_tokens))
        # vLLM's rule: a block this step fills with known tokens (never drafts) is reusable at once, by a request
        # scheduled after it: its K/V is written before it is read
        if self.config.of(ArticleSettings).cache_blocks_at_allocation:
            start = seq.num_computed_tokens
            self._register_full_blocks(seq, start, min(len(seq), start + num_tokens))

    def release_unused_tail(self, seq: Sequence):
        """Return the blocks past the computed tokens (taken only for rejected draft tokens) to the free list."""
        while len(seq.block_table) > self.blocks_for(seq.num_computed_tokens):
            block_id = seq.block_table.pop()
            self.blocks[block_id].ref_count -= 1
            self.free_block_ids[block_id] = None
            self.free_log.placed(block_id, at_head=False)

    def deallocate(self, seq: Sequence) -> tuple[int, ...]:
        """Drop a sequence's references, last block first; blocks nobody holds go to the free list's tail."""
        for block_id in reversed(seq.block_table):
            block = self.blocks[block_id]
            block.ref_count -= 1
            if block.ref_count == 0:
                if block.hash == NO_HASH:
                    block.token_ids = []
                self.free_block_ids[block_id] = None
                self.free_log.placed(block_id, at_head=False)
        held = tuple(seq.block_table)
        seq.block_table = []
        seq.num_computed_tokens = 0
        return held
