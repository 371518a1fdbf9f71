"""Continuous batching: decide each step which sequences run and how many tokens each computes.

`schedule()` is nano-vllm's algorithm first: prefill waiting requests in queue order while the token
budget, `max_num_seqs` and the free blocks allow; if any were admitted, that is the step; else decode every
running request by one token, preempting from the tail of `running` when a request needs a block and none
is free. With the policy fields at their defaults and prefix caching off it makes nano-vllm's decisions.
Each policy is a branch off that path:
- `prefill_first=False` decodes first and prefills only when nothing is running (`_schedule_decode_first`);
- `mixed_batches` serves running requests first and admits waiting ones under the same budget (`_schedule_mixed`);
- `chunked_prefill` admits a prompt longer than the budget left in chunks, continued in later steps;
- `preemption_policy` and `queue_policy` choose the victim and the queue order (scheduler/policies.py);
- `num_speculative_tokens` adds n-gram drafts to each decode (`_draft`).

The Scheduler is the only owner of request state: it alone changes a sequence's status, its place in the
queues and its blocks (`add`, `schedule`, `postprocess`, `reconfigure`, `requeue`; overlapped, `launch` and
`land`, scheduler/article/overlapped.py). What it decided and why comes back as events with each batch
(`Batch.events`) and from `postprocess()`. What the engine sees of any scheduler is in scheduler/interface.py.
"""

from collections import deque
from typing import ClassVar

from i18n import Message
from scheduler.article import answers
from scheduler.article.block_manager import BlockManager
from scheduler.article.launch import closest_vllm
from scheduler.article.overlapped import LandsLate
from scheduler.article.settings import ArticleSettings
from scheduler.config import CONFIG_FIELDS, Config
from scheduler.contract import SchedulerInfo, TourInfo
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
from scheduler.interface import Batch, check_new, check_pool_shape, refuse, requeue
from scheduler.policies import insert_waiting, pick_victim, priority_key, priority_victim_key
from scheduler.sequence import Sequence, SequenceStatus
from scheduler.speculative import NgramIndex

WAITING, RUNNING, FINISHED, ABORTED = (SequenceStatus.WAITING, SequenceStatus.RUNNING, SequenceStatus.FINISHED,
                                       SequenceStatus.ABORTED)


class _Step:
    """The batch schedule() is building: its sequences, their token counts, the budget left."""

    __slots__ = ("seqs", "num_tokens", "num_prefills", "tokens_left", "seqs_left", "max_num_seqs")

    def __init__(self, tokens_left: int, max_num_seqs: int):
        self.seqs: list[Sequence] = []
        self.num_tokens: list[int] = []
        self.num_prefills = 0
        self.tokens_left, self.seqs_left = tokens_left, max_num_seqs
        self.max_num_seqs = max_num_seqs  # this step's, as max_num_seqs_now answered

    def batch(self, events: list[Event]) -> Batch:
        n = len(self.seqs)
        kind = ("idle" if not n else "prefill" if self.num_prefills == n else "decode" if not self.num_prefills
                else "mixed")
        return Batch(self.seqs, tuple(self.num_tokens), kind, tuple(events))


# Where the article's notebook (the InfraTech repository's llm_infer/vllm_basic_scheduler.ipynb, at the commit that
# last changed it) decides: prefill(), decode() with preempt(), schedule(prefill_first). It has no chunked prefill.
TOUR = TourInfo(
    summary="article.tour.summary",
    source="https://github.com/CalvinXKY/InfraTech/blob/57c24cd6f8b8fcbeb047732d842aeac9f053f98a/llm_infer",
    lines=(("admit", "vllm_basic_scheduler.ipynb?plain=1#L561-L574"),
           ("resume", "vllm_basic_scheduler.ipynb?plain=1#L561-L574"),
           ("wait", "vllm_basic_scheduler.ipynb?plain=1#L563-L566"),
           ("preempt", "vllm_basic_scheduler.ipynb?plain=1#L576-L597"),
           ("batch", "vllm_basic_scheduler.ipynb?plain=1#L599-L617")))


