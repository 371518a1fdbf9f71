"""Runs the scheduler's batches through the model: one packed forward pass per step over a paged KV cache
that this runner owns and that the scheduler's block ids index directly. On a model whose passes are shared by
sessions (runner/share.py), a large step goes in pieces, a forward pass each. Beside that cache it holds one in host
memory for each side pool a scheduler declares (V0's CPU pool), and copies blocks between them when a batch asks
(`copy_blocks`, runner/kv_pools.py)."""

import torch

from runner import sampling, text
from runner.kv_pools import EMPTY_SLOT, checked_copies, runs_by_pools
from runner.llama_forward import step_logits, supports_direct_forward
from runner.model_loading import LoadedModel
from runner.packing import pack_batch
from runner.paged_attention import KVCache, cache_shape
from runner.prepacked_linear import prepacked_linears
from runner.share import current_share, token_cost
from scheduler import Config
from scheduler.contract import GPU_POOL
from scheduler.speculative import accept_drafts


class ModelRunner:
    def __init__(self, loaded: LoadedModel, config: Config, seed: int = 0, side_pools: dict[str, int] | None = None):
        """`side_pools`: the blocks of each pool a scheduler declares beside the main one, held in host memory."""
        self.loaded, self.config, self.seed = loaded, config, seed
        self.model, self.tokenizer, self.device = loaded.model, loaded.tokenizer, loaded.device
        self.block_size = config.kvcache_block_size
        def shape(blocks: int) -> tuple:
            return cache_shape(loaded.num_layers, blocks, self.block_size, loaded.num_kv_heads, loaded.head_dim)

        def slots(blocks: int) -> torch.Tensor:
            return torch.full((blocks * self.block_size,), EMPTY_SLOT)

        self.kv_cache = KVCache.zeros(shape(config.num_kvcache_blocks), loaded.dtype, loaded.device,
                                      shared=loaded.shares_kv_cache)
        self.slot_token_ids = slots(config.num_kvcache_blocks)
        # Every pool as [layers, 2, kv heads, blocks, block size, head dim] (the main one the cache's buffer), with
        # the token id each slot holds; a side pool in host memory, as V0's CPU swap space.
        self.pools = {GPU_POOL: (self.kv_cache.buffer, self.slot_token_ids)}
        for name, blocks in (side_pools or {}).items():
            self.pools[name] = (torch.zeros(shape(blocks), dtype=loaded.dtype), slots(blocks))
        self.direct_forward = supports_direct_forward(self.model, self.device)

    def copy_blocks(self, copies):
        """Copy KV blocks between pools (`Batch.block_copies`: K and V of every layer, and the token ids of their
        slots), in order, before the step's forward pass; a copy outside the pools is refused (ValueError)."""
        size = self.block_size
        sizes = {name: kv.shape[3] for name, (kv, _) in self.pools.items()}
        for src_pool, dst_pool, src, dst in runs_by_pools(checked_copies(copies, sizes)):
            (src_kv, src_tokens), (dst_kv, dst_tokens) = self.pools[src_pool], self.pools[dst_pool]
            dst_kv[:, :, :, dst] = src_kv[:, :, :, src].to(dst_kv.device)
            src_slots = (torch.tensor(src)[:, None] * size + torch.arange(size)).reshape(-1)
            dst_slots = (torch.tensor(dst)[:, None] * size + torch.arange(size)).reshape(-1)
            dst_tokens[dst_slots] = src_tokens[src_slots]

    def pool_block(self, pool: str, block: int) -> torch.Tensor:
        """K and V of every layer of a block of `pool`, [layers, 2, kv heads, block size, head dim] (a copy)."""
        return self.pools[pool][0][:, :, :, block].clone()

    @property
    def eos_token_id(self) -> int:
        return self.loaded.eos_token_id

    def encode_prompt(self, prompt: str, chat: bool = True) -> list[int]:
        return text.encode_prompt(self.tokenizer, prompt, chat)

    def decode(self, token_ids: list[int]) -> str:
        return self.tokenizer.decode(token_ids)

    def token_pieces(self, token_ids: list[int]) -> list[str]:
        return text.token_pieces(self.tokenizer, token_ids)

    def block_token_ids(self, block_id: int) -> list[int]:
        """The token id last written to each slot of the block (EMPTY_SLOT where none was). Slots past a
        sequence's end may still hold a previous owner's tokens, exactly as the K/V tensors do."""
        start = block_id * self.block_size
        return self.slot_token_ids[start:start + self.block_size].tolist()

    def run(self, seqs) -> list:
        """Compute every scheduled token of `seqs`: in one forward pass, or on a shared model in pieces, a pass
        each (`pieces`). Per sequence: None for a prefill chunk that leaves tokens uncomputed, else its next token,
        or for a sequence with speculative drafts the list of drafts the model agrees with followed by the model's
        own next token."""
        budget, results = self.loaded.pass_budget, {}
        for piece in pieces(seqs, budget.piece_tokens(current_share()) if budget else None):
            for item, result in zip(piece, self._run_piece(piece), strict=True):
                results[id(item.seq if isinstance(item, Part) else item)] = result  # a sequence's last part's
        return [results[id(seq)] for seq in seqs]

    def _run_piece(self, seqs) -> list:
        if not seqs:
            return []
        packed = pack_batch(seqs, self.kv_cache, self.device)
        with torch.inference_mode(), prepacked_linears():
            logits = self._logits(packed)
        self.slot_token_ids[packed.slot_mapping] = packed.input_ids
        requests = [(seqs[row], len(seqs[row]) + j) for row, count in packed.sampled for j in range(count)]
        tokens = iter(sampling.sample(logits, requests, self.seed, self.eos_token_id))
        result: list = [None] * len(seqs)
        for row, count in packed.sampled:
            model_tokens = [next(tokens) for _ in range(count)]
            drafts = seqs[row].draft_token_ids
            result[row] = accept_drafts(drafts, model_tokens) if drafts else model_tokens[0]
        return result

    def _logits(self, packed) -> torch.Tensor:
        return step_logits(self.model, self.direct_forward, packed.input_ids[None].to(self.device),
                           packed.positions[None].to(self.device), packed.logits_index, packed.step)


