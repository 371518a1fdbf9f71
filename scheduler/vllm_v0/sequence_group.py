"""V0's SequenceGroup (vllm/sequence.py) as far as its scheduler reads it, over the engine's `Sequence` (which holds
the tokens, computed tokens and GPU block table the engine and the recorder read). In 0.10.2 every group holds one
sequence (n > 1 becomes separate groups), so the group's status is its sequence's."""

from __future__ import annotations

from enum import Enum

from scheduler.policies import priority_key
from scheduler.sequence import Sequence
from scheduler.vllm_v0.block_manager import NONE_HASH


class V0Status(Enum):
    """V0's SequenceStatus."""
    WAITING = "WAITING"
    RUNNING = "RUNNING"
    SWAPPED = "SWAPPED"
    FINISHED_STOPPED = "FINISHED_STOPPED"
    FINISHED_LENGTH_CAPPED = "FINISHED_LENGTH_CAPPED"
    FINISHED_ABORTED = "FINISHED_ABORTED"
    FINISHED_IGNORED = "FINISHED_IGNORED"

    @property
    def is_finished(self) -> bool:
        return self.name.startswith("FINISHED")


class SequenceGroup:
    """One request: its sequence, V0's status and stage (`is_prefill`: V0's PREFILL stage, until every token it
    knew was computed once, then DECODE; a recompute sets it back), and its full blocks' chained hashes (computed
    once each)."""
    __slots__ = ("seq", "status", "is_prefill", "_block_size", "_hashes")

    def __init__(self, seq: Sequence, block_size: int):
        self.seq, self._block_size = seq, block_size
        self.status = V0Status.WAITING
        self.is_prefill = True
        self._hashes: list[int] = []

    def __repr__(self) -> str:
        return f"SequenceGroup({self.seq!r}, {self.status.name})"

    @property
    def request_id(self) -> int:
        return self.seq.seq_id

    @property
    def priority_key(self) -> tuple:
        """V0's _get_priority: (priority, arrival time), lower first; requests arriving in one step are stamped in
        the order they were added, the order of their ids."""
        return priority_key(self.seq)

    @property
    def num_uncomputed_tokens(self) -> int:
        return len(self.seq.token_ids) - self.seq.num_computed_tokens

    @property
    def num_new_tokens(self) -> int:
        """V0's get_num_new_tokens: 1 in the decode stage, else every token not computed yet."""
        return self.num_uncomputed_tokens if self.is_prefill else 1

    def update_num_computed_tokens(self, num_tokens: int):
        self.seq.num_computed_tokens += num_tokens
        if self.num_uncomputed_tokens == 0:
            self.is_prefill = False

    def reset_state_for_recompute(self):
        self.seq.num_computed_tokens = 0
        self.is_prefill = True

    def block_hashes(self, num_blocks: int) -> list[int]:
        """The chained hashes of its first `num_blocks` full blocks: V0's hash_block_tokens, chained from the hash
        of 'None', over (is first block, the previous hash, the tokens, extra_hash None), the very values V0 computes
        in the same process (they vary between processes: V0's evictor breaks a tie of stamp and depth by them)."""
        hashes = self._hashes
        if len(hashes) < num_blocks:
            tokens, bs = self.seq.token_ids, self._block_size
            prev = hashes[-1] if hashes else NONE_HASH
            for i in range(len(hashes), num_blocks):
                prev = hash((prev == NONE_HASH, prev, *tokens[i * bs:(i + 1) * bs], None))
                hashes.append(prev)
        return hashes if len(hashes) == num_blocks else hashes[:num_blocks]
