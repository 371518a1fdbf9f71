"""The V0 twin's panels, in the generic shapes every player draws (scheduler/panel_shapes.py), so its stage shows
what V0 decided with in V0's terms without a renderer of its own:

- `STEP_PANEL`, a card: the step's phase and why (a prefill step or a decode step under `_schedule_default`, and
  the reason: prompts admitted, none, or none tried because a request is swapped; under chunked prefill one budget,
  decodes first, then swap-ins, then partial prefills), no swap-in after a preemption, the blocks evicted for decodes
  or swap-ins; and the SchedulingBudget as the step ended (tokens of the token budget, sequences of max_num_seqs);
- `WATERMARK_PANEL`, marks on the GPU pool: the watermark, the blocks admission and swap-in leave free.

Every number is the one the scheduler used (its `StepPhase`, its budget lookup, its block manager's)."""

from __future__ import annotations

from scheduler.contract import GPU_POOL, PanelKind
from scheduler.events import Event
from scheduler.panel_shapes import Card, Mark, Meter, PoolMarks, Said
from scheduler.vllm_v0.events import StepPhase, SwapInBlocked

STEP_PANEL = PanelKind("v0_step", shape=Card)
WATERMARK_PANEL = PanelKind("v0_watermark", shape=PoolMarks)
WORDS = "vllm_v0.panel."  # its words' ids in the catalogues


def step_card(phase: StepPhase, num_prefills: int, partial: tuple[int, int, int] | None, events: tuple[Event, ...],
              evicted: tuple[int, ...]) -> Card:
    """The step's card: `phase` as the step's schedule ended, `num_prefills` the prompts it admitted (or prefill
    chunks it scheduled), `partial` under chunked prefill (prefills that may be partial at once, the most there may
    be, the tokens each may take: V0's budget lookup), `events` the step's decisions so far, `evicted` the blocks
    taken from the prefix cache for decodes or swap-ins."""
    lines = [Said(f"{WORDS}phase.{phase.reason}", {"n": num_prefills, "head": phase.swapped_head})]
    if partial is not None:
        lines.append(Said(f"{WORDS}partial", {"n": partial[0], "max": partial[1]}))
    lines += [Said(f"{WORDS}no_swap_in", {"id": e.seq_id}) for e in events
              if isinstance(e, SwapInBlocked) and e.reason == "preempted_this_step"]
    if phase.num_cached_tokens:
        lines.append(Said(f"{WORDS}cached", {"n": phase.num_cached_tokens}))
    if evicted:
        lines.append(Said(f"{WORDS}evicted", {"blocks": ", ".join(map(str, evicted)), "n": len(evicted)}))
    slot = () if partial is None or partial[0] < 2 else \
        (Mark(partial[2], Said(f"{WORDS}prefill_slot", {"n": partial[2], "prefills": partial[0]})),)
    meters = (Meter(Said(f"{WORDS}tokens", {"used": phase.num_batched_tokens, "limit": phase.token_budget}),
                    phase.num_batched_tokens, phase.token_budget, slot),
              Meter(Said(f"{WORDS}seqs", {"used": phase.num_curr_seqs, "limit": phase.max_num_seqs}),
                    phase.num_curr_seqs, phase.max_num_seqs))
    return Card(Said(f"{WORDS}title.{'chunked' if phase.phase == 'chunked' else 'default'}"), tuple(lines), meters)


def watermark_marks(watermark_blocks: int, num_total_gpu_blocks: int) -> PoolMarks | None:
    """The watermark on the GPU pool: a line where the blocks in use would leave only `watermark_blocks` free
    (None when V0 keeps none)."""
    if not watermark_blocks:
        return None
    at = num_total_gpu_blocks - watermark_blocks
    return PoolMarks(GPU_POOL, (Mark(at, Said(f"{WORDS}watermark", {"n": watermark_blocks, "at": at,
                                                                      "total": num_total_gpu_blocks})),))
