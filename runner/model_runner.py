"""Runs the scheduler's batches through the model: one packed forward pass per step over a paged KV cache
that this runner owns and that the scheduler's block ids index directly. On a model whose passes are shared by
sessions (runner/share.py), a large step goes in pieces, a forward pass each."""

import torch

from runner import sampling, text
from runner.llama_forward import step_logits, supports_direct_forward
from runner.model_loading import LoadedModel
from runner.packing import pack_batch
from runner.paged_attention import KVCache, cache_shape
from runner.prepacked_linear import prepacked_linears
from runner.share import current_share, token_cost
from scheduler import Config
from scheduler.speculative import accept_drafts

EMPTY_SLOT = -1  # block_token_ids() entry of a slot nothing was ever written to


class ModelRunner:
    def __init__(self, loaded: LoadedModel, config: Config, seed: int = 0):
        self.loaded, self.config, self.seed = loaded, config, seed
        self.model, self.tokenizer, self.device = loaded.model, loaded.tokenizer, loaded.device
        self.block_size = config.kvcache_block_size
        shape = cache_shape(loaded.num_layers, config.num_kvcache_blocks, self.block_size, loaded.num_kv_heads,
                            loaded.head_dim)
        self.kv_cache = KVCache.zeros(shape, loaded.dtype, loaded.device, shared=loaded.shares_kv_cache)
        self.slot_token_ids = torch.full((config.num_kvcache_blocks * self.block_size,), EMPTY_SLOT)
        self.direct_forward = supports_direct_forward(self.model, self.device)

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
