"""The runner's one primitive to move KV between pools: `Batch.block_copies` (scheduler/interface.py), each a block
copied from a unit of a pool to a unit of a pool, in order, before the step's forward pass. The pools are the main
one, which the model's attention reads (`GPU_POOL`: the scheduler's block ids index it), and the side pools a
scheduler declares (`SidePool`: V0's CPU pool, its blocks_to_swap_out and blocks_to_swap_in), each of the blocks it
declares. The model runner copies K/V tensors (runner/model_runner.py), the fake model the token each slot was
computed from (`SlotTokens`), so a block copied out and back holds what it held on either."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from scheduler.contract import GPU_POOL
from scheduler.interface import BlockCopy

EMPTY_SLOT = -1  # a slot nothing was ever written to


def checked_copies(copies: Iterable[BlockCopy], sizes: dict[str, int]) -> list[BlockCopy]:
    """`copies` as BlockCopy, each between pools of `sizes` (name -> blocks) and within them; a ValueError names the
    first that is not."""
    checked = []
    for copy in map(BlockCopy._make, copies):
        for pool, block in (copy[:2], copy[2:]):
            if pool not in sizes:
                raise ValueError(f"{copy}: the runner has no KV pool {pool!r} (it has {sorted(sizes)})")
            if not 0 <= block < sizes[pool]:
                raise ValueError(f"{copy}: block {block} is outside pool {pool!r} of {sizes[pool]} blocks")
        checked.append(copy)
    return checked


def runs_by_pools(copies: Sequence[BlockCopy]) -> list[tuple[str, str, list[int], list[int]]]:
    """The copies as runs of consecutive ones between the same two pools: (source pool, destination pool, source
    blocks, destination blocks), in order, so each run is one indexed copy and a later copy still sees an earlier."""
    runs: list[tuple[str, str, list[int], list[int]]] = []
    for src_pool, src, dst_pool, dst in copies:
        if not runs or runs[-1][:2] != (src_pool, dst_pool):
            runs.append((src_pool, dst_pool, [], []))
        runs[-1][2].append(src)
        runs[-1][3].append(dst)
    return runs


class SlotTokens:
    """The fake model's KV: per pool, the token id each slot was computed from (EMPTY_SLOT where none was), written as
    a batch computes its tokens and moved by block copies as the model runner moves K/V."""

    def __init__(self, block_size: int, sizes: dict[str, int]):
        self.block_size, self.sizes = block_size, dict(sizes)
        self.slots = {pool: [EMPTY_SLOT] * (blocks * block_size) for pool, blocks in sizes.items()}

    def write(self, seqs):
        """The tokens each sequence computes this step ([num_computed_tokens, + num_scheduled_tokens) of its tokens
        and drafts), in the main pool's slots its block table names."""
        size, slots = self.block_size, self.slots[GPU_POOL]
        for seq in seqs:
            tokens, table = seq.token_ids + seq.draft_token_ids, seq.block_table
            for position in range(seq.num_computed_tokens, seq.num_computed_tokens + seq.num_scheduled_tokens):
                slots[table[position // size] * size + position % size] = tokens[position]

    def copy(self, copies: Iterable[BlockCopy]):
        size = self.block_size
        for src_pool, src, dst_pool, dst in checked_copies(copies, self.sizes):
            self.slots[dst_pool][dst * size:(dst + 1) * size] = self.slots[src_pool][src * size:(src + 1) * size]

    def block(self, pool: str, block: int) -> list[int]:
        """The token id of each slot of a block of `pool`."""
        return self.slots[pool][block * self.block_size:(block + 1) * self.block_size]
