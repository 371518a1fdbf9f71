"""Pack one scheduled batch into the flat inputs of a single forward pass.

All sequences' scheduled tokens are laid end to end in one sequence dimension, single-token decodes first
so that attention takes them as one slice; the slot mapping says where
each token's K/V goes, and the decode tables and prefill spans say what each sequence attends over.
"""

from dataclasses import dataclass

import torch

from runner.paged_attention import Decodes, KVCache, PagedStep, Span


@dataclass
class PackedBatch:
    input_ids: torch.Tensor  # [tokens], on the CPU (also recorded per slot)
    positions: torch.Tensor  # [tokens], absolute positions within each sequence
    slot_mapping: torch.Tensor  # [tokens], on the CPU
    sampled_rows: list[int]  # the sequences (indices into the batch) that get a next token this step
    last_token_index: torch.Tensor  # [len(sampled_rows)], their last token's index in the packed dimension
    step: PagedStep


def _bottom_right_causal_mask(start: int, end: int, device) -> torch.Tensor:
    """Queries at positions [start, end) over keys [0, end): query i sees keys up to start + i."""
    return torch.arange(end, device=device)[None, :] <= torch.arange(start, end, device=device)[:, None]


def _decodes(tables: list[list[int]], context_lens: list[int], block_size: int, device) -> Decodes:
    width = max(map(len, tables))
    padded = torch.tensor([t + [0] * (width - len(t)) for t in tables], device=device)
    keys = torch.arange(width * block_size, device=device)
    key_mask = keys[None, :] < torch.tensor(context_lens, device=device)[:, None]
    return Decodes(len(tables), padded, key_mask[:, None, None, :])


def pack_batch(seqs, kv_cache: KVCache, device: torch.device) -> PackedBatch:
    """Sequence `seq` computes tokens [c, c + n) with c = num_computed_tokens, n = num_scheduled_tokens."""
    size = kv_cache.block_size
    input_ids, positions, slots, spans, sampled_rows, last_tokens = [], [], [], [], [], []
    decode_tables, decode_lens = [], []
    decodes_first = sorted(range(len(seqs)), key=lambda row: seqs[row].num_scheduled_tokens > 1)
    for row in decodes_first:
        seq = seqs[row]
        start, count = seq.num_computed_tokens, seq.num_scheduled_tokens
        end = start + count
        table = seq.block_table[:-(-end // size)]
        if count < 1 or end > len(seq) or len(table) * size < end:
            raise ValueError(f"{seq!r}: cannot compute tokens [{start}, {end}) with "
                             f"{len(seq.block_table)} blocks of {size}")
        query_start = len(input_ids)
        input_ids += seq.token_ids[start:end]
        positions += range(start, end)
        slots += [table[p // size] * size + p % size for p in range(start, end)]
        if end == len(seq):
            sampled_rows.append(row)
            last_tokens.append(len(input_ids) - 1)
        if count == 1:
            decode_tables.append(table)
            decode_lens.append(end)
        else:
            mask = _bottom_right_causal_mask(start, end, device) if start else None
            spans.append(Span(query_start, len(input_ids), torch.tensor([table], device=device), end, mask))
    decodes = _decodes(decode_tables, decode_lens, size, device) if decode_tables else None
    slot_mapping = torch.tensor(slots)
    return PackedBatch(torch.tensor(input_ids), torch.tensor(positions), slot_mapping, sampled_rows,
                       torch.tensor(last_tokens, dtype=torch.long, device=device),
                       PagedStep(kv_cache, slot_mapping.to(device), decodes, spans))
