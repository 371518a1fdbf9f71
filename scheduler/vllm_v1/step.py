"""One call of vLLM V1's `Scheduler.schedule()`, for the twin (scheduler/vllm_v1/scheduler.py says what it
decides). `_Step` is the batch under construction; the two loops are `_schedule_running` and `_schedule_waiting`,
named and ordered as in vLLM so the two read side by side."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.events import Admitted, Blocked, ChunkScheduled, Evicted, PrefixHit
from scheduler.interface import Batch
from scheduler.sequence import Sequence, SequenceStatus

if TYPE_CHECKING:
    from scheduler.vllm_v1.scheduler import VllmScheduler

RUNNING = SequenceStatus.RUNNING
PAD_DRAFT = -1  # vLLM's placeholder draft token when it pads a lone decode to 1 + num_speculative_tokens


class _Step:
    """The requests scheduled so far, their token counts, the budget left and whether anyone was preempted."""

    __slots__ = ("sched", "cfg", "num_tokens", "budget", "preempted", "prefill_scheduled", "threshold", "num_running")

    def __init__(self, sched: VllmScheduler):
        self.sched, self.cfg = sched, sched.config
        self.num_tokens: dict[Sequence, int] = {}  # insertion order is vLLM's num_scheduled_tokens order
        self.budget = self.cfg.max_num_batched_tokens
        self.preempted = False
        self.prefill_scheduled = False  # a running request still in its prompt was scheduled
        self.num_running = 0  # running requests scheduled (not counting waiting ones admitted)
        # long_prefill_token_threshold applies only when another request could use the budget
        eligible = len(sched.running) + len(sched.waiting)
        self.threshold = self.cfg.long_prefill_token_threshold if eligible > 1 else 0

    def add(self, seq: Sequence, num: int):
        self.num_tokens[seq] = num
        self.budget -= num
        seq.num_scheduled_tokens = num

    def remove(self, seq: Sequence):
        """Priority preemption of a request already scheduled this step: its tokens go back to the budget."""
        self.budget += self.num_tokens.pop(seq)
        self.num_running -= 1
        seq.num_scheduled_tokens = 0
        seq.draft_token_ids = []


def schedule_step(sched: VllmScheduler) -> Batch:
    step = _Step(sched)
    _schedule_running(step)
    if not step.preempted:
        _schedule_waiting(step)
    elif sched.waiting:
        head = sched.waiting[0]
        sched._events.append(Blocked(head.seq_id, "preempted_this_step", 0, 0))
    return _finish_step(step)


def _schedule_running(step: _Step):
    sched, cfg = step.sched, step.cfg
    kv, running, pending = sched.block_manager, sched.running, sched._pending
    i = 0
    while i < len(running) and step.budget > 0:
        seq = running[i]
        p = pending[seq.seq_id]
        if p.placeholders and (seq.num_computed_tokens + 2 - p.placeholders
                               >= seq.num_prompt_tokens + seq.sampling_params.max_tokens):
            i += 1  # async: its token in flight is surely its last
            continue
        n = p.num_tokens(seq)
        num = n + len(p.drafts) + p.placeholders - seq.num_computed_tokens
        if 0 < step.threshold < num:
            num = step.threshold
        num = min(num, step.budget, cfg.max_model_len - seq.num_computed_tokens - 1)
        if num <= 0:
            i += 1
            continue
        while not kv.allocate_slots(seq, num, n):
            if cfg.queue_policy == "priority":
                victim = max(running, key=_importance)
                at = running.index(victim)
                del running[at]
                if at < i:
                    i -= 1
                if victim in step.num_tokens:
                    step.remove(victim)
                policy = "priority"
            else:
                victim = running.pop()
                policy = "tail"
            sched._preempt(victim, for_seq=seq, policy=policy)
            step.preempted = True
            if victim is seq:
                return
        _tell_evictions(sched, seq)
        step.add(seq, num)
        step.num_running += 1
        step.prefill_scheduled |= p.prefill_chunk
        i += 1
        if p.drafts:
            num_spec = num + seq.num_computed_tokens - n - p.placeholders
            seq.draft_token_ids = p.drafts[:num_spec] if num_spec > 0 else []
            p.drafts = []


def _tell_evictions(sched: VllmScheduler, seq: Sequence):
    """The cached blocks `seq`'s allocation took from the free queue, as an event."""
    kv = sched.block_manager
    if kv.evicted:
        sched._events.append(Evicted(seq.seq_id, tuple(kv.evicted)))
        kv.evicted.clear()


