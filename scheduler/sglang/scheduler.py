"""The SGLang twin: SGLang 0.5.23's `Scheduler` (`managers/scheduler.py`) step by step, without a model or a GPU,
under SGLang's names. Overlap scheduling, mixed chunks and the random policy are left out.

One step, as `event_loop_normal` runs it:
- `get_next_batch_to_run`: the last prefill batch joins the running batch (the request still being chunked
  stays out and its computed part enters the tree), finished requests leave, then a prefill batch from
  `get_new_batch_prefill` if it admits anything, else a decode of the running batch (`update_running_batch`);
- the model (the caller's), then `process_batch_result`: each request's token, its finish (EOS, max_new_tokens,
  or the context length, by which max_new_tokens was clipped at arrival), the tree insert of its KV.
Memory pressure is met by retraction (`retract_decode`): requests leave the decode batch for the waiting queue,
their slots freed, and `new_token_ratio` jumps; it decays again by one step per decode.
Under priority scheduling (`enable_priority_scheduling`, fcfs or lof) the waiting queue is ordered by priority first,
and a request the full batch cannot take may preempt running requests of a lower priority (`preempt_to_schedule`),
released as a retraction releases them; `retraction_policy="priority"` retracts the least important first.
Each decision is told as it is taken, with the numbers it used (`events`, one step's: scheduler/events.py), so a
reader never works one out again: the prefill pass's stop with PrefillAdder's budgets at that moment, the policy's
head, admissions, retractions and preemptions with what they freed and what stays cached, each eviction with what it
made room for. A prompt over the input limit is queued aborted, as a one-token stub (`validate_input_length`)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace

from scheduler.events import (
    Aborted,
    Admitted,
    AdmittedAfterPreemption,
    Blocked,
    ChunkScheduled,
    Event,
    LeafEvicted,
    Ordered,
    Preempted,
    PrefixHit,
    Retracted,
    Unlocked,
)
from scheduler.sglang.allocator import make_allocator
from scheduler.sglang.radix_cache import RadixCache
from scheduler.sglang.req import Req, extend_end_of, lock_of, matched_node, priority_of, row_of
from scheduler.sglang.schedule_policy import (
    AddReqResult,
    PrefillAdder,
    SchedulePolicy,
    init_next_round_input,
    priority_sign,
)
from scheduler.sglang.tree_view import prefill_budget

RETRACT_DECODE_STEPS = 20  # SGLANG_RETRACT_DECODE_STEPS: decode steps of room a retraction aims to leave
RETRACTION_POLICIES = ("length", "priority")
PRIORITY_SCHEDULE_POLICIES = ("fcfs", "lof")  # the policies SGLang allows priority scheduling with
POLICY_ARGS = ("schedule_policy", "enable_priority_scheduling", "schedule_low_priority_values_first")  # its policy's
INIT_NEW_TOKEN_RATIO, MIN_NEW_TOKEN_RATIO_FACTOR, NEW_TOKEN_RATIO_DECAY_STEPS = 0.7, 0.14, 600
NO_ROOM = "sglang.abort.no_room"  # the reason of the last request a retraction aborts (a message id)


@dataclass(frozen=True)
class ServerArgs:
    """The settings the twin honours, under `python -m sglang.launch_server`'s names, at SGLang 0.5.23's defaults
    where it declares one (srt/arg_groups/fields/schedule.py: max_prefill_tokens, schedule_policy fcfs,
    schedule_conservativeness, priority scheduling's settings, retraction_policy) and page_size 1 (what SGLang
    resolves when none is given, but for a few attention backends). The others SGLang sizes from the machine and the
    model, which the twin has not: max_total_tokens and max_running_requests from the GPU's memory, context_length
    from the model's config, and chunked_prefill_size from the GPU's memory too (2048 below 20 GB, 4096 below 60 GB,
    8192 below 160 GB, 16384 above, 4096 when it cannot tell); the twin's are its own: a small pool and no chunking."""
    max_total_tokens: int = 256
    page_size: int = 1
    chunked_prefill_size: int = -1  # -1 (or 0): no chunking
    max_prefill_tokens: int = 16384
    max_running_requests: int = 8
    schedule_policy: str = "fcfs"
    schedule_conservativeness: float = 1.0
    context_length: int = 8192
    eos: int = -1
    enable_priority_scheduling: bool = False
    schedule_low_priority_values_first: bool = False
    priority_scheduling_preemption_threshold: int = 10
    disable_priority_preemption: bool = False
    retraction_policy: str = "length"

    def __post_init__(self):
        for name in ("max_total_tokens", "page_size", "max_prefill_tokens", "max_running_requests", "context_length"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.enable_priority_scheduling and self.schedule_policy not in PRIORITY_SCHEDULE_POLICIES:
            raise ValueError(f"To use priority scheduling, schedule_policy must be 'fcfs' or 'lof'. "
                             f"'{self.schedule_policy}' is not supported.")
        if self.retraction_policy not in RETRACTION_POLICIES:
            raise ValueError(f"retraction_policy={self.retraction_policy!r}: use one of {RETRACTION_POLICIES}")
        if self.retraction_policy == "priority" and not self.enable_priority_scheduling:
            raise ValueError("--retraction-policy priority requires --enable-priority-scheduling")

    @property
    def enable_priority_preemption(self) -> bool:
        """On with priority scheduling unless disable_priority_preemption."""
        return self.enable_priority_scheduling and not self.disable_priority_preemption


class NewTokenRatioTracker:
    """The share of a running request's remaining max_new_tokens the admission reserves: starts at 0.7 x
    schedule_conservativeness, decays to 0.14 x that over 600 decode steps, jumps after a retraction, and is
    reset when the server is idle."""

    def __init__(self, conservativeness: float):
        self.init = min(INIT_NEW_TOKEN_RATIO * conservativeness, 1.0)
        self.min = min(self.init * MIN_NEW_TOKEN_RATIO_FACTOR, 1.0)
        self.decay = (self.init - self.min) / NEW_TOKEN_RATIO_DECAY_STEPS
        self.current = self.init

    def decay_step(self):
        self.current = max(self.current - self.decay, self.min)

    def reset(self):
        self.current = self.init

    @staticmethod
    def estimate_after_retract(reqs: list[Req]) -> float:
        decoded = sum(len(r.output_ids) for r in reqs)
        total = sum(r.max_new_tokens for r in reqs)
        return min(1.0, (decoded + RETRACT_DECODE_STEPS * len(reqs)) / (total + 1))


@dataclass
class ScheduleBatch:
    reqs: list[Req]
    forward_mode: str = "extend"  # "extend" or "decode"
    batch_is_full: bool = False

    def is_empty(self) -> bool:
        return not self.reqs

    def filter_batch(self, exclude: Req | None = None) -> bool:
        """Drop finished requests (and `exclude`); True when any left."""
        kept = [r for r in self.reqs if not r.finished() and r is not exclude]
        shrank = len(kept) < len(self.reqs)
        self.reqs = kept
        return shrank


def max_request_len(args: ServerArgs) -> int:
    """The most tokens a request may hold: the context length and the pool, each less one."""
    return min(args.context_length - 1, args.max_total_tokens - 1)


def clipped_new_tokens(max_new_tokens: int, prompt_len: int, max_req_len: int, max_total_num_tokens: int,
                       page_size: int) -> int:
    """A request's max_new_tokens clipped to the context length and the pool as it arrives
    (init_req_max_new_tokens): what it may write at most."""
    clipped = max(0, min(max_new_tokens, max_req_len - prompt_len - 1))
    paged_input = -(-prompt_len // page_size) * page_size
    return max(0, min(clipped, max_total_num_tokens - paged_input - page_size - 1))


class Scheduler:
    def __init__(self, args: ServerArgs):
        self.args = args
        self.page_size = args.page_size
        self.max_total_num_tokens = args.max_total_tokens
        self._set_limits(args)
        self.allocator = make_allocator(args.max_total_tokens, args.page_size)
        self.tree_cache = RadixCache(self.allocator, args.page_size)
        self.policy = self._schedule_policy(args)
        self.new_token_ratio_tracker = NewTokenRatioTracker(args.schedule_conservativeness)
        self.free_rows = args.max_running_requests  # SGLang's ReqToTokenPool rows
        self.waiting_queue: list[Req] = []
        self.queue_entries = 0  # requests queued so far: the clock of each Req's wait_queue_entry_time
        self.running_batch = ScheduleBatch([], "decode")
        self.last_batch: ScheduleBatch | None = None
        self.chunked_req: Req | None = None
        self.retracted: list[Req] = []  # this step's, for the caller
        self.last_adder: PrefillAdder | None = None  # this step's prefill pass, for the caller (its budgets)
        self.prefill_budget: dict | None = None  # this step's pass's budgets at its end (tree_view.prefill_budget)
        self.events: list[Event] = []  # this step's decisions, told as they are taken with the numbers they used

    def apply_args(self, args: ServerArgs):
        """Run the next steps under `args` with the same pool (SGLang sets its ServerArgs once; the app may change
        them between steps): the limits, the chunk, the policy and the reserve's ratio, the tree and queues kept."""
        if (args.max_total_tokens, args.page_size) != (self.max_total_num_tokens, self.page_size):
            raise ValueError("max_total_tokens and page_size size the pool: build a new Scheduler")
        old, self.args = self.args, args
        self.free_rows += args.max_running_requests - old.max_running_requests
        self._set_limits(args)
        if any(getattr(args, name) != getattr(old, name) for name in POLICY_ARGS):
            self.policy = self._schedule_policy(args)
        if args.schedule_conservativeness != old.schedule_conservativeness:
            self.new_token_ratio_tracker = NewTokenRatioTracker(args.schedule_conservativeness)
        for req in {*self.waiting_queue, *self.running_batch.reqs, *(self.last_batch.reqs if self.last_batch else ())}:
            req.eos_token_id = args.eos
            self._set_or_validate_priority(req)  # priority scheduling turned on: a request without one gets one

    def _schedule_policy(self, args: ServerArgs) -> SchedulePolicy:
        return SchedulePolicy(args.schedule_policy, self.tree_cache, args.enable_priority_scheduling,
                              args.schedule_low_priority_values_first)

    def _set_limits(self, args: ServerArgs):
        self.max_req_len = max_request_len(args)
        self.max_req_input_len = self.max_req_len - 5
        self.chunked_prefill_size = args.chunked_prefill_size if args.chunked_prefill_size > 0 else None

    def units(self, slots: list[int]) -> tuple[int, ...]:
        """The KV units (slots, or pages at page_size > 1) of a page-aligned run of slots."""
        page = self.page_size
        return tuple(slots) if page == 1 else tuple(slot // page for slot in slots[::page])

    def _evict_to_free(self, num_tokens: int, trigger: str, rid: int) -> list[Event]:
        """The tree's `evict_to_free`, each leaf it evicts told (LeafEvicted: for what, `trigger`, and whom)."""
        return [LeafEvicted(rid, self.units(slots), tuple(key), trigger)
                for key, slots in self.tree_cache.evict_to_free(num_tokens)]

    # ---------------------------------------------------------------- arrival
    def add_request(self, rid: int, prompt: list[int], max_new_tokens: int, ignore_eos: bool = False,
                    priority: int | None = None) -> Req:
        """Queue a request; max_new_tokens is clipped to the context length and the pool (init_req_max_new_tokens).
        A prompt of max_req_input_len tokens or more is queued too, aborted (`validate_input_length`): its prompt
        replaced by one token, it is prefilled like any request and reported aborted after that step. Under
        priority scheduling one without a priority is the least important (`_set_or_validate_priority`)."""
        if not prompt:
            raise ValueError(f"request {rid}: an empty prompt")
        clipped = clipped_new_tokens(max_new_tokens, len(prompt), self.max_req_len, self.max_total_num_tokens,
                                     self.page_size)
        req = Req(rid, list(prompt), clipped, ignore_eos, self.args.eos, priority)
        if len(prompt) >= self.max_req_input_len:
            req.set_finish_with_abort()
        self._add_request_to_queue(req)
        return req

    def never_admitted(self, req: Req) -> int | None:
        """The slots `req` asks of PrefillAdder with the pool empty (its prompt, its max_new_tokens and a page) when
        they are not below max_total_tokens: NO_TOKEN for good, SGLang would keep it waiting forever; else None."""
        needed = len(req.origin_input_ids) + req.max_new_tokens + self.page_size
        return needed if needed >= self.max_total_num_tokens else None

    def _add_request_to_queue(self, req: Req):
        """Into the waiting queue (an arrival, or a request retracted or preempted), its entry counted: priority
        scheduling's fcfs order and preemption's order among equals read it."""
        self._set_or_validate_priority(req)
        self.queue_entries += 1
        req.wait_queue_entry_time = self.queue_entries
        self.waiting_queue.append(req)

    def _set_or_validate_priority(self, req: Req):
        """Under priority scheduling a request without a priority is the least important: the largest value when
        low values go first, the smallest otherwise."""
        if self.args.enable_priority_scheduling and req.priority is None:
            req.priority = sys.maxsize if self.args.schedule_low_priority_values_first else -sys.maxsize - 1

    # ---------------------------------------------------------------- scheduling
    def get_next_batch_to_run(self) -> ScheduleBatch | None:
        self.retracted, self.last_adder, self.events = [], None, []
        running = self.running_batch
        if self.chunked_req is not None and extend_end_of(self.chunked_req) > self.chunked_req.prefix_len:
            self._checkpoint(self.chunked_req)  # stash_chunked_request
        last = self.last_batch
        if last is not None and last.forward_mode == "extend":
            if last.filter_batch(exclude=self.chunked_req):
                running.batch_is_full = False
            if not last.is_empty():
                if running.is_empty():  # SGLang adopts the prefill batch itself, whose latch is unset
                    running.batch_is_full = False
                running.reqs.extend(last.reqs)
        if running.filter_batch():
            running.batch_is_full = False
        new_batch = self.get_new_batch_prefill()
        if new_batch is not None:
            return new_batch
        if not running.is_empty():
            batch = self.update_running_batch(running)
            return None if batch is None or batch.is_empty() else batch
        return None

    def get_num_allocatable_reqs(self, running_bs: int, num_held_rows: int = 0) -> int:
        return min(self.args.max_running_requests - running_bs, max(self.free_rows + num_held_rows, 0))

    def get_new_batch_prefill(self) -> ScheduleBatch | None:
        self.prefill_budget = None
        running, preemption = self.running_batch, self.args.enable_priority_preemption
        if running.is_empty() or preemption:  # under priority preemption every pass may try to preempt
            running.batch_is_full = False
        if (running.batch_is_full or not self.waiting_queue) and self.chunked_req is None:
            if self.waiting_queue:  # the latch, set when the rows ran out or an earlier NO_TOKEN
                first = self.waiting_queue[0]
                self.events.append(self._rows_taken(first, len(running.reqs))
                                   if self.get_num_allocatable_reqs(len(running.reqs)) <= 0
                                   else Blocked(first.rid, "batch_full", 0, 0))
            return None
        if self.get_num_allocatable_reqs(len(running.reqs)) <= 0 and self.chunked_req is None and not preemption:
            running.batch_is_full = True
            self.events.append(self._rows_taken(self.waiting_queue[0], len(running.reqs)))
            return None
        earliest = min(self.waiting_queue, key=lambda r: r.rid, default=None)
        pass_start = len(self.events)  # the queue's order is told before what its head did (a preemption)
        self.policy.calc_priority(self.waiting_queue)
        adder = PrefillAdder(self.page_size, self.tree_cache, running, self.new_token_ratio_tracker.current,
                             self.args.max_prefill_tokens, self.chunked_prefill_size,
                             self.args.priority_scheduling_preemption_threshold,
                             self.args.schedule_low_priority_values_first, self._preempt)
        self.last_adder = adder
        continuing = self.chunked_req
        if self.chunked_req is not None:
            init_next_round_input(self.chunked_req, None)
            self.chunked_req = adder.add_chunked_req(self.chunked_req)
        # why the pass stopped, as it stopped: (the request it stopped at or None: the next, the event)
        stop: tuple[Req | None, Blocked] | None = None
        for req in self.waiting_queue:
            if adder.budget_state() == AddReqResult.OTHER:
                stop = req, adder.spent(req.rid)
                break
            held = sum(r.holds_kv for r in adder.can_run_list)
            rows_full = len(adder.can_run_list) >= self.get_num_allocatable_reqs(len(running.reqs), held)
            if rows_full:
                running.batch_is_full = True
            if running.batch_is_full and not (preemption and adder.preempt_to_schedule(req)):
                stop = req, (self._rows_taken(req, len(running.reqs) + len(adder.can_run_list)) if rows_full
                             else Blocked(req.rid, "batch_full", 0, 0))
                break
            init_next_round_input(req, self.tree_cache)
            res = adder.add_one_req(req)
            if res != AddReqResult.CONTINUE:
                if res == AddReqResult.NO_TOKEN:
                    running.batch_is_full = bool(adder.can_run_list) or not running.is_empty()
                stop = (req, adder.refused(req.rid)) if req not in adder.can_run_list else (None, adder.spent(-1))
                break
        self.prefill_budget = prefill_budget(adder, self.args.max_prefill_tokens, self.chunked_prefill_size)
        if adder.can_run_list:
            admitted = set(adder.can_run_list)
            self.waiting_queue = [r for r in self.waiting_queue if r not in admitted]
        for req in adder.preempt_list:  # queued again even when the request they made room for was not admitted
            self._add_request_to_queue(req)
        head, blocked = stop or (None, None)
        if blocked is not None and head is None:  # the budget ran out with a request admitted: the next one waits
            head = next((r for r in self.waiting_queue if r not in adder.preempt_list), None)
            blocked = blocked if head is None else replace(blocked, seq_id=head.rid)
        told_blocked: list[Event] = [blocked] if head is not None and blocked is not None else []
        if not adder.can_run_list:
            self.events += told_blocked
            return None
        if adder.new_chunked_req is not None:
            self.chunked_req = adder.new_chunked_req
        if self.chunked_req is not None:
            self.chunked_req.inflight_middle_chunks += 1
        batch = ScheduleBatch(adder.can_run_list, "extend")
        evictions = self._prepare_for_extend(batch)
        ordered, admissions = self._admissions(batch, continuing, earliest)
        self.events[pass_start:pass_start] = ordered
        self.events += admissions + told_blocked + evictions
        return batch

    def _rows_taken(self, req: Req, rows: int) -> Blocked:
        """`req` waits: every row of the running batch is taken or promised (max_running_requests)."""
        return Blocked(req.rid, "max_running_requests", rows + 1, self.args.max_running_requests)

    def _admissions(self, batch: ScheduleBatch, continuing: Req | None, earliest: Req | None
                    ) -> tuple[list[Event], list[Event]]:
        """The extend batch told: the policy's head when its order put it before the earliest arrival; then per
        request its prefix hit, its admission (again, after a retraction or a preemption) and its chunk."""
        ordered: list[Event] = []
        new = [r for r in batch.reqs if r is not continuing]
        if new and earliest is not None and new[0] is not earliest and not earliest.finished():
            head = new[0]
            if (why := self.policy.first_by(head, earliest)) is not None:
                ordered.append(Ordered(head.rid, why, earliest.rid, head.num_matched_prefix_tokens,
                                       head.max_new_tokens))
        events: list[Event] = []
        for req in batch.reqs:
            if req is not continuing:
                if req.prefix_len:
                    events.append(PrefixHit(req.rid, self.units(row_of(req)[:req.prefix_len]), req.prefix_len))
                admitted = AdmittedAfterPreemption if req.sent_back == "preempted" else Admitted
                events.append(admitted(req.rid, req.extend_len, req.prefix_len, req.sent_back is not None))
                req.sent_back = None
            if extend_end_of(req) < len(req.fill_ids):
                events.append(ChunkScheduled(req.rid, req.prefix_len, req.extend_len, len(req.fill_ids)))
        return ordered, events

    def _prepare_for_extend(self, batch: ScheduleBatch) -> list[Event]:
        """Rows for the new requests, then the extend's slots from the free list in batch order (after evicting
        for a new page per request more than the tokens need: SGLang's conservative estimate). The evictions."""
        for req in batch.reqs:
            if not req.holds_kv:
                self.free_rows -= 1
                req.req_to_token = self.tree_cache.path_slots(matched_node(req))[:req.prefix_len]
        num_tokens = sum(r.extend_len for r in batch.reqs)
        evictions = self._evict_to_free(num_tokens + (len(batch.reqs) * self.page_size if self.page_size > 1 else 0),
                                        "extend", batch.reqs[0].rid)
        spans = [(r.prefix_len, extend_end_of(r), row_of(r)[r.prefix_len - 1] if r.prefix_len else -1)
                 for r in batch.reqs]
        for req, slots in zip(batch.reqs, self.allocator.alloc_extend(spans), strict=True):
            row = row_of(req)
            del row[req.prefix_len:]
            row.extend(slots)
            req.kv_committed_len = extend_end_of(req)
            req.is_retracted = False
        return evictions

    def update_running_batch(self, batch: ScheduleBatch) -> ScheduleBatch:
        initial_bs = len(batch.reqs)
        if batch.is_empty():
            batch.batch_is_full = False
            return batch
        fits, evictions = self._check_decode_mem(batch.reqs)
        self.events += evictions
        if not fits:
            needed, free = self._decode_need(batch.reqs), self.allocator.available_size()
            told = self.retract_decode(batch)
            ratio = NewTokenRatioTracker.estimate_after_retract(batch.reqs)
            self.new_token_ratio_tracker.current = ratio
            self.retracted = [item[0] for item in told if type(item) is tuple]
            self.events += [Retracted(item[0].rid, needed, free, ratio, item[1]) if type(item) is tuple else item
                             for item in told]
            for req in self.retracted:
                self._add_request_to_queue(req)
        else:
            self.new_token_ratio_tracker.decay_step()
        if len(batch.reqs) < initial_bs:
            batch.batch_is_full = False
        if batch.is_empty():
            return batch
        self._prepare_for_decode(batch)
        return batch

    def _check_decode_mem(self, reqs: list[Req]) -> tuple[bool, list[Event]]:
        """Whether one more token each fits (a new page for those at a page boundary), after evicting what the
        tree can give; the evictions."""
        num_tokens = self._decode_need(reqs)
        evictions = self._evict_to_free(num_tokens, "decode", reqs[0].rid if reqs else -1)
        return self.allocator.available_size() >= num_tokens, evictions

    def _decode_need(self, reqs: list[Req]) -> int:
        return sum(1 for r in reqs if r.kv_committed_len % self.page_size == 0) * self.page_size

    def retract_decode(self, batch: ScheduleBatch) -> list:
        """Send requests back to the waiting queue until the decode fits, in `_get_decode_retraction_order`; at
        least one stays. The batch keeps SGLang's keep-order. Returns what happened in order: (request, its units
        freed) for each retracted, the events of what its release did (and of the decode checks) after it."""
        order = self._get_decode_retraction_order(batch.reqs)
        told: list = []

        def fits() -> bool:
            fit, evictions = self._check_decode_mem([batch.reqs[i] for i in order])
            told.extend(evictions)
            return fit
        first = True
        while first or not fits():
            if len(order) == 1:
                break
            first = False
            req = batch.reqs[order.pop()]
            freed, after = self.release_req(req, len(order), "retracted")
            told += [(req, freed), *after]
        if len(order) <= 1 and not fits():
            last = batch.reqs[order.pop()]
            last.finished_reason = "abort"  # even alone it cannot decode
            self._release_kv_cache(last, checkpoint=False)
            told.append(Aborted(last.rid, NO_ROOM))
        if len(order) < len(batch.reqs):
            batch.reqs = [batch.reqs[i] for i in order]
        return told

    def _get_decode_retraction_order(self, reqs: list[Req]) -> list[int]:
        """Indices of `reqs`, the one to keep longest first (a retraction takes from the end): most output tokens
        first, then the shortest prompt, then the earlier in the batch; under retraction_policy "priority" the most
        important first, and among equals so."""
        by_priority = self.args.retraction_policy == "priority"
        sign = priority_sign(self.args.schedule_low_priority_values_first)

        def keep_key(req: Req) -> tuple[int, ...]:
            length = len(req.output_ids), -len(req.origin_input_ids)
            return (priority_of(req) * -sign, *length) if by_priority else length
        return sorted(range(len(reqs)), key=lambda i: keep_key(reqs[i]), reverse=True)

    def release_req(self, req: Req, remaining_req_count: int, why: str) -> tuple[tuple[int, ...], list[Event]]:
        """A running request leaves the batch for the waiting queue (`why`: "retracted", or "preempted" by priority):
        its own KV freed (not put in the tree), its lock on its prefix in the tree dropped (the prefix stays
        cached), and the tree evicted for the decode steps of the `remaining_req_count` left. Returns its own units
        freed and the events of the rest (Unlocked, LeafEvicted)."""
        row, protected = row_of(req), req.cache_protected_len
        freed, kept = self.units(row[protected:req.kv_committed_len]), self.units(row[:protected])
        self._release_kv_cache(req, checkpoint=False)
        after: list[Event] = [Unlocked(req.rid, kept)] if kept else []
        after += self._evict_to_free(remaining_req_count * RETRACT_DECODE_STEPS, "release", req.rid)
        req.reset_for_retract()
        req.sent_back = why
        return freed, after

    def _preempt(self, req: Req, remaining_req_count: int, for_req: Req):
        """PrefillAdder's priority preemption released `req` to make room for `for_req` (told)."""
        freed, after = self.release_req(req, remaining_req_count, "preempted")
        self.events += [Preempted(req.rid, for_req.rid, "priority", freed), *after]

    def _prepare_for_decode(self, batch: ScheduleBatch):
        batch.forward_mode = "decode"
        self.events += self._evict_to_free(len(batch.reqs) * self.page_size, "decode", batch.reqs[0].rid)
        spans = [(r.kv_committed_len, row_of(r)[r.kv_committed_len - 1]) for r in batch.reqs]
        for req, slot in zip(batch.reqs, self.allocator.alloc_decode(spans), strict=True):
            row_of(req).append(slot)
            req.kv_committed_len += 1

    # ---------------------------------------------------------------- results
    def process_batch_result(self, batch: ScheduleBatch, next_token_ids: list[int]):
        """Each request's sampled token (none for a chunk that leaves prompt tokens to compute), its finish,
        and the tree: a finished request's KV inserted and its row freed, a prefilled one's prompt inserted."""
        extend = batch.forward_mode == "extend"
        self.allocator.free_group_begin()
        for req, token in zip(batch.reqs, next_token_ids, strict=True):
            if extend and (req.finished() or req.is_retracted):
                continue
            if extend and req.inflight_middle_chunks > 0:
                req.inflight_middle_chunks -= 1
                continue
            req.output_ids.append(token)
            req.update_finish_state()
            if req.finished():
                self._release_kv_cache(req, checkpoint=True)
            elif extend:
                self._checkpoint(req)
        self.allocator.free_group_end()

    def on_idle(self):
        """No batch this step: the ratio starts over once nothing waits or runs."""
        if not self.waiting_queue and self.running_batch.is_empty() and self.chunked_req is None:
            self.new_token_ratio_tracker.reset()

    def step_done(self, batch: ScheduleBatch | None):
        self.last_batch = batch

    # ---------------------------------------------------------------- the tree and the row
    def _checkpoint(self, req: Req):
        """checkpoint_kv_cache: the computed part of a running request enters the tree; its row and lock move
        onto the tree's copy."""
        end = extend_end_of(req)
        self._insert_into_tree(req, end)
        req.prefix_len = end

    def _insert_into_tree(self, req: Req, up_to: int):
        tree = self.tree_cache
        key, row = req.fill_ids[:up_to], row_of(req)
        prefix_len, last_node = tree.insert(key, row[:up_to], req.cache_protected_len)
        prompt = req.origin_input_ids
        page = self.page_size
        if 0 < len(prompt) // page * page < len(key) // page * page:  # split at the prompt's end: the output can
            # then be evicted without it
            tree.insert(prompt, row[:len(prompt)], len(prompt))
        path = tree.path_slots(last_node)
        row[req.cache_protected_len:len(path)] = path[req.cache_protected_len:]
        tree.dec_lock_ref(lock_of(req))
        req.lock = last_node
        tree.inc_lock_ref(last_node)
        req.cache_protected_len = len(path)
        req.last_node = last_node

    def abort_request(self, req: Req, reason: str = "abort", computed: int | None = None):
        """A request ends between steps (SGLang's `abort_request`, or an EOS known a step late): out of the waiting
        queue, its slots freed; with `computed`, its first `computed` tokens (those whose KV was computed) enter
        the tree first. The batches drop it at the next step, as SGLang's filter_batch drops finished requests."""
        if req in self.waiting_queue:
            self.waiting_queue.remove(req)
        if self.chunked_req is req:
            self.chunked_req = None
        req.finished_reason = reason
        if req.holds_kv:
            self._release_kv_cache(req, checkpoint=computed is not None, up_to=computed)

    def _release_kv_cache(self, req: Req, checkpoint: bool, up_to: int | None = None):
        owned = req.kv_committed_len
        if checkpoint:
            req.refresh_fill_ids()
            self._insert_into_tree(req, owned if up_to is None else up_to)
        self.allocator.free(row_of(req)[req.cache_protected_len:owned])
        self.tree_cache.dec_lock_ref(lock_of(req))
        req.lock = None
        req.req_to_token = None
        self.free_rows += 1
