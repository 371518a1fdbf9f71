"""Attention over the runner's paged KV cache, plugged into stock transformers models.

Every layer first writes the step's new K/V into the slots the scheduler's block tables name, then each
sequence attends over its own blocks read back from the cache, so a prefix-cache hit really reads K/V that
another request wrote (a prefill from position 0 attends over the K/V it has just written, without the
read-back). Decodes (one query each) share one batched matrix product per layer; each multi-token span (a prefill,
a chunk, a recompute) gets its own call with a bottom-right-aligned causal mask.

The cache is laid out kv head first, so that one gather per layer and tensor puts each (kv head, sequence)
context in a row of its own: a decode's query heads that share a kv head (grouped-query attention) then take one
batched matrix product against it, with no copy of the keys repeated per head. A step works out which cache blocks
to gather once, in `pack_batch`, for every layer.
"""

import itertools
import math
import os
import tempfile
import weakref
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from transformers import AttentionInterface

PAGED_ATTENTION = "schedlab_paged"
GATHER_LABEL = "paged_kv_gather"  # profiler label of the cache reads, so a benchmark can time them


def cache_shape(num_layers: int, num_blocks: int, block_size: int, kv_heads: int, head_dim: int) -> tuple:
    """A KVCache buffer's shape: K then V of each layer, kv head first."""
    return num_layers, 2, kv_heads, num_blocks, block_size, head_dim


@dataclass(frozen=True)
class SharedMemory:
    """Where a shared KVCache's buffer is: another process of the same user maps it by path."""
    key: str  # unique among the caches of the process that made it
    fd: int
    path: str  # /proc/<pid>/fd/<fd>
    shape: tuple
    dtype: torch.dtype

    _keys = itertools.count()

    @classmethod
    def create(cls, shape: tuple, dtype: torch.dtype) -> "SharedMemory":
        """Zeroed memory: a file in /dev/shm (else the temporary folder), unlinked at once, so it goes when the
        last process mapping it does. Its space is reserved now: a full /dev/shm (a container's is 64 MB unless
        given more) is a clear error here, or the next folder, rather than a crash at the first write."""
        size, tried = math.prod(shape) * dtype.itemsize, []
        for folder in ("/dev/shm", tempfile.gettempdir()):
            if not os.path.isdir(folder):
                continue
            fd, path = tempfile.mkstemp(prefix="schedlab-kv-", dir=folder)
            os.unlink(path)
            try:
                os.posix_fallocate(fd, 0, size)
            except OSError as e:
                os.close(fd)
                tried.append(f"{folder}: {e.strerror}")
                continue
            return cls(f"{os.getpid()}-{next(cls._keys)}", fd, f"/proc/{os.getpid()}/fd/{fd}", shape, dtype)
        raise MemoryError(f"no room for a {size / 2**20:.0f} MB shared KV cache ({'; '.join(tried)})")

    def map(self) -> torch.Tensor:
        return torch.from_file(self.path, shared=True, size=math.prod(self.shape), dtype=self.dtype).view(self.shape)


class KVCache:
    """One K and one V tensor per layer, each [kv_heads, num_blocks, block_size, head_dim]: views of one buffer.

    A cache made with `shared=True` lives in shared memory, so that the model process (runner/model_process.py)
    can write it: pickled, it travels as a reference to that memory, never as its contents, and the receiving
    process maps it once (`opened`)."""

    _opened: "weakref.WeakValueDictionary[str, KVCache]" = weakref.WeakValueDictionary()

    def __init__(self, buffer: torch.Tensor, shared: SharedMemory | None = None):
        self.buffer, self.shared, self.dtype = buffer, shared, buffer.dtype
        _, _, self.kv_heads, self.num_blocks, self.block_size, _ = buffer.shape
        self.keys, self.values = list(buffer[:, 0]), list(buffer[:, 1])

    @classmethod
    def zeros(cls, shape: tuple, dtype: torch.dtype, device: torch.device, shared: bool = False) -> "KVCache":
        if not shared:
            return cls(torch.zeros(shape, dtype=dtype, device=device))
        memory = SharedMemory.create(shape, dtype)
        cache = cls(memory.map(), memory)
        weakref.finalize(cache, os.close, memory.fd)
        return cache

    @classmethod
    def opened(cls, memory: SharedMemory) -> "KVCache":
        """In a receiving process: the cache in `memory`, mapped on first sight and reused while anyone holds it."""
        if (cache := cls._opened.get(memory.key)) is None:
            cache = cls._opened[memory.key] = cls(memory.map(), memory)
        return cache

    def __deepcopy__(self, memo) -> "KVCache":
        copied = KVCache.zeros(tuple(self.buffer.shape), self.dtype, self.buffer.device, self.shared is not None)
        copied.buffer.copy_(self.buffer)
        return copied

    def __reduce__(self):
        if self.shared is None:
            raise TypeError("only a KVCache made with shared=True can be sent to another process")
        return KVCache.opened, (self.shared,)

    def write(self, layer: int, slots: torch.Tensor, key: torch.Tensor, value: torch.Tensor):
        """Store K/V given as [kv_heads, tokens, head_dim] at flat slot indices (block * block_size + offset)."""
        for cache, new in ((self.keys[layer], key), (self.values[layer], value)):
            cache.view(self.kv_heads, -1, cache.shape[-1]).index_copy_(1, slots, new)

    def block_rows(self, block_tables: torch.Tensor) -> torch.Tensor:
        """Where the tables' blocks lie in each layer's cache seen as [kv_heads * num_blocks] blocks: every kv
        head's copy of every sequence's blocks, kv head first, for `gather`."""
        heads = torch.arange(self.kv_heads, device=block_tables.device)[:, None] * self.num_blocks
        return (heads + block_tables.reshape(1, -1)).reshape(-1)

    def gather(self, layer: int, rows: torch.Tensor, batch: int) -> tuple[torch.Tensor, torch.Tensor]:
        """K/V of whole blocks, [kv_heads * batch, blocks * block_size, head_dim] for the `block_rows` of [batch,
        blocks] tables: row (kv head, sequence) holds that sequence's context for that kv head, contiguously."""
        with torch.profiler.record_function(GATHER_LABEL):
            return tuple(cache.view(-1, *cache.shape[2:]).index_select(0, rows)
                         .view(self.kv_heads * batch, -1, cache.shape[-1])
                         for cache in (self.keys[layer], self.values[layer]))