def _importance(seq: Sequence) -> tuple:
    """vLLM's priority victim order: the largest (priority, arrival) goes first."""
    return seq.priority, seq.arrival


def _schedule_waiting(step: _Step):
    sched, cfg = step.sched, step.cfg
    kv, waiting, events = sched.block_manager, sched.waiting, sched._events
    speculate = cfg.num_speculative_tokens
    i = 0  # waiting requests before it were skipped (a stale output still in flight) and stay in place
    while True:
        if i >= len(waiting):
            return
        if step.budget <= 0:
            events.append(Blocked(waiting[i].seq_id, "token_budget", len(waiting[i].token_ids), 0))
            return
        seq = waiting[i]
        if len(sched.running) >= cfg.max_num_seqs:
            events.append(Blocked(seq.seq_id, "max_num_seqs", 1, 0))
            return
        p = sched._pending[seq.seq_id]
        if p.stale:
            i += 1
            continue
        n = p.num_tokens(seq)
        hits = kv.find_cached_prefix(seq, n)
        computed = len(hits) * kv.block_size
        num = n - computed
        pad = False
        # vLLM 0.32 fails an assertion where long_prefill_token_threshold cuts the padding: no padding here then
        if (speculate and num == 1 and not step.prefill_scheduled and (step.num_running or computed)
                and computed + 1 + speculate + 1 <= cfg.max_model_len and not 0 < step.threshold < 1 + speculate):
            if 1 + speculate > step.budget:  # vLLM pads a lone decode to the drafts' size, or waits
                events.append(Blocked(seq.seq_id, "token_budget", 1 + speculate, step.budget))
                return
            num, pad = 1 + speculate, True
        if 0 < step.threshold < num:
            num = step.threshold
        if not cfg.chunked_prefill and num > step.budget:
            events.append(Blocked(seq.seq_id, "token_budget", num, step.budget))
            return
        num = min(num, step.budget)
        if not kv.allocate_slots(seq, num, n, hits, full_sequence_must_fit=True):
            need = kv.blocks_for(n) - len(hits) + sum(1 for b in hits if kv.blocks[b].ref_count == 0)
            events.append(Blocked(seq.seq_id, "blocks", need, kv.num_free_blocks))
            return
        _tell_evictions(sched, seq)
        del waiting[i]
        sched.running.append(seq)
        seq.status = RUNNING
        seq.num_computed_tokens = seq.num_cached_tokens = computed
        if hits:
            events.append(PrefixHit(seq.seq_id, tuple(hits), computed))
        events.append(Admitted(seq.seq_id, num, computed, seq.num_preemptions > 0))
        step.add(seq, num)
        if pad:
            seq.draft_token_ids = [PAD_DRAFT] * speculate


def _finish_step(step: _Step) -> Batch:
    """vLLM's `_update_after_schedule` as far as it decides anything: which requests are still in their prompt
    after this step (they get no drafts); chunk events; the batch in vLLM's order."""
    pending, events = step.sched._pending, step.sched._events
    seqs, counts, prefills = [], [], 0
    for seq, num in step.num_tokens.items():
        p = pending[seq.seq_id]
        n, computed = p.num_tokens(seq) + p.placeholders, seq.num_computed_tokens
        p.prefill_chunk = chunk = computed + num < n
        if chunk:
            events.append(ChunkScheduled(seq.seq_id, computed, num, n))
        if n - computed > 1:
            prefills += 1
        seqs.append(seq)
        counts.append(num)
    kind = "idle" if not seqs else "prefill" if prefills == len(seqs) else "decode" if not prefills else "mixed"
    return Batch(seqs, tuple(counts), kind, tuple(events))
