"""The V0 twin's decisions as data (the house style of scheduler/events.py, whose registry they join), each with
the numbers V0 decided by: the step's phase and budget, a prompt V0 ignored, admission refused LATER, a preemption
by recompute or swap and why that mode, the blocks a swap moved, a swap-in not made and why.

Each says itself (`said()`: its sentence as a `Message` under `vllm_v0.narrate.`, filled with the numbers it
carries), so the narration tells V0's reasons without knowing them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from i18n import Message
from scheduler.events import Blocked, Event, Preempted

STEP = -1  # the seq_id of an event about the whole step


def _ids(units) -> str:
    return ", ".join(map(str, units))


@dataclass(frozen=True)
class StepPhase(Event):
    """What kind of step V0 ran and why (`reason`): without chunked prefill a step is a prefill step
    ("prefills_admitted") or a decode step ("no_prefill_admitted", or "swapped_waiting": no prefill is tried while
    `swapped_head` is swapped out); "chunked": decodes, swap-ins and prefills under one budget. The budget as it
    ended (SchedulingBudget): uncached tokens batched, cached tokens, sequences, and the limits."""
    kind: ClassVar[str] = "v0_phase"
    phase: str  # "prefill", "decode", "chunked"
    reason: str
    swapped_head: int
    num_batched_tokens: int
    num_cached_tokens: int
    token_budget: int
    num_curr_seqs: int
    max_num_seqs: int

    def said(self) -> Message:
        return Message(f"vllm_v0.narrate.phase.{self.reason}", head=self.swapped_head, tokens=self.num_batched_tokens,
                       cached=self.num_cached_tokens, budget=self.token_budget, seqs=self.num_curr_seqs,
                       max_seqs=self.max_num_seqs)


@dataclass(frozen=True)
class AllocBlocked(Blocked):
    """can_allocate said LATER for the head of waiting: `needed` blocks for its whole prompt, `available` free,
    and `watermark` blocks that must stay free (reason "watermark" when the blocks are there but the watermark
    is not, else "blocks"); admission stops here (head of line)."""
    watermark: int

    def said(self) -> Message:
        return Message(f"vllm_v0.narrate.later.{self.reason}", id=self.seq_id, needed=self.needed,
                       free=self.available, watermark=self.watermark)


@dataclass(frozen=True)
class Ignored(Event):
    """V0 ignored the prompt (FINISHED_IGNORED): `reason` "prompt_limit" (`num_tokens` over `limit`, V0's prompt
    limit) or "never" (can_allocate NEVER: `num_tokens` need more blocks than the pool less the watermark,
    `limit`, can ever give), or "never_swap_in" (can_swap_in NEVER)."""
    kind: ClassVar[str] = "ignored"
    ends: ClassVar[str | None] = "aborted"
    reason: str
    num_tokens: int
    limit: int

    def said(self) -> Message:
        return Message(f"vllm_v0.narrate.ignored.{self.reason}", id=self.seq_id, n=self.num_tokens, limit=self.limit)


@dataclass(frozen=True)
class PreemptedV0(Preempted):
    """A preemption and V0's mode for it: `mode` "recompute" (blocks freed, recomputed later from its prompt and
    outputs: `num_recompute_tokens`) or "swap" (blocks moved to the CPU pool); `mode_reason` "single_sequence"
    (preemption_mode unset: V0 recomputes a one-sequence group) or "preemption_mode" (set)."""
    mode: str
    mode_reason: str
    num_recompute_tokens: int

    def said(self) -> Message:
        why = Message(f"vllm_v0.narrate.preempted.{self.policy}", id=self.seq_id, for_id=self.for_seq_id)
        return Message(f"vllm_v0.narrate.preempted.{self.mode}.{self.mode_reason}", why=why, id=self.seq_id,
                       blocks=_ids(self.freed_blocks) or "-", n=len(self.freed_blocks),
                       tokens=self.num_recompute_tokens)


@dataclass(frozen=True)
class SwappedOut(Event):
    """`blocks`: the (GPU block, CPU block) pairs of blocks_to_swap_out for this request."""
    kind: ClassVar[str] = "swapped_out"
    blocks: tuple[tuple[int, int], ...]

    def said(self) -> Message:
        return Message("vllm_v0.narrate.swapped_out", id=self.seq_id, n=len(self.blocks),
                       gpu=_ids(g for g, _ in self.blocks), cpu=_ids(c for _, c in self.blocks))


@dataclass(frozen=True)
class SwappedIn(Event):
    """`blocks`: the (CPU block, GPU block) pairs of blocks_to_swap_in for this request."""
    kind: ClassVar[str] = "swapped_in"
    blocks: tuple[tuple[int, int], ...]

    def said(self) -> Message:
        return Message("vllm_v0.narrate.swapped_in", id=self.seq_id, n=len(self.blocks),
                       cpu=_ids(c for c, _ in self.blocks), gpu=_ids(g for _, g in self.blocks))


@dataclass(frozen=True)
class SwapInBlocked(Event):
    """The head of swapped stayed there: `reason` "preempted_this_step" (V0 swaps nothing in after a preemption),
    "LATER" (can_swap_in: `needed` blocks against `available` free less the `watermark`) or "budget"."""
    kind: ClassVar[str] = "swap_in_blocked"
    reason: str
    needed: int
    available: int
    watermark: int

    def said(self) -> Message:
        return Message(f"vllm_v0.narrate.no_swap_in.{self.reason}", id=self.seq_id, needed=self.needed,
                       free=self.available, watermark=self.watermark)