class Scheduler(LandsLate):
    """The article's scheduler (`SchedulerProtocol`, scheduler/contract.py): every shared Config field, and its own
    policy choices (scheduler/article/settings.py); a prompt larger than the whole pool is refused on arrival. Its
    export is the closest vLLM command, with where it decides otherwise (scheduler/article/launch.py)."""
    info: ClassVar[SchedulerInfo] = SchedulerInfo(
        "article", "nano-vllm", "", frozenset(CONFIG_FIELDS), settings=ArticleSettings, launch=closest_vllm,
        words=(("queue_limit", "article.queue_limit"),), tour=TOUR, workload="notebook")

    def __init__(self, config: Config):
        self.config = config
        self.block_manager = BlockManager(config)
        self.waiting: deque[Sequence] = deque()
        self.running: deque[Sequence] = deque()
        self.num_preemptions = 0
        self._events: list[Event] = []  # the events of the schedule() or postprocess() call under way
        self._held: set[Sequence] = set()  # every request in `waiting` or `running`
        self._chunked_before = config.chunked_prefill  # running requests may hold a partial prefill

    @property
    def own(self) -> ArticleSettings:
        """Its own settings under the config in effect."""
        return self.config.of(ArticleSettings)

    def panels(self) -> dict:
        """The stage draws no panel of its own for the article's scheduler."""
        return {}

    # -- one step: the basic path ----------------------------------------------------------------------

    def schedule(self) -> Batch:
        """This step's batch, with the events of deciding it."""
        max_num_seqs = answers.whole_number("max_num_seqs_now", self.max_num_seqs_now(), 1, self.config.max_num_seqs)
        self._events, step = [], _Step(self.config.max_num_batched_tokens, max_num_seqs)
        if self.own.mixed_batches:
            return self._schedule_mixed(step)
        if not self.own.prefill_first:
            return self._schedule_decode_first(step)
        self._prefill(step)
        if step.seqs:
            return step.batch(self._events)
        self._decode(step)
        return step.batch(self._events)

    def _prefill(self, step: _Step, chunks_first: bool = True):
        """Admit waiting requests from the head while the budget, max_num_seqs and the free blocks allow;
        the one that does not fit stays at the head and says why (a `blocked` event). Running requests
        part-way through a chunked prefill go first (`chunks_first`)."""
        if chunks_first and self._chunked_before and not self._continue_chunked_prefills(step):
            return
        if len(self.waiting) > 1:
            self.waiting = deque(answers.in_key_order("waiting_key", self.waiting, self.waiting_key))
        bm, cfg, waiting = self.block_manager, self.config, self.waiting
        while waiting:
            seq = waiting[0]
            if bm.blocks_for(len(seq.token_ids)) > len(bm.blocks):
                waiting.popleft()
                self._abort(seq, Message("abort.outgrew_pool", n=len(seq)))
                continue
            if not step.seqs_left:
                self._events.append(Blocked(seq.seq_id, "max_num_seqs", 1, 0) if step.max_num_seqs == cfg.max_num_seqs
                                    else Blocked(seq.seq_id, "max_num_seqs_now", step.max_num_seqs, 0))
                return
            hits = bm.find_cached_prefix(seq)
            num = len(seq.token_ids) - len(hits) * bm.block_size
            if num > step.tokens_left and (not cfg.chunked_prefill or not step.tokens_left):
                self._events.append(Blocked(seq.seq_id, "token_budget", num, step.tokens_left))
                return
            if cfg.chunked_prefill:
                num = self._chunk(seq, num, step.tokens_left)
            need = bm.blocks_to_admit(hits, num)
            if need > bm.num_free_blocks:
                if cfg.queue_policy == "priority" and self._preempt_for_priority(seq, need):
                    continue  # blocks were freed: look at the head again (its cached prefix may have changed)
                self._events.append(Blocked(seq.seq_id, "blocks", need, bm.num_free_blocks))
                return
            waiting.popleft()
            recompute = seq.num_completion_tokens > 0
            bm.allocate(seq, hits, num)
            seq.status = RUNNING
            self.running.append(seq)
            if hits:
                self._events.append(PrefixHit(seq.seq_id, tuple(hits), seq.num_cached_tokens))
            self._events.append(Admitted(seq.seq_id, num, seq.num_cached_tokens, recompute))
            self._add_prefill(step, seq, num)

    def _decode(self, step: _Step, chunks_too: bool = False):
        """Batch running requests from the head of `running`, one token each (plus speculative drafts); a
        request that needs a block when none is free preempts others (the tail, or the policy's victim)
        until it fits, or itself. The batched ones go back to the head of `running` in their order. A request
        still prefilling in chunks keeps its place for a prefill step, or, `chunks_too` (mixed batches),
        takes its next chunk here. Runs first in a step, on an empty batch."""
        cfg, bm = self.config, self.block_manager
        if self.own.preemption_policy == "priority":  # served in priority order: a victim never outranks a batched one
            self.running = deque(sorted(self.running, key=priority_key))
        running, bs, speculate = self.running, bm.block_size, cfg.num_speculative_tokens
        batch, counts = step.seqs, step.num_tokens
        seqs_left, tokens_left = step.seqs_left, step.tokens_left
        kept = None  # the batched and the skipped requests in their order, once one was skipped
        while running and seqs_left and tokens_left:
            seq = running.popleft()
            n, computed = len(seq.token_ids), seq.num_computed_tokens
            if n - computed == 1 and n != seq.num_prompt_tokens:  # a decode: the K/V of its newest token
                num = 1
                if computed >= len(seq.block_table) * bs and not self._grow(seq, 1):  # its last block is full
                    continue
                if speculate:
                    num += self._draft(seq, tokens_left - 1)
            elif chunks_too:  # mixed batches: the next chunk of a chunked prefill
                num = self._chunk(seq, n - computed, tokens_left)
                if computed + num > len(seq.block_table) * bs and not self._grow(seq, num):
                    continue
                step.num_prefills += 1
                if computed + num < n:
                    self._events.append(ChunkScheduled(seq.seq_id, computed, num, n))
            else:  # a chunked prefill keeps its place for a prefill step
                if kept is None:
                    kept = batch[:]
                kept.append(seq)
                continue
            seq.num_scheduled_tokens = num
            batch.append(seq)
            counts.append(num)
            seqs_left -= 1
            tokens_left -= num
            if kept is not None:
                kept.append(seq)
        step.seqs_left, step.tokens_left = seqs_left, tokens_left
        running.extendleft(reversed(batch if kept is None else kept))

    def _grow(self, seq: Sequence, num_tokens: int) -> bool:
        """Give `seq` the blocks to compute `num_tokens` more tokens, preempting others while none are free.
        False if `seq` itself had to leave (preempted, or aborted for outgrowing the whole pool)."""
        bm = self.block_manager
        if bm.blocks_for(seq.num_computed_tokens + num_tokens) > len(bm.blocks):
            self._abort(seq, Message("abort.needs_whole_pool", blocks=bm.num_blocks, size=bm.block_size))
            return False
        while bm.blocks_to_grow(seq, num_tokens) > bm.num_free_blocks:
            victim, chose = answers.victim(self.choose_victim(seq), self.running, seq), self._victim_chooser()
            if victim is None:
                self._preempt(seq, for_seq=seq, policy=chose)
                return False
            self.running.remove(victim)
            self._preempt(victim, for_seq=seq, policy=chose)
        bm.grow(seq, num_tokens)
        self._preallocate(seq, seq.num_computed_tokens + num_tokens)
        return True

    def _victim_chooser(self) -> str:
        """Who chose a victim, as the narration names it (`Preempted.policy`): the preemption policy, or a scheduler
        of one's own that overrides `choose_victim` (its kind id)."""
        return self.own.preemption_policy if type(self).choose_victim is Scheduler.choose_victim else self.info.kind

    def _chunk(self, seq: Sequence, to_compute: int, budget: int) -> int:
        """chunked_prefill: the tokens `seq` prefills this step, `chunk_size`'s answer within both bounds."""
        answer = answers.whole_number("chunk_size", self.chunk_size(seq, to_compute, budget), 1)
        return min(answer, to_compute, budget)

    def _preallocate(self, seq: Sequence, num_tokens: int):
        """Top `seq`'s blocks up to those its first `num_tokens` tokens fill plus `extra_blocks`' answer, as far
        as free blocks allow (nobody is preempted for them) and never past the most it can ever fill."""
        bm = self.block_manager
        extra = answers.whole_number("extra_blocks", self.extra_blocks(seq), 0)
        if not extra:
            return
        longest = min(seq.num_prompt_tokens + seq.sampling_params.max_tokens, self.config.max_model_len)
        wanted = min(bm.blocks_for(num_tokens) + extra, bm.blocks_for(longest)) - len(seq.block_table)
        bm.take_blocks(seq, min(wanted, bm.num_free_blocks))

    # -- the hooks: decisions a scheduler of one's own overrides (starters/, docs/schedulers.md) ------------------

    def choose_victim(self, requester: Sequence) -> Sequence | None:
        """The running request to preempt so that `requester` can grow; None: `requester` itself leaves. Default:
        the preemption policy's ("tail": running[-1], the request admitted last). `self.running` then holds the
        running requests not batched yet this step, `requester` not among them; the scheduler asks again while
        blocks are still short, and refuses an answer that is neither None nor one of them."""
        return pick_victim(self.own.preemption_policy, self.running, requester)

    def waiting_key(self, seq: Sequence) -> object:
        """The waiting queue's order: before admitting, the scheduler sorts `waiting` by this key, smallest first,
        and admits from its head while the budget and the blocks allow (the head that does not fit waits, and the
        queue with it). Equal keys keep their order, so the default, one key for all, leaves the queue as the
        queue policy built it: arrivals at the tail, preempted requests back at the head (fcfs), or by priority.
        Keys must compare with each other (numbers, or tuples of numbers)."""
        return 0

    def max_num_seqs_now(self) -> int:
        """How many requests this step's batch may hold, prefills and decodes alike: the article's "adjust
        max_num_seqs to what you observe" (the queues, the free blocks, what you keep of earlier steps). Default:
        config.max_num_seqs. The scheduler takes a whole number from 1 to config.max_num_seqs (the runner's
        limit)."""
        return self.config.max_num_seqs

    def extra_blocks(self, seq: Sequence) -> int:
        """How many blocks beyond those its tokens need now `seq` is given when it is admitted or grows: the
        article's "pre-allocate blocks", so that it asks (and may preempt) less often. Default: 0. The scheduler
        gives them only while free blocks are left, never preempts for them and never past the blocks `seq` can
        ever fill; they are freed with its others (and, under speculative decoding, after each step)."""
        return 0

    def chunk_size(self, seq: Sequence, to_compute: int, budget: int) -> int:
        """Under chunked_prefill, how many of the `to_compute` tokens `seq` still has to prefill it computes this
        step, `budget` being the step's tokens left. Default: as many as fit, min(to_compute, budget). The
        scheduler takes a whole number from 1, clamped to both."""
        return min(to_compute, budget)

    def _preempt(self, seq: Sequence, for_seq: Sequence, policy: str | None = None):
        """Recompute-style preemption: free its blocks and queue it again for a fresh prefill."""
        freed = self.block_manager.deallocate(seq)
        seq.status = WAITING
        seq.num_preemptions += 1
        self.num_preemptions += 1
        insert_waiting(self.waiting, seq, self.config.queue_policy, preempted=True)
        self._events.append(Preempted(seq.seq_id, for_seq.seq_id, policy or self.own.preemption_policy, freed))

    def _add_prefill(self, step: _Step, seq: Sequence, num: int):
        """Batch `num` prompt (or recomputed) tokens of an admitted request."""
        self.block_manager.grow(seq, num)
        self._preallocate(seq, seq.num_computed_tokens + num)
        seq.num_scheduled_tokens = num
        if seq.num_computed_tokens + num < len(seq.token_ids):
            self._events.append(ChunkScheduled(seq.seq_id, seq.num_computed_tokens, num, len(seq.token_ids)))
        step.seqs.append(seq)
        step.num_tokens.append(num)
        step.num_prefills += 1
        step.tokens_left -= num
        step.seqs_left -= 1

    # -- after the model ran ---------------------------------------------------------------------------

    def postprocess(self, seqs: list[Sequence], token_ids: list) -> list[Event]:
        """Record the computed tokens and append each sequence's new tokens, then finish sequences that hit
        EOS, max_tokens or max_model_len. Returns the events (finished, speculated).

        `token_ids` has one entry per sequence: None for a prefill chunk that leaves prompt tokens uncomputed,
        else the new token, or, for a sequence with draft tokens, the list of its accepted drafts followed by
        the model's own next token."""
        if len(token_ids) != len(seqs):
            raise ValueError(f"postprocess got {len(token_ids)} outputs for a batch of {len(seqs)} sequences; "
                             "give one per scheduled sequence (nothing was applied)")
        events: list[Event] = []
        self._events = events
        cfg, bm = self.config, self.block_manager
        eos, max_model_len, bs = cfg.eos, cfg.max_model_len, bm.block_size
        for seq, output in zip(seqs, token_ids, strict=True):
            computed_before = seq.num_computed_tokens
            if seq.draft_token_ids:
                self._record_speculation(seq, output if type(output) is list else [output])
                computed = seq.num_computed_tokens
            else:
                seq.num_computed_tokens = computed = computed_before + seq.num_scheduled_tokens
            seq.num_scheduled_tokens = 0
            if computed // bs != computed_before // bs:
                bm.commit_full_blocks(seq, computed_before)
            tokens = seq.token_ids
            if computed < len(tokens):
                continue  # a prefill chunk
            if type(output) is list:  # accepted drafts, then the model's token
                for token in output:
                    tokens.append(token)
                    if self._finish_if_done(seq, token):
                        break
                continue
            tokens.append(output)
            n = len(tokens)
            if (output == eos or n >= max_model_len or n - seq.num_prompt_tokens >= seq.sampling_params.max_tokens):
                self._finish_if_done(seq, output)  # it may go on: EOS under ignore_eos
        return events

    def _record_speculation(self, seq: Sequence, new_tokens: list[int]):
        """K/V stays valid for the last real token and the accepted drafts; the rest is discarded."""
        drafts, num_accepted = seq.draft_token_ids, len(new_tokens) - 1
        if not 0 <= num_accepted <= len(drafts) or new_tokens[:num_accepted] != drafts[:num_accepted]:
            raise ValueError(f"request {seq.seq_id}: the runner returned {new_tokens} for drafts {drafts}; "
                             "expected the accepted draft prefix followed by one token of the model")
        seq.num_computed_tokens += 1 + num_accepted
        seq.draft_token_ids = []
        self.block_manager.release_unused_tail(seq)
        self._events.append(Speculated(seq.seq_id, tuple(drafts), num_accepted))

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
        self.running.remove(seq)
        self._end(seq, FINISHED, reason)
        self._events.append(Finished(seq.seq_id, reason))
        return True

    # -- requests --------------------------------------------------------------------------------------

    def add(self, seq: Sequence):
        """Queue a new request. One that could never run is refused (RequestRejected) and ends ABORTED with
        the reason; a sequence this scheduler already holds is refused (ValueError), changing nothing."""
        check_new(seq, self.config, held=seq in self._held)
        cfg, n = self.config, len(seq.token_ids)
        if self.block_manager.blocks_for(n) > cfg.num_kvcache_blocks:
            refuse(seq, "abort.pool_too_small", n=n, blocks=self.block_manager.blocks_for(n),
                   size=cfg.kvcache_block_size, pool=cfg.num_kvcache_blocks)
        seq.status = WAITING
        self._held.add(seq)
        insert_waiting(self.waiting, seq, cfg.queue_policy, preempted=False)

    def requeue(self, seqs: list[Sequence]) -> list[Aborted]:
        return requeue(self, seqs)

    def abort(self, seq: Sequence, reason: str) -> Aborted:
        """End a request this scheduler holds, ABORTED for `reason`, its blocks freed."""
        (self.running if seq.status is RUNNING else self.waiting).remove(seq)
        seq.num_scheduled_tokens = 0
        self._end(seq, ABORTED, reason)
        return Aborted(seq.seq_id, reason)

    # -- the read-only views (SchedulerProtocol) ---------------------------------------------------------

    @property
    def pool(self) -> BlockManager:
        return self.block_manager

    @property
    def waiting_seqs(self) -> deque[Sequence]:
        return self.waiting

    @property
    def running_seqs(self) -> deque[Sequence]:
        return self.running

    def reconfigure(self, config: Config):
        """Switch to `config` from the next step on, the queues and the KV cache kept: switching to the priority
        queue policy sorts the waiting queue; prefix caching follows the new config."""
        check_pool_shape(self.config, config)
        if config.queue_policy == "priority" and self.config.queue_policy != "priority":
            self.waiting = deque(sorted(self.waiting, key=priority_key))
        self.config = self.block_manager.config = config
        self._chunked_before = self._chunked_before or config.chunked_prefill

    def is_finished(self) -> bool:
        return not self.waiting and not self.running

    def _abort(self, seq: Sequence, reason: str):
        self._end(seq, ABORTED, reason)
        self._events.append(Aborted(seq.seq_id, reason))

    def _end(self, seq: Sequence, status: SequenceStatus, reason: str) -> tuple[int, ...]:
        """End `seq` (already out of the queues) and free its blocks (returned, last first)."""
        seq.status, seq.finish_reason = status, reason
        self._held.discard(seq)
        return self.block_manager.deallocate(seq)

    # -- policies --------------------------------------------------------------------------------------

    def _schedule_decode_first(self, step: _Step) -> Batch:
        """prefill_first=False: decode the running requests; prefill only when none could run."""
        self._decode(step)
        if not step.seqs:
            self._prefill(step)
        elif self.waiting:
            head = self.waiting[0]
            self._events.append(Blocked(head.seq_id, "decode_first", len(head), 0))
        return step.batch(self._events)

    def _schedule_mixed(self, step: _Step) -> Batch:
        """mixed_batches (vLLM V1): running requests first, decodes and prefill chunks alike, then waiting ones
        under the same budget, but no admissions in a step that preempts."""
        preemptions_before = self.num_preemptions
        self._decode(step, chunks_too=True)
        if self.num_preemptions == preemptions_before:
            self._prefill(step, chunks_first=False)  # the loop over running gave them their chunks
        return step.batch(self._events)

    def _continue_chunked_prefills(self, step: _Step) -> bool:
        """chunked_prefill: running requests part-way through their prompt take their next chunk first, in
        their order. False when one lacks blocks: it waits, and nobody is admitted ahead of it."""
        bm = self.block_manager
        for seq in self.running:
            if not seq.is_prefilling or not step.seqs_left or not step.tokens_left:
                continue
            num = self._chunk(seq, len(seq) - seq.num_computed_tokens, step.tokens_left)
            if bm.blocks_to_grow(seq, num) > bm.num_free_blocks:
                return False
            self._add_prefill(step, seq, num)
        return True

    def _preempt_for_priority(self, seq: Sequence, need: int) -> bool:
        """queue_policy="priority": push out lower-priority running requests for a more important arrival, but
        only if that frees enough blocks."""
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

    def _draft(self, seq: Sequence, spare_tokens: int) -> int:
        """num_speculative_tokens: draft tokens to verify after a decode's real one, within the token budget,
        the request's limits and the KV slots free now (speculation never preempts anyone); they take
        their blocks. Returns how many."""
        cfg, bm = self.config, self.block_manager
        free_slots = (len(seq.block_table) + bm.num_free_blocks) * bm.block_size - len(seq)
        k = min(cfg.num_speculative_tokens, spare_tokens, free_slots,
                seq.sampling_params.max_tokens - seq.num_completion_tokens - 1, cfg.max_model_len - len(seq) - 1)
        index = seq.ngram_index
        if index is None or (index.min_n, index.max_n) != (cfg.prompt_lookup_min, cfg.prompt_lookup_max):
            index = seq.ngram_index = NgramIndex(cfg.prompt_lookup_min, cfg.prompt_lookup_max)
        seq.draft_token_ids = index.propose(seq.token_ids, k)
        bm.grow(seq, 1 + len(seq.draft_token_ids))
        return len(seq.draft_token_ids)
