"""Pack one scheduled batch into the flat inputs of a single forward pass.

All sequences' scheduled tokens are laid end to end in one sequence dimension, single-token decodes first
so that attention takes them as one slice; the slot mapping says where each token's K/V goes, and the
decode tables and prefill spans say what each sequence attends over.
"""

from dataclasses import dataclass

import torch

from runner.paged_attention import Decodes, KVCache, PagedStep, Span


@dataclass
class PackedBatch:
    input_ids: torch.Tensor  # [tokens], on the CPU (also recorded per slot)
    positions: torch.Tensor  # [tokens], absolute positions within each sequence
    slot_mapping: torch.Tensor  # [tokens], on the CPU
    sampled: list[tuple[int, int]]  # (batch row, logits rows) of each sequence that gets new tokens this step
    logits_index: torch.Tensor  # packed-dimension index of every token whose logits are kept
    step: PagedStep


def _bottom_right_causal_mask(start: int, end: int, device) -> torch.Tensor:
    """Queries at positions [start, end) over keys [0, end): query i sees keys up to start + i."""
    return torch.arange(end, device=device)[None, :] <= torch.arange(start, end, device=device)[:, None]


def _decodes(tables: list[list[int]], context_lens: list[int], kv_cache: KVCache, device) -> Decodes:
    width = max(map(len, tables))
    padded = torch.tensor([t + [0] * (width - len(t)) for t in tables], device=device)
    keys = torch.arange(width * kv_cache.block_size, device=device)
    past_end = keys[None, :] >= torch.tensor(context_lens, device=device)[:, None]  # [batch, keys]
    bias = torch.zeros(past_end.shape, dtype=kv_cache.dtype, device=device).masked_fill_(past_end, float("-inf"))
    per_kv_head = bias.expand(kv_cache.kv_heads, *bias.shape).reshape(-1, 1, bias.shape[1])
    return Decodes(len(tables), kv_cache.block_rows(padded), per_kv_head)


def pack_batch(seqs, kv_cache: KVCache, device: torch.device) -> PackedBatch:
    """Sequence `seq` computes tokens [c, c + n) of `token_ids + draft_token_ids`, with c = num_computed_tokens
    and n = num_scheduled_tokens. When that reaches the end, logits are kept for its last token and, to verify
    speculative drafts, for the token before each draft."""
    size = kv_cache.block_size
    input_ids, positions, slots, spans, sampled, logits_index = [], [], [], [], [], []
    decode_tables, decode_lens = [], []
    decodes_first = sorted(range(len(seqs)), key=lambda row: seqs[row].num_scheduled_tokens > 1)
    for row in decodes_first:
        seq = seqs[row]
        # a negative draft is a placeholder (the vLLM twin pads a decode with them): it is never accepted, so
        # any valid token id may stand in its place for the forward pass
        drafts = seq.draft_token_ids if not seq.draft_token_ids or min(seq.draft_token_ids) >= 0 else \
            [max(t, 0) for t in seq.draft_token_ids]
        tokens, num_logits = seq.token_ids + drafts, 1 + len(drafts)
        start, count = seq.num_computed_tokens, seq.num_scheduled_tokens
        end = start + count
        table = seq.block_table[:-(-end // size)]
        if count < 1 or end > len(tokens) or len(table) * size < end or (end == len(tokens) and count < num_logits):
            raise ValueError(f"{seq!r}: cannot compute tokens [{start}, {end}) of {len(tokens)} with "
                             f"{len(seq.draft_token_ids)} drafts in {len(seq.block_table)} blocks of {size}")
        query_start = len(input_ids)
        input_ids += tokens[start:end]
        positions += range(start, end)
        slots += [table[p // size] * size + p % size for p in range(start, end)]
        if end == len(tokens):
            sampled.append((row, num_logits))
            logits_index += range(len(input_ids) - num_logits, len(input_ids))
        if count == 1:
            decode_tables.append(table)
            decode_lens.append(end)
        else:
            mask = _bottom_right_causal_mask(start, end, device) if start else None
            spans.append(Span(query_start, len(input_ids), kv_cache.block_rows(torch.tensor([table], device=device)),
                              end, mask))
    decodes = _decodes(decode_tables, decode_lens, kv_cache, device) if decode_tables else None
    slot_mapping = torch.tensor(slots)
    return PackedBatch(torch.tensor(input_ids), torch.tensor(positions), slot_mapping, sampled,
                       torch.tensor(logits_index, dtype=torch.long, device=device),
                       PagedStep(kv_cache, slot_mapping.to(device), decodes, spans))
