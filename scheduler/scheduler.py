"""Continuous batching: decide each step which sequences run and how many tokens each computes.

Basic mode (no chunking, no mixed batches, tail preemption, FCFS) is nano-vllm's algorithm step for step:
a step is either a prefill of waiting requests or a decode of running ones, whichever `prefill_first`
tries first and finds non-empty.
"""

from collections import deque
from dataclasses import dataclass

from scheduler.block_manager import BlockManager
from scheduler.config import Config
from scheduler.events import (
    Aborted,
    Admitted,
    Blocked,
    ChunkScheduled,
    Event,
    Finished,
    Preempted,
    PrefixHit,
    Speculated,
)
from scheduler.policies import insert_waiting, pick_victim, priority_key, priority_victim_key
from scheduler.sequence import Sequence, SequenceStatus
from scheduler.speculative import propose_ngram


class RequestRejected(ValueError):
    """A request that could never run under this configuration."""


@dataclass(frozen=True)
class Batch:
    """What runs this step. Unpacks as `seqs, is_prefill` like nano-vllm's schedule() result."""
    seqs: list[Sequence]
    num_scheduled_tokens: tuple[int, ...]
    kind: str  # "prefill", "decode", "mixed" or "idle"

    @property
    def is_prefill(self) -> bool:
        return self.kind in ("prefill", "mixed")

    @property
    def num_tokens(self) -> int:
        return sum(self.num_scheduled_tokens)

    def __iter__(self):
        return iter((self.seqs, self.is_prefill))


def _batch_kind(prefill_flags: list[bool]) -> str:
    if not prefill_flags:
        return "idle"
    if all(prefill_flags):
        return "prefill"
    return "mixed" if any(prefill_flags) else "decode"


class _StepBudget:
    def __init__(self, config: Config):
        self.tokens = config.max_num_batched_tokens
        self.seqs = config.max_num_seqs


