"""The vLLM twin: vLLM V1's `Scheduler` (vllm/v1/core/sched/scheduler.py, vLLM 0.32 or 0.33 as
`Config.vllm_version` says), decision for decision and block for block, behind the contract every scheduler keeps
(scheduler/contract.py). One class, read beside vLLM's:

- `schedule()` is vLLM's `schedule()`. First the RUNNING requests, in their order (vLLM's `while req_index <
  len(self.running) and token_budget > 0`): each takes `num_new_tokens` = what it still lacks (the rest of its
  prompt, or its token plus its `spec_token_ids`, plus `num_output_placeholders` under async scheduling), cut to
  `long_prefill_token_threshold` (only when another request could use the budget; raised to a fair share of
  max_num_batched_tokens with `long_prefill_token_threshold_adaptive`), to `token_budget` (which starts at
  `max_num_scheduled_tokens`, by default max_num_batched_tokens) and to
  max_model_len; then `kv_cache_manager.allocate_slots`, and while it fails, preemption (`_preempt_request`): the
  tail of `running`, or under the priority policy the running request with the largest (priority, arrival time),
  until it fits or is itself preempted, which ends the loop (from 0.33 on, under the priority policy, the loop
  goes on to the next running request). Then, only when nobody was preempted (vLLM's `if not
  preempted_reqs`), the WAITING requests in queue order while a token is left and fewer than
  `max_num_active_seqs` (by default max_num_seqs) run:
  `get_computed_blocks` (prefix-cache hits, a preempted request's own freed blocks too while cached), `num_new_tokens
  = request.num_tokens - num_computed_tokens`, cut or left waiting (chunked prefill off), admitted only if the whole
  sequence fits (`scheduler_reserve_full_isl`, vLLM's default; off, this step's chunk) with the `watermark`'s
  blocks left free while another request runs; the first that does not fit stops the loop. `_update_after_schedule`
  marks which requests are still in their prompt (`is_prefill_chunk`). The events say why, in vLLM's terms.
- `postprocess()` is `update_from_output()` then `update_draft_token_ids()`: tokens appended and checked by
  `check_stop` (`_check_stop`: EOS, then the request's stop_token_ids, then max_model_len, then max_tokens),
  rejected drafts rolled back (their blocks stay), then the n-gram drafts of the next step (vLLM's model runner
  proposes them; scheduler/speculative.py finds the same ones).
- `launch()` and `land()` are vLLM's AsyncScheduler: `_update_after_schedule` advancing computed tokens and adding
  an output placeholder per request that will sample, then `update_from_output` when the step's tokens land.

vLLM stamps each request's arrival time when it is added, so requests arriving in the same step are ordered as
they were added: the twin orders them by id (the engine numbers requests in that order), in the waiting queue
and when it picks a priority victim (`Request.victim_order`).
"""

from __future__ import annotations

from bisect import insort
from collections import deque
from dataclasses import replace
from operator import attrgetter
from typing import ClassVar

from scheduler.config import Config
from scheduler.contract import SchedulerInfo
from scheduler.events import (
    Aborted,
    Admitted,
    Blocked,
    ChunkScheduled,
    Event,
    Evicted,
    Finished,
    PassEnded,
    Preempted,
    PrefixHit,
    Speculated,
)
from scheduler.interface import Batch, check_new, check_pool_shape, requeue
from scheduler.output import NOT_SCHEDULED_YET, OUTPUT_PANEL, RequestCounters, SchedulerOutput
from scheduler.sequence import PLACEHOLDER, Sequence, SequenceStatus
from scheduler.speculative import NgramIndex
from scheduler.vllm_v1.kv_cache import KVCache
from scheduler.vllm_v1.launch import vllm_launch, vllm_start_warning
from scheduler.vllm_v1.request import Request
from scheduler.vllm_v1.settings import VLLM_VERSIONS, VllmSettings
from scheduler.vllm_v1.tour import TOUR

WAITING, RUNNING, FINISHED, ABORTED = (SequenceStatus.WAITING, SequenceStatus.RUNNING, SequenceStatus.FINISHED,
                                       SequenceStatus.ABORTED)