class Part:
    """Tokens [num_computed_tokens, + num_scheduled_tokens) of a sequence's longer span, read as `pack_batch` and
    the sampler read a sequence; everything else is the sequence's own."""

    def __init__(self, seq, num_computed_tokens: int, num_scheduled_tokens: int):
        self.seq, self.num_computed_tokens, self.num_scheduled_tokens = seq, num_computed_tokens, num_scheduled_tokens

    def __getattr__(self, name: str):
        return getattr(self.seq, name)

    def __len__(self) -> int:
        return len(self.seq)


def pieces(seqs: list, max_tokens: int | None) -> list[list]:
    """`seqs` in runs of consecutive sequences costing at most `max_tokens` each (their tokens and context reads,
    `token_cost`), a costlier span in parts (`_parts`), or all together without a limit. Each sequence computes
    exactly what it would in one pass (its attention reads only its own blocks, its samples are drawn by request
    and position; a span in parts is computed as chunked prefill computes it); kept in order, so a block that an
    earlier sequence of the step fills (prefix caching at allocation) is written before a later one reads it."""
    if max_tokens is None:
        return [seqs]
    runs, tokens = [[]], 0
    for item in (part for seq in seqs for part in _parts(seq, max_tokens)):
        cost = token_cost(item.num_scheduled_tokens, item.num_computed_tokens + item.num_scheduled_tokens)
        if runs[-1] and tokens + cost > max_tokens:
            runs.append([])
            tokens = 0
        runs[-1].append(item)
        tokens += cost
    return runs


def _parts(seq, max_tokens: int) -> list:
    """A sequence whose span costs more than `max_tokens`, in consecutive parts that cost at most that (at least a
    token each); a span that fits, or one verifying speculative drafts, whole."""
    start = seq.num_computed_tokens
    end = start + seq.num_scheduled_tokens
    if seq.draft_token_ids or token_cost(end - start, end) <= max_tokens:
        return [seq]
    size = max(1, max_tokens - token_cost(0, end))
    return [Part(seq, first, min(size, end - first)) for first in range(start, end, size)]
