"""Attention over the runner's paged KV cache, plugged into stock transformers models.

Every layer first writes the step's new K/V into the slots the scheduler's block tables name, then each
sequence attends over its own blocks read back from the cache, so a prefix-cache hit really reads K/V that
another request wrote (a prefill from position 0 attends over the K/V it has just written, without the
read-back). Decodes (one query each) share one batched call; each multi-token span (a prefill,
a chunk, a recompute) gets its own call with a bottom-right-aligned causal mask.
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from transformers import AttentionInterface

PAGED_ATTENTION = "schedlab_paged"
GATHER_LABEL = "paged_kv_gather"  # profiler label of the cache reads, so a benchmark can time them


class KVCache:
    """One K and one V tensor per layer, each [num_blocks, block_size, kv_heads, head_dim]."""

    def __init__(self, num_layers: int, num_blocks: int, block_size: int, kv_heads: int, head_dim: int,
                 dtype: torch.dtype, device: torch.device):
        shape = (num_blocks, block_size, kv_heads, head_dim)
        self.block_size = block_size
        self.keys = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(num_layers)]
        self.values = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(num_layers)]

    def write(self, layer: int, slots: torch.Tensor, key: torch.Tensor, value: torch.Tensor):
        """Store K/V given as [kv_heads, tokens, head_dim] at flat slot indices (block * block_size + offset)."""
        for cache, new in ((self.keys[layer], key), (self.values[layer], value)):
            cache.view(-1, *cache.shape[2:]).index_copy_(0, slots, new.transpose(0, 1))

    def gather(self, layer: int, block_tables: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """K/V of whole blocks, [batch, kv_heads, blocks * block_size, head_dim] for [batch, blocks] tables."""
        with torch.profiler.record_function(GATHER_LABEL):
            batch, num_blocks = block_tables.shape
            flat = block_tables.reshape(-1)
            return tuple(
                cache.index_select(0, flat).view(batch, num_blocks * self.block_size, *cache.shape[2:])
                .transpose(1, 2)
                for cache in (self.keys[layer], self.values[layer]))


@dataclass
class Span:
    """A sequence computing several tokens: queries [start, end) of the packed step over `context_len`
    positions held in `block_table`; `mask` is None when nothing was cached before (plain causal)."""
    start: int
    end: int
    block_table: torch.Tensor  # [1, blocks]
    context_len: int
    mask: torch.Tensor | None  # [queries, context_len], True where attention is allowed


@dataclass
class Decodes:
    """Sequences computing one token each; they come first in the packed step, one query each."""
    count: int
    block_tables: torch.Tensor  # [batch, max_blocks], padded with block 0
    key_mask: torch.Tensor  # [batch, 1, 1, max_blocks * block_size], False past each context


@dataclass
class PagedStep:
    """Everything one forward pass needs besides the tokens; travels to every layer as a model kwarg."""
    kv_cache: KVCache
    slot_mapping: torch.Tensor  # [tokens], where each new token's K/V goes
    decodes: Decodes | None
    spans: list[Span]


def paged_attention_forward(module, query, key, value, attention_mask, scaling=None, dropout=0.0,
                            paged_step: PagedStep | None = None, **kwargs):
    """Attention function for transformers' AttentionInterface; query/key/value are [1, heads, tokens, dim]."""
    if paged_step is None:
        raise RuntimeError(f"attention '{PAGED_ATTENTION}' needs a paged_step: run this model through "
                           "ModelRunner, or use runner.model_loading.stock_attention for generate()")
    cache, layer = paged_step.kv_cache, module.layer_idx
    cache.write(layer, paged_step.slot_mapping, key[0], value[0])
    parts = []  # attention outputs in packed order, each [tokens, heads, dim]
    if (decodes := paged_step.decodes) is not None:
        k, v = cache.gather(layer, decodes.block_tables)
        q = query[0, :, :decodes.count].transpose(0, 1).unsqueeze(2)  # [batch, heads, 1, dim]
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=decodes.key_mask, scale=scaling, enable_gqa=True)
        parts.append(o.squeeze(2))
    for span in paged_step.spans:
        if span.mask is None:  # nothing cached before: its keys are exactly the ones just written
            k, v = key[:, :, span.start:span.end], value[:, :, span.start:span.end]
        else:
            k, v = cache.gather(layer, span.block_table)
            k, v = k[:, :, :span.context_len], v[:, :, :span.context_len]
        q = query[:, :, span.start:span.end]
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=span.mask, is_causal=span.mask is None,
                                           scale=scaling, enable_gqa=True)
        parts.append(o[0].transpose(0, 1))
    return (parts[0] if len(parts) == 1 else torch.cat(parts)).unsqueeze(0), None


AttentionInterface.register(PAGED_ATTENTION, paged_attention_forward)