class Scheduler:
    def __init__(self, config: Config):
        self.config = config
        self.block_manager = BlockManager(config.num_kvcache_blocks, config.kvcache_block_size,
                                          config.enable_prefix_caching, config.notebook_block_bug,
                                          config.cache_blocks_at_allocation)
        self.waiting: deque[Sequence] = deque()
        self.running: deque[Sequence] = deque()
        self.decision_log: list[Event] = []  # this step's decisions, cleared by schedule()
        self.num_preemptions = 0

    # -- requests --------------------------------------------------------------------------------------

    def add(self, seq: Sequence):
        """Queue a request, or refuse it with the reason if it could never run."""
        cfg, n = self.config, len(seq)
        if n == 0:
            raise RequestRejected(f"request {seq.seq_id}: the prompt is empty; give it at least one token")
        if n >= cfg.max_model_len:
            raise RequestRejected(
                f"request {seq.seq_id}: prompt of {n} tokens leaves no room to generate under "
                f"max_model_len={cfg.max_model_len}; shorten the prompt or raise max_model_len above {n}")
        if self.block_manager.blocks_for(n) > cfg.num_kvcache_blocks:
            raise RequestRejected(
                f"request {seq.seq_id}: prompt of {n} tokens needs {self.block_manager.blocks_for(n)} KV "
                f"blocks of {cfg.kvcache_block_size} but the pool has {cfg.num_kvcache_blocks}; "
                "add blocks, enlarge them, or shorten the prompt")
        seq.status = SequenceStatus.WAITING
        insert_waiting(self.waiting, seq, cfg.queue_policy, preempted=False)

    def is_finished(self) -> bool:
        return not self.waiting and not self.running

    # -- one step --------------------------------------------------------------------------------------

    def schedule(self) -> Batch:
        self.decision_log = []
        budget, scheduled, prefill_flags = _StepBudget(self.config), [], []
        if self.config.mixed_batches:
            preemptions_before = self.num_preemptions
            self._schedule_running(budget, scheduled, prefill_flags, decodes_only=False)
            if self.num_preemptions == preemptions_before:  # as in vLLM: no admissions in a step that preempts
                self._admit_waiting(budget, scheduled, prefill_flags)
        elif self.config.prefill_first:
            self._prefill(budget, scheduled, prefill_flags)
            if not scheduled:
                self._schedule_running(budget, scheduled, prefill_flags, decodes_only=True)
        else:
            self._schedule_running(budget, scheduled, prefill_flags, decodes_only=True)
            if not scheduled:
                self._prefill(budget, scheduled, prefill_flags)
            elif self.waiting:
                head = self.waiting[0]
                self.decision_log.append(Blocked(head.seq_id, "decode_first", len(head), 0))
        return Batch(scheduled, tuple(s.num_scheduled_tokens for s in scheduled), _batch_kind(prefill_flags))

    def _prefill(self, budget: _StepBudget, scheduled: list[Sequence], prefill_flags: list[bool]):
        """Continue chunked prefills already running (they keep their place), then admit waiting requests."""
        for seq in self.running:
            if not seq.is_prefilling or budget.seqs == 0 or budget.tokens == 0:
                continue
            num = min(len(seq) - seq.num_computed_tokens, budget.tokens)
            if self.block_manager.blocks_to_grow(seq, num) > self.block_manager.num_free_blocks:
                return  # it waits for blocks; nobody overtakes it
            self._schedule(seq, num, budget, scheduled, prefill_flags)
        self._admit_waiting(budget, scheduled, prefill_flags)

    def _schedule_running(self, budget: _StepBudget, scheduled: list[Sequence], prefill_flags: list[bool],
                          decodes_only: bool):
        """Batch running sequences from the head of `running`, preempting to make room for them; the batched
        (and skipped) ones go back to the head of `running` in their original order. Under the priority
        preemption policy `running` is served in priority order, so a victim is never more important than
        a request already batched this step."""
        if self.config.preemption_policy == "priority":
            self.running = deque(sorted(self.running, key=priority_key))
        kept = []
        while self.running and budget.seqs > 0 and budget.tokens > 0:
            seq = self.running.popleft()
            if decodes_only and seq.is_prefilling:
                kept.append(seq)  # a partly prefilled prompt continues in a prefill step
                continue
            num = min(len(seq) - seq.num_computed_tokens, budget.tokens)
            if self._make_room(seq, num):
                if not seq.is_prefilling:
                    seq.draft_token_ids = self._draft(seq, budget.tokens - num)
                    num += len(seq.draft_token_ids)
                self._schedule(seq, num, budget, scheduled, prefill_flags)
                kept.append(seq)
        self.running.extendleft(reversed(kept))

    def _make_room(self, seq: Sequence, num_tokens: int) -> bool:
        """Preempt others until `seq` can grow by `num_tokens`. False if `seq` itself had to leave."""
        bm = self.block_manager
        if bm.blocks_for(seq.num_computed_tokens + num_tokens) > bm.num_blocks:
            self._abort(seq, f"needs more than the whole KV pool ({bm.num_blocks} blocks of {bm.block_size})")
            return False
        while bm.blocks_to_grow(seq, num_tokens) > bm.num_free_blocks:
            victim = pick_victim(self.config.preemption_policy, self.running, seq)
            if victim is None:
                self._preempt(seq, for_seq=seq)
                return False
            self.running.remove(victim)
            self._preempt(victim, for_seq=seq)
        return True

    def _draft(self, seq: Sequence, spare_tokens: int) -> list[int]:
        """Speculative tokens to verify after a decode's real one, within the token budget, the request's
        limits and the KV slots free now (speculation never preempts anyone)."""
        cfg, bm = self.config, self.block_manager
        if not cfg.num_speculative_tokens:
            return []
        free_slots = (len(seq.block_table) + bm.num_free_blocks) * bm.block_size - len(seq)
        k = min(cfg.num_speculative_tokens, spare_tokens, free_slots,
                seq.sampling_params.max_tokens - seq.num_completion_tokens - 1, cfg.max_model_len - len(seq) - 1)
        return propose_ngram(seq.token_ids, k, cfg.prompt_lookup_min, cfg.prompt_lookup_max)

    def _admit_waiting(self, budget: _StepBudget, scheduled: list[Sequence], prefill_flags: list[bool]):
        bm, cfg = self.block_manager, self.config
        while self.waiting:
            seq = self.waiting[0]
            if bm.blocks_for(len(seq)) > bm.num_blocks:
                self.waiting.popleft()
                self._abort(seq, f"grew to {len(seq)} tokens, more than the whole KV pool can hold")
                continue
            if budget.seqs == 0:
                self.decision_log.append(Blocked(seq.seq_id, "max_num_seqs", 1, 0))
                return
            hits = bm.find_cached_prefix(seq)
            num = len(seq) - len(hits) * bm.block_size
            if num > budget.tokens:
                if not cfg.chunked_prefill or budget.tokens == 0:
                    self.decision_log.append(Blocked(seq.seq_id, "token_budget", num, budget.tokens))
                    return
                num = budget.tokens
            need = bm.blocks_to_admit(hits, num)
            if need > bm.num_free_blocks:
                if not self._preempt_for_priority(seq, need):
                    self.decision_log.append(Blocked(seq.seq_id, "blocks", need, bm.num_free_blocks))
                    return
                continue  # blocks were freed: look at the head again (its cached prefix may have changed)
            self.waiting.popleft()
            recompute = seq.num_completion_tokens > 0
            bm.allocate(seq, hits, num)
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            if hits:
                self.decision_log.append(PrefixHit(seq.seq_id, tuple(hits), seq.num_cached_tokens))
            self.decision_log.append(Admitted(seq.seq_id, num, seq.num_cached_tokens, recompute))
            self._schedule(seq, num, budget, scheduled, prefill_flags, is_prefill=True)

    def _preempt_for_priority(self, seq: Sequence, need: int) -> bool:
        """Under the priority queue policy, push out lower-priority running requests for a more important
        arrival, but only if that frees enough blocks."""
        if self.config.queue_policy != "priority":
            return False
        bm = self.block_manager
        victims = sorted((s for s in self.running if s.priority > seq.priority and not s.num_scheduled_tokens),
                         key=priority_victim_key)
        freed, chosen = bm.num_free_blocks, []
        for victim in victims:
            if freed >= need:
                break
            freed += sum(1 for b in victim.block_table if bm.blocks[b].ref_count == 1)
            chosen.append(victim)
        if freed < need:
            return False
        for victim in chosen:
            self.running.remove(victim)
            self._preempt(victim, for_seq=seq, policy="priority")
        return True

    def _schedule(self, seq: Sequence, num: int, budget: _StepBudget, scheduled: list[Sequence],
                  prefill_flags: list[bool], is_prefill: bool | None = None):
        prefill_flags.append(seq.is_prefilling if is_prefill is None else is_prefill)
        self.block_manager.grow(seq, num)
        seq.num_scheduled_tokens = num
        if seq.num_computed_tokens + num < len(seq):
            self.decision_log.append(ChunkScheduled(seq.seq_id, seq.num_computed_tokens, num, len(seq)))
        budget.tokens -= num
        budget.seqs -= 1
        scheduled.append(seq)

    def _preempt(self, seq: Sequence, for_seq: Sequence, policy: str | None = None):
        """Recompute-style preemption: free its blocks and queue it again for a fresh prefill."""
        freed = self.block_manager.deallocate(seq)
        seq.status = SequenceStatus.WAITING
        seq.num_preemptions += 1
        self.num_preemptions += 1
        insert_waiting(self.waiting, seq, self.config.queue_policy, preempted=True)
        self.decision_log.append(Preempted(seq.seq_id, for_seq.seq_id, policy or self.config.preemption_policy, freed))

    def _abort(self, seq: Sequence, reason: str):
        self.block_manager.deallocate(seq)
        seq.status = SequenceStatus.ABORTED
        seq.finish_reason = reason
        self.decision_log.append(Aborted(seq.seq_id, reason))

    # -- after the model ran ---------------------------------------------------------------------------

    def postprocess(self, seqs: list[Sequence], token_ids: list):
        """Record the computed tokens and append each sequence's new tokens, then finish sequences that hit
        EOS, max_tokens or max_model_len.

        `token_ids` has one entry per sequence: None for a prefill chunk that leaves prompt tokens uncomputed,
        else the new token, or, for a sequence with draft tokens, the list of its accepted drafts followed by
        the model's own next token."""
        for seq, output in zip(seqs, token_ids, strict=True):
            computed_before = seq.num_computed_tokens
            new_tokens = output if isinstance(output, list) else [output]
            if seq.draft_token_ids:
                self._record_speculation(seq, new_tokens)
            else:
                seq.num_computed_tokens += seq.num_scheduled_tokens
            seq.num_scheduled_tokens = 0
            self.block_manager.commit_full_blocks(seq, computed_before)
            if seq.num_computed_tokens < len(seq):
                continue
            for token in new_tokens:
                seq.token_ids.append(token)
                if self._finish_if_done(seq, token):
                    break

    def _record_speculation(self, seq: Sequence, new_tokens: list[int]):
        """K/V stays valid for the last real token and the accepted drafts; the rest is discarded."""
        drafts, num_accepted = seq.draft_token_ids, len(new_tokens) - 1
        if not 0 <= num_accepted <= len(drafts) or new_tokens[:num_accepted] != drafts[:num_accepted]:
            raise ValueError(f"request {seq.seq_id}: the runner returned {new_tokens} for drafts {drafts}; "
                             "expected the accepted draft prefix followed by one token of the model")
        seq.num_computed_tokens += 1 + num_accepted
        seq.draft_token_ids = []
        self.block_manager.release_unused_tail(seq)
        self.decision_log.append(Speculated(seq.seq_id, tuple(drafts), num_accepted))

    def _finish_if_done(self, seq: Sequence, token: int) -> bool:
        cfg, params = self.config, seq.sampling_params
        if token == cfg.eos and not params.ignore_eos:
            reason = "eos"
        elif seq.num_completion_tokens >= params.max_tokens:
            reason = "max_tokens"
        elif len(seq) >= cfg.max_model_len:
            reason = "max_model_len"
        else:
            return False
        seq.status, seq.finish_reason = SequenceStatus.FINISHED, reason
        self.block_manager.deallocate(seq)
        self.running.remove(seq)
        self.decision_log.append(Finished(seq.seq_id, reason))
        return True