PAD_DRAFT = -1  # vLLM's placeholder draft token when it pads a lone decode to 1 + num_speculative_tokens
PRIORITY_ORDER, VICTIM_ORDER = attrgetter("priority_order"), attrgetter("victim_order")
# Its SchedulerOutput panel, with vLLM's own words on it: its log line and its Prometheus counters
PANEL = replace(OUTPUT_PANEL, words=(("log_line", "vllm.log_line"), ("counters", "vllm.counters")))


class VllmScheduler:
    """vLLM V1's Scheduler. vLLM has no choice of step order, batch mixing or preemption victim (it preempts the
    running tail, or the least important request under the priority queue policy), nor the article's notebook bug
    or allocation-time caching switch: those Config fields are not read. Its pool has the null block (one unit more
    for the runner), and a prompt larger than the pool is queued, as vLLM's Scheduler queues it: it never fits, so it
    waits for good and, at the head of the queue, holds up every request behind it (vLLM's engine refuses at start a
    max_model_len its pool cannot hold, so it never gets one; `tools/refcheck/vllm`'s "pool" mode checks this)."""
    info: ClassVar[SchedulerInfo] = SchedulerInfo("vllm", "vLLM", "0.32", frozenset({
        "max_num_seqs", "max_num_batched_tokens", "max_model_len", "num_kvcache_blocks", "kvcache_block_size", "eos",
        "enable_prefix_caching", "chunked_prefill", "queue_policy", "num_speculative_tokens", "prompt_lookup_min",
        "prompt_lookup_max"}), reserved_units=1,
        queues_oversized_prompt=True, version_setting="vllm_version", versions=VLLM_VERSIONS,
        sampling=frozenset({"stop_token_ids", "min_tokens"}), settings=VllmSettings, launch=vllm_launch,
        start_warning=vllm_start_warning, sidebar_note="vllm.victim", panels=(PANEL,),
        words=(("reserved_pool", "vllm.pool_reserved"), ("reserved_unit", "vllm.block_reserved"),
               ("queue_limit", "vllm.queue_limit")), tour=TOUR)

    def __init__(self, config: Config):
        self.config = config
        self.kv_cache_manager = KVCache(config.num_kvcache_blocks, config.kvcache_block_size, config.max_model_len,
                                        config.enable_prefix_caching)
        self.requests: dict[int, Request] = {}  # vLLM's req_id -> Request: every request waiting or running
        self.waiting: deque[Request] | list[Request] = [] if config.queue_policy == "priority" else deque()
        self.running: list[Request] = []
        self.num_preemptions = 0
        self._events: list[Event] = []  # the events of the call under way
        self._in_flight: deque[list[tuple[Request, int, int | None]]] = deque()  # async: launched steps, each
        # (request, tokens scheduled, index of its placeholder token or None) in vLLM's order
        self._finished_req_ids: list[int] = []  # finished since the last schedule(): its SchedulerOutput tells them
        self._first_cached: dict[int, int] = {}  # request id -> prefix-cache hit tokens of its first scheduling
        self._output: SchedulerOutput | None = None

    # -- the read-only views (SchedulerProtocol) ---------------------------------------------------------

    @property
    def pool(self) -> KVCache:
        return self.kv_cache_manager

    @property
    def waiting_seqs(self) -> list[Sequence]:
        return [request.seq for request in self.waiting]

    @property
    def running_seqs(self) -> list[Sequence]:
        return [request.seq for request in self.running]

    def is_finished(self) -> bool:
        return not self.waiting and not self.running

    # -- requests (vLLM's add_request, finish_requests) --------------------------------------------------

    def add(self, seq: Sequence):
        """Queue a new request; an empty one or one of max_model_len tokens is refused (RequestRejected) and ends
        ABORTED, as vLLM's input checks refuse it. A prompt larger than the whole pool is queued (see the class)."""
        check_new(seq, self.config, held=seq.seq_id in self.requests)
        seq.status = WAITING
        request = self.requests[seq.seq_id] = Request(seq)
        self._enqueue(request)

    def _enqueue(self, request: Request, preempted: bool = False):
        """FCFS: arrivals at the tail, preempted requests at the head (vLLM's prepend_request); priority: in
        (priority, arrival) order."""
        if self.config.queue_policy == "priority":
            insort(self.waiting, request, key=PRIORITY_ORDER)
        elif preempted:
            assert isinstance(self.waiting, deque)  # fcfs keeps a deque
            self.waiting.appendleft(request)
        else:
            self.waiting.append(request)

    def abort(self, seq: Sequence, reason: str) -> Aborted:
        """vLLM's `finish_requests` with FINISHED_ABORTED: out of its queue, its blocks freed."""
        request = self.requests.pop(seq.seq_id)
        (self.running if seq.status is RUNNING else self.waiting).remove(request)
        seq.status, seq.finish_reason = ABORTED, reason
        seq.num_scheduled_tokens = 0
        self.kv_cache_manager.free(seq)
        self._finished_req_ids.append(seq.seq_id)
        return Aborted(seq.seq_id, reason)

    def requeue(self, seqs: list[Sequence]) -> list[Aborted]:
        return requeue(self, seqs)

    @property
    def own(self) -> VllmSettings:
        """vLLM's own settings under the config in effect (scheduler/vllm_v1/settings.py)."""
        return self.config.of(VllmSettings)

    def reconfigure(self, config: Config):
        """Switch to `config` from the next step on, the queues and the KV cache kept."""
        check_pool_shape(self.config, config)
        if config.queue_policy != self.config.queue_policy:
            self.waiting = (sorted(self.waiting, key=PRIORITY_ORDER) if config.queue_policy == "priority"
                            else deque(self.waiting))
        self.config = config
        self.kv_cache_manager.enable_caching = config.enable_prefix_caching
        self.kv_cache_manager.max_model_len = config.max_model_len

    # -- one step: vLLM's schedule() ---------------------------------------------------------------------

    def schedule(self) -> Batch:
        """This step's batch, with the events of deciding it (the class docstring maps it to vLLM's);
        `panels()` then tells it as vLLM's SchedulerOutput does."""
        held = {request.request_id: len(request.seq.block_table) for request in self.running}
        batch = self._schedule()
        self._output = self._scheduler_output(batch, held)
        return batch

    def _schedule(self) -> Batch:
        cfg, kv_cache_manager = self.config, self.kv_cache_manager
        events: list[Event] = []
        self._events = events
        num_scheduled_tokens: dict[Request, int] = {}  # in vLLM's order
        token_budget = self.own.max_num_scheduled_tokens or cfg.max_num_batched_tokens
        preempted_reqs: list[Request] = []
        num_running_scheduled = 0  # running requests scheduled (the waiting ones admitted not counted)
        prefill_scheduled = False  # a running request still in its prompt was scheduled
        # vLLM applies long_prefill_token_threshold only when another request could use the budget
        num_eligible = len(self.running) + len(self.waiting)
        threshold = self.own.long_prefill_token_threshold if num_eligible > 1 else 0
        if threshold and self.own.long_prefill_token_threshold_adaptive:  # at least a fair share of the budget
            threshold = max(threshold, cfg.max_num_batched_tokens // num_eligible)

        # First, schedule the RUNNING requests.
        req_index = 0
        while req_index < len(self.running) and token_budget > 0:
            request = self.running[req_index]
            if (request.num_output_placeholders and request.num_computed_tokens + 2 - request.num_output_placeholders
                    >= request.num_prompt_tokens + request.max_tokens):
                req_index += 1  # async: its token in flight is surely its last
                continue
            num_tokens = request.num_tokens
            num_new_tokens = (num_tokens + len(request.spec_token_ids) + request.num_output_placeholders
                              - request.num_computed_tokens)
            if 0 < threshold < num_new_tokens:
                num_new_tokens = threshold
            num_new_tokens = min(num_new_tokens, token_budget, cfg.max_model_len - 1 - request.num_computed_tokens)
            if num_new_tokens <= 0:
                req_index += 1
                continue
            scheduled = True
            while not kv_cache_manager.allocate_slots(request.seq, num_new_tokens, num_tokens):
                if cfg.queue_policy == "priority":
                    preempted_req = max(self.running, key=VICTIM_ORDER)
                    at = self.running.index(preempted_req)
                    del self.running[at]
                    if preempted_req in num_scheduled_tokens:  # scheduled already: its tokens go back
                        token_budget += num_scheduled_tokens.pop(preempted_req)
                        num_running_scheduled -= 1
                        preempted_req.seq.num_scheduled_tokens = 0
                        preempted_req.seq.draft_token_ids = []
                    if at < req_index:
                        req_index -= 1
                    policy = "priority"
                else:
                    preempted_req = self.running.pop()
                    policy = "tail"
                self._preempt_request(preempted_req, request, policy)
                preempted_reqs.append(preempted_req)
                if preempted_req is request:
                    scheduled = False
                    break
            if not scheduled:  # it preempted itself: vLLM 0.32 ends the loop over running requests; from 0.33 on,
                if cfg.queue_policy == "priority" and self.own.since("0.33"):  # under the priority policy, it goes
                    continue  # on to the next one (now at req_index)
                if req_index < len(self.running):
                    events.append(PassEnded(request.request_id,
                                            tuple(r.request_id for r in self.running[req_index:])))
                break
            self._tell_evictions(request)
            num_scheduled_tokens[request] = num_new_tokens
            request.seq.num_scheduled_tokens = num_new_tokens
            token_budget -= num_new_tokens
            num_running_scheduled += 1
            prefill_scheduled |= request.is_prefill_chunk
            req_index += 1
            if request.spec_token_ids:
                num_scheduled_spec_tokens = (num_new_tokens + request.num_computed_tokens - num_tokens
                                             - request.num_output_placeholders)
                request.seq.draft_token_ids = (request.spec_token_ids[:num_scheduled_spec_tokens]
                                               if num_scheduled_spec_tokens > 0 else [])
                request.spec_token_ids = []

        # Next, schedule the WAITING requests.
        if not preempted_reqs:
            self._schedule_waiting(num_scheduled_tokens, token_budget, threshold,
                                   num_running_scheduled > 0, prefill_scheduled)
        elif self.waiting:
            events.append(Blocked(self.waiting[0].request_id, "preempted_this_step", 0, 0))
        return self._update_after_schedule(num_scheduled_tokens)

    def _schedule_waiting(self, num_scheduled_tokens: dict[Request, int], token_budget: int, threshold: int,
                          running_scheduled: bool, prefill_scheduled: bool):
        """The loop over WAITING requests of vLLM's schedule(); requests before `req_index` were skipped (a stale
        output still in flight) and stay in place, as vLLM puts skipped requests back at the head."""
        cfg, kv_cache_manager, events = self.config, self.kv_cache_manager, self._events
        num_spec_tokens = cfg.num_speculative_tokens
        req_index = 0
        while req_index < len(self.waiting):
            request = self.waiting[req_index]
            if token_budget <= 0:
                events.append(Blocked(request.request_id, "token_budget", len(request.seq.token_ids), 0))
                return
            if len(self.running) >= (self.own.max_num_active_seqs or cfg.max_num_seqs):
                events.append(Blocked(request.request_id,
                                      "max_num_active_seqs" if self.own.max_num_active_seqs else "max_num_seqs", 1, 0))
                return
            if request.num_stale:
                req_index += 1
                continue
            num_tokens = request.num_tokens
            new_computed_blocks = kv_cache_manager.find_cached_prefix(request.seq, num_tokens)  # get_computed_blocks
            num_computed_tokens = len(new_computed_blocks) * kv_cache_manager.block_size
            num_new_tokens = num_tokens - num_computed_tokens
            pad_drafts = False
            # vLLM pads a lone resumed decode to the drafts' size, or waits; vLLM 0.32 fails an assertion where
            # long_prefill_token_threshold cuts that padding, so then no padding here
            if (num_spec_tokens and num_new_tokens == 1 and not prefill_scheduled
                    and (running_scheduled or num_computed_tokens)
                    and num_computed_tokens + 1 + num_spec_tokens + 1 <= cfg.max_model_len
                    and not 0 < threshold < 1 + num_spec_tokens):
                if 1 + num_spec_tokens > token_budget:
                    events.append(Blocked(request.request_id, "token_budget", 1 + num_spec_tokens, token_budget))
                    return
                num_new_tokens, pad_drafts = 1 + num_spec_tokens, True
            if 0 < threshold < num_new_tokens:
                num_new_tokens = threshold
            if not cfg.chunked_prefill and num_new_tokens > token_budget:
                events.append(Blocked(request.request_id, "token_budget", num_new_tokens, token_budget))
                return
            num_new_tokens = min(num_new_tokens, token_budget)
            # the watermark holds while another request runs (vLLM's has_scheduled_reqs)
            keep_free = self.own.watermark_blocks(cfg.num_kvcache_blocks) if self.running else 0
            if not kv_cache_manager.allocate_slots(request.seq, num_new_tokens, num_tokens, new_computed_blocks,
                                                   full_sequence_must_fit=self.own.scheduler_reserve_full_isl,
                                                   keep_free=keep_free):
                events.append(self._blocked_on_blocks(request, num_new_tokens, new_computed_blocks, keep_free))
                return
            self._tell_evictions(request)
            del self.waiting[req_index]
            self.running.append(request)
            seq = request.seq
            seq.status = RUNNING
            seq.num_computed_tokens = seq.num_cached_tokens = num_computed_tokens
            if new_computed_blocks:
                events.append(PrefixHit(seq.seq_id, tuple(new_computed_blocks), num_computed_tokens))
            events.append(Admitted(seq.seq_id, num_new_tokens, num_computed_tokens, seq.num_preemptions > 0))
            num_scheduled_tokens[request] = num_new_tokens
            seq.num_scheduled_tokens = num_new_tokens
            token_budget -= num_new_tokens
            if pad_drafts:
                seq.draft_token_ids = [PAD_DRAFT] * num_spec_tokens

    def _blocked_on_blocks(self, request: Request, num_new_tokens: int, hits: list[int], keep_free: int) -> Blocked:
        """Why a waiting request's blocks were refused: it needs more than are free ("blocks": for its whole
        sequence with scheduler_reserve_full_isl on, else for this chunk), or it would leave fewer than the
        watermark keeps free ("watermark")."""
        kv_cache_manager = self.kv_cache_manager
        covered = len(hits) * kv_cache_manager.block_size + num_new_tokens
        tokens = request.num_tokens if self.own.scheduler_reserve_full_isl else covered
        need = (kv_cache_manager.blocks_for(min(tokens, self.config.max_model_len)) - len(hits)
                + sum(1 for b in hits if kv_cache_manager.blocks[b].ref_count == 0))
        free = kv_cache_manager.num_free_blocks
        return Blocked(request.request_id, "watermark" if keep_free and need <= free else "blocks", need, free)

    def _tell_evictions(self, request: Request):
        """The cached blocks `request`'s allocation took from the free queue, as an event."""
        evicted = self.kv_cache_manager.evicted
        if evicted:
            self._events.append(Evicted(request.request_id, tuple(evicted)))
            evicted.clear()

    def panels(self) -> dict[str, SchedulerOutput]:
        """The last schedule()'s step as vLLM's SchedulerOutput lists it, with vLLM's per-request counters."""
        return {OUTPUT_PANEL.id: self._output} if self._output is not None else {}

    def _scheduler_output(self, batch: Batch, held: dict[int, int]) -> SchedulerOutput:
        admitted = {e.seq_id: e for e in batch.events if isinstance(e, Admitted)}
        for rid, event in admitted.items():
            self._first_cached.setdefault(rid, event.num_cached_tokens)
        ids = [seq.seq_id for seq in batch.seqs]
        counters = tuple(RequestCounters(r.request_id, r.num_computed_tokens + r.seq.num_scheduled_tokens, r.num_tokens,
                                         self._first_cached.get(r.request_id, NOT_SCHEDULED_YET))
                         for r in (*self.running, *self.waiting))
        finished, self._finished_req_ids = tuple(self._finished_req_ids), []
        kv = self.kv_cache_manager
        return SchedulerOutput(
            tuple(i for i in ids if i in admitted and not admitted[i].recompute),
            tuple(i for i in ids if i in admitted and admitted[i].recompute),
            tuple(i for i in ids if i not in admitted),
            tuple((seq.seq_id, tuple(seq.block_table[held.get(seq.seq_id, 0):])) for seq in batch.seqs),
            tuple(e.seq_id for e in batch.events if e.kind == "preempted"), finished, counters,
            kv.prefix_query_tokens, kv.prefix_hit_tokens, kv.preempted_query_tokens, kv.preempted_hit_tokens)

    def _preempt_request(self, request: Request, for_request: Request, policy: str):
        """vLLM's `_preempt_request` (the caller took it out of `running`): its blocks freed, its progress and drafts
        forgotten, queued again at the head."""
        seq = request.seq
        freed = self.kv_cache_manager.free(seq)
        seq.num_computed_tokens = seq.num_scheduled_tokens = 0
        seq.draft_token_ids = []
        request.spec_token_ids, request.num_output_placeholders = [], 0
        request.num_stale = request.num_in_flight
        seq.status = WAITING
        seq.num_preemptions += 1
        self.num_preemptions += 1
        self._enqueue(request, preempted=True)
        self._events.append(Preempted(seq.seq_id, for_request.request_id, policy, freed))

    def _update_after_schedule(self, num_scheduled_tokens: dict[Request, int]) -> Batch:
        """vLLM's `_update_after_schedule` as far as it decides anything: which requests are still in their prompt
        after this step (`is_prefill_chunk`: they get no drafts); chunk events; the batch in vLLM's order."""
        seqs, counts, num_prefills = [], [], 0
        for request, num_new_tokens in num_scheduled_tokens.items():
            seq, num_computed_tokens = request.seq, request.num_computed_tokens
            num_tokens = request.num_tokens + request.num_output_placeholders
            request.is_prefill_chunk = num_computed_tokens + num_new_tokens < num_tokens
            if request.is_prefill_chunk:
                self._events.append(ChunkScheduled(seq.seq_id, num_computed_tokens, num_new_tokens, num_tokens))
            if num_tokens - num_computed_tokens > 1:
                num_prefills += 1
            seqs.append(seq)
            counts.append(num_new_tokens)
        n = len(seqs)
        kind = "idle" if not n else "prefill" if num_prefills == n else "decode" if not num_prefills else "mixed"
        return Batch(seqs, tuple(counts), kind, tuple(self._events))

    # -- after the model ran: vLLM's update_from_output() ------------------------------------------------

    def postprocess(self, seqs: list[Sequence], token_ids: list) -> list[Event]:
        """vLLM's `update_from_output` then `update_draft_token_ids`. `token_ids` has one entry per sequence:
        None for a prefill chunk, else the new token, or for a sequence with drafts the list of the accepted
        drafts followed by the model's own token."""
        if len(token_ids) != len(seqs):
            raise ValueError(f"postprocess got {len(token_ids)} outputs for a batch of {len(seqs)} sequences; "
                             "give one per scheduled sequence (nothing was applied)")
        events: list[Event] = []
        self._events = events
        stopped = set()
        for seq, output in zip(seqs, token_ids, strict=True):
            scheduled_spec_token_ids = seq.draft_token_ids
            seq.num_computed_tokens += seq.num_scheduled_tokens
            seq.num_scheduled_tokens = 0
            if output is None:
                continue
            new_token_ids = output if type(output) is list else [output]
            if scheduled_spec_token_ids:
                num_accepted = len(new_token_ids) - 1
                seq.num_computed_tokens -= len(scheduled_spec_token_ids) - num_accepted  # rejected: blocks stay
                seq.draft_token_ids = []
                events.append(Speculated(seq.seq_id, tuple(scheduled_spec_token_ids), num_accepted))
            for n, token in enumerate(new_token_ids, 1):
                seq.token_ids.append(token)
                reason = self._check_stop(seq, token)
                if reason:
                    self._cache_accepted_drafts(seq, len(new_token_ids) - n)
                    stopped.add(self._free_request(seq, reason))
                    events.append(Finished(seq.seq_id, reason))
                    break
            else:
                self._cache_accepted_drafts(seq, 0)
        if stopped:
            self.running = [r for r in self.running if r not in stopped]
        if self.config.num_speculative_tokens:
            self._update_draft_token_ids(seqs, token_ids)
        return events

    def _cache_accepted_drafts(self, seq: Sequence, num_trimmed: int):
        """vLLM 0.33 on, with speculative decoding: after a step the blocks its computed tokens fill are hashed
        (0.32 hashes a block only when it is allocated full of known tokens), so blocks completed by accepted
        drafts are cached and freed to the tail of the free queue. A stop trims the tokens after it."""
        if self.config.num_speculative_tokens and self.own.since("0.33"):
            self.kv_cache_manager.cache_blocks(seq, seq.num_computed_tokens - num_trimmed)

    def _check_stop(self, seq: Sequence, token: int) -> str | None:
        """vLLM's `check_stop`: EOS first, then the request's stop tokens, then the length limits (min_tokens
        acts in the sampler, which never picks a stop token before it)."""
        cfg = self.config
        if token == cfg.eos and not seq.sampling_params.ignore_eos:
            return "eos"
        if token in seq.sampling_params.stop_token_ids:
            return "stop_token"
        if len(seq.token_ids) >= cfg.max_model_len:
            return "max_model_len"
        if seq.num_completion_tokens >= seq.sampling_params.max_tokens:
            return "max_tokens"
        return None

    def _free_request(self, seq: Sequence, reason: str) -> Request:
        """vLLM's `_free_request`: the request ends FINISHED for `reason`, its blocks freed (the caller takes it out
        of its queue). Returns its Request."""
        seq.status, seq.finish_reason = FINISHED, reason
        seq.num_scheduled_tokens = 0
        self.kv_cache_manager.free(seq)
        self._finished_req_ids.append(seq.seq_id)
        return self.requests.pop(seq.seq_id)

    def _update_draft_token_ids(self, seqs: list[Sequence], token_ids: list):
        """The n-gram drafts vLLM's model runner proposes after a step, for each request that sampled a token
        and is below max_model_len; a request still prefilling gets none."""
        cfg = self.config
        for seq, output in zip(seqs, token_ids, strict=True):
            request = self.requests.get(seq.seq_id)
            if request is None:  # finished
                continue
            if output is None or request.is_prefill_chunk:
                request.spec_token_ids = []
                continue
            room = cfg.max_model_len - len(seq.token_ids)
            index = seq.ngram_index
            if index is None or (index.min_n, index.max_n) != (cfg.prompt_lookup_min, cfg.prompt_lookup_max):
                index = seq.ngram_index = NgramIndex(cfg.prompt_lookup_min, cfg.prompt_lookup_max)
            enough = len(seq.token_ids) >= cfg.prompt_lookup_min
            request.spec_token_ids = index.propose(seq.token_ids, min(cfg.num_speculative_tokens, room)) if enough \
                else []

    # -- async scheduling (the engine's overlapped scheduling, vLLM's AsyncScheduler) ----------------------

    def launch(self, seqs: list[Sequence], outputs: list) -> list[Event]:
        """The batch went to the model; its tokens land later (`land`). `outputs` holds PLACEHOLDER for each
        request that will sample, None for a prefill chunk. vLLM's `_update_after_schedule`: computed tokens
        advance now, and each request that will sample gets a placeholder token."""
        launched = []
        for seq, output in zip(seqs, outputs, strict=True):
            request, num_new_tokens = self.requests[seq.seq_id], seq.num_scheduled_tokens
            seq.num_computed_tokens += num_new_tokens
            seq.num_scheduled_tokens = 0
            request.num_in_flight += num_new_tokens
            index = None
            if output is not None:
                index = len(seq.token_ids)
                seq.token_ids.append(PLACEHOLDER)
                request.num_unlanded += 1
                request.num_output_placeholders += 1
            launched.append((request, num_new_tokens, index))
        self._in_flight.append(launched)
        return []

    def land(self, landed: list[tuple[Sequence, int, int]]) -> tuple[list[tuple[Sequence, tuple[int, ...]]], list]:
        """The oldest step in flight returned its (sequence, index, token)s: vLLM's `update_from_output` under
        async scheduling. A request that stops (EOS, max_tokens, max_model_len) finishes now, one step late, its
        blocks freed: returned with them (the engine drops it from the next batch). A request preempted while
        its token was in flight still takes the token (vLLM delivers stale output)."""
        tokens = {seq.seq_id: token for seq, _, token in landed}
        late, stopped = [], set()
        for launched, num_new_tokens, index in self._in_flight.popleft():
            seq = launched.seq
            request = self.requests.get(seq.seq_id)
            if request is None:  # finished already
                continue
            request.num_in_flight -= num_new_tokens
            stale = request.num_stale > 0
            if stale:
                request.num_stale -= num_new_tokens
            if index is None:
                continue
            seq.token_ids[index] = token = tokens[seq.seq_id]
            request.num_unlanded -= 1
            was_running = seq.status is RUNNING
            if not stale:
                request.num_output_placeholders -= 1
            reason = self._check_stop(seq, token)
            if was_running:
                self.kv_cache_manager.cache_blocks(seq, request.num_computed_tokens - request.num_output_placeholders)
            if reason:
                seq.status, seq.finish_reason = FINISHED, reason
                self._finished_req_ids.append(seq.seq_id)
                stopped.add(self.requests.pop(seq.seq_id))
                late.append((seq, self.kv_cache_manager.free(seq)))
        if stopped:
            self.running = [r for r in self.running if r not in stopped]
            self.waiting = type(self.waiting)(r for r in self.waiting if r not in stopped)
        return late, []