@dataclass
class Span:
    """A sequence computing several tokens: queries [start, end) of the packed step over `context_len`
    positions held in its blocks; `mask` is None when nothing was cached before (plain causal)."""
    start: int
    end: int
    block_rows: torch.Tensor  # KVCache.block_rows of its block table
    context_len: int
    mask: torch.Tensor | None  # [queries, context_len], True where attention is allowed


@dataclass
class Decodes:
    """Sequences computing one token each; they come first in the packed step, one query each."""
    count: int
    block_rows: torch.Tensor  # KVCache.block_rows of their block tables, padded with block 0 to the longest
    key_bias: torch.Tensor  # [kv_heads * count, 1, max_blocks * block_size]: 0 within each context, -inf past it


@dataclass
class PagedStep:
    """Everything one forward pass needs besides the tokens; travels to every layer as a model kwarg."""
    kv_cache: KVCache
    slot_mapping: torch.Tensor  # [tokens], where each new token's K/V goes
    decodes: Decodes | None
    spans: list[Span]


def decode_attention(query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, key_bias: torch.Tensor,
                     scale: float) -> torch.Tensor:
    """One query per sequence, [heads, batch, head_dim], over gathered [kv_heads * batch, context, head_dim] keys
    and values; returns [batch, heads, head_dim]. Query head h reads kv head h // (heads // kv_heads), as
    transformers' repeat_kv lays them out."""
    heads, batch, dim = query.shape
    kv_heads = keys.shape[0] // batch
    group = heads // kv_heads
    q = query.view(kv_heads, group, batch, dim).transpose(1, 2).reshape(kv_heads * batch, group, dim)
    scores = torch.baddbmm(key_bias, q, keys.transpose(1, 2), alpha=scale)  # [kv_heads * batch, group, context]
    probs = torch.softmax(scores, dim=-1, dtype=torch.float32).to(values.dtype)
    out = torch.bmm(probs, values)  # [kv_heads * batch, group, head_dim]
    return out.view(kv_heads, batch, group, dim).transpose(0, 1).reshape(batch, heads, dim)


def paged_attention_forward(module, query, key, value, attention_mask, scaling=None, dropout=0.0,
                            paged_step: PagedStep | None = None, **kwargs):
    """Attention function for transformers' AttentionInterface; query/key/value are [1, heads, tokens, dim]."""
    if paged_step is None:
        raise RuntimeError(f"attention '{PAGED_ATTENTION}' needs a paged_step: run this model through "
                           "ModelRunner, or use runner.model_loading.stock_attention for generate()")
    cache, layer = paged_step.kv_cache, module.layer_idx
    scale = scaling if scaling is not None else query.shape[-1] ** -0.5
    cache.write(layer, paged_step.slot_mapping, key[0], value[0])
    parts = []  # attention outputs in packed order, each [tokens, heads, dim]
    if (decodes := paged_step.decodes) is not None:
        k, v = cache.gather(layer, decodes.block_rows, decodes.count)
        parts.append(decode_attention(query[0, :, :decodes.count], k, v, decodes.key_bias, scale))
    for span in paged_step.spans:
        if span.mask is None:  # nothing cached before: its keys are exactly the ones just written
            k, v = key[:, :, span.start:span.end], value[:, :, span.start:span.end]
        else:
            k, v = (kv[None, :, :span.context_len] for kv in cache.gather(layer, span.block_rows, 1))
        q = query[:, :, span.start:span.end]
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=span.mask, is_causal=span.mask is None,
                                           scale=scale, enable_gqa=True)
        parts.append(o[0].transpose(0, 1))
    return (parts[0] if len(parts) == 1 else torch.cat(parts)).unsqueeze(0), None


AttentionInterface.register(PAGED_ATTENTION, paged_attention_forward)
