"""The SGLang twin: SGLang 0.5.23's `Scheduler` (`managers/scheduler.py`) step by step, without a model or a GPU,
under SGLang's names. Overlap scheduling, mixed chunks, priorities and the random policy are left out.

One step, as `event_loop_normal` runs it:
- `get_next_batch_to_run`: the last prefill batch joins the running batch (the request still being chunked
  stays out and its computed part enters the tree), finished requests leave, then a prefill batch from
  `get_new_batch_prefill` if it admits anything, else a decode of the running batch (`update_running_batch`);
- the model (the caller's), then `process_batch_result`: each request's token, its finish (EOS, max_new_tokens,
  or the context length, by which max_new_tokens was clipped at arrival), the tree insert of its KV.
Memory pressure is met by retraction (`retract_decode`): requests leave the decode batch for the waiting queue,
their slots freed, and `new_token_ratio` jumps; it decays again by one step per decode."""

from __future__ import annotations

from dataclasses import dataclass

from scheduler.sglang.allocator import make_allocator
from scheduler.sglang.radix_cache import RadixCache
from scheduler.sglang.req import Req
from scheduler.sglang.schedule_policy import AddReqResult, PrefillAdder, SchedulePolicy, init_next_round_input

RETRACT_DECODE_STEPS = 20  # SGLANG_RETRACT_DECODE_STEPS: decode steps of room a retraction aims to leave
INIT_NEW_TOKEN_RATIO, MIN_NEW_TOKEN_RATIO_FACTOR, NEW_TOKEN_RATIO_DECAY_STEPS = 0.7, 0.14, 600


@dataclass(frozen=True)
class ServerArgs:
    """The settings the twin honours, under `python -m sglang.launch_server`'s names."""
    max_total_tokens: int = 256
    page_size: int = 1
    chunked_prefill_size: int = -1  # -1 (or 0): no chunking
    max_prefill_tokens: int = 16384
    max_running_requests: int = 8
    schedule_policy: str = "lpm"
    schedule_conservativeness: float = 1.0
    context_length: int = 8192
    eos: int = -1

    def __post_init__(self):
        for name in ("max_total_tokens", "page_size", "max_prefill_tokens", "max_running_requests", "context_length"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")


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


class Scheduler:
    def __init__(self, args: ServerArgs):
        self.args = args
        self.page_size = args.page_size
        self.max_total_num_tokens = args.max_total_tokens
        self._set_limits(args)
        self.allocator = make_allocator(args.max_total_tokens, args.page_size)
        self.tree_cache = RadixCache(self.allocator, args.page_size)
        self.policy = SchedulePolicy(args.schedule_policy, self.tree_cache)
        self.new_token_ratio_tracker = NewTokenRatioTracker(args.schedule_conservativeness)
        self.free_rows = args.max_running_requests  # SGLang's ReqToTokenPool rows
        self.waiting_queue: list[Req] = []
        self.running_batch = ScheduleBatch([], "decode")
        self.last_batch: ScheduleBatch | None = None
        self.chunked_req: Req | None = None
        self.retracted: list[Req] = []  # this step's, for the caller
        self.last_adder: PrefillAdder | None = None  # this step's prefill pass, for the caller (its budgets)
        self.decode_mem: tuple[int, int] | None = None  # this step's failed decode check: (slots needed, free)

    def apply_args(self, args: ServerArgs):
        """Run the next steps under `args` with the same pool (SGLang sets its ServerArgs once; the app may change
        them between steps): the limits, the chunk, the policy and the reserve's ratio, the tree and queues kept."""
        if (args.max_total_tokens, args.page_size) != (self.max_total_num_tokens, self.page_size):
            raise ValueError("max_total_tokens and page_size size the pool: build a new Scheduler")
        old, self.args = self.args, args
        self.free_rows += args.max_running_requests - old.max_running_requests
        self._set_limits(args)
        if args.schedule_policy != old.schedule_policy:
            self.policy = SchedulePolicy(args.schedule_policy, self.tree_cache)
        if args.schedule_conservativeness != old.schedule_conservativeness:
            self.new_token_ratio_tracker = NewTokenRatioTracker(args.schedule_conservativeness)
        for req in {*self.waiting_queue, *self.running_batch.reqs, *(self.last_batch.reqs if self.last_batch else ())}:
            req.eos_token_id = args.eos

    def _set_limits(self, args: ServerArgs):
        self.max_req_len = min(args.context_length - 1, args.max_total_tokens - 1)
        self.max_req_input_len = self.max_req_len - 5
        self.chunked_prefill_size = args.chunked_prefill_size if args.chunked_prefill_size > 0 else None

    # ---------------------------------------------------------------- arrival
    def add_request(self, rid: int, prompt: list[int], max_new_tokens: int, ignore_eos: bool = False) -> Req:
        """Queue a request; max_new_tokens is clipped to the context length and the pool (init_req_max_new_tokens)."""
        if not 0 < len(prompt) < self.max_req_input_len:
            raise ValueError(f"request {rid}: a prompt of {len(prompt)} tokens; SGLang takes 1 to "
                             f"{self.max_req_input_len - 1} here")
        clipped = max(0, min(max_new_tokens, self.max_req_len - len(prompt) - 1))
        paged_input = -(-len(prompt) // self.page_size) * self.page_size
        clipped = max(0, min(clipped, self.max_total_num_tokens - paged_input - self.page_size - 1))
        req = Req(rid, list(prompt), clipped, ignore_eos, self.args.eos)
        self.waiting_queue.append(req)
        return req

    # ---------------------------------------------------------------- scheduling
    def get_next_batch_to_run(self) -> ScheduleBatch | None:
        self.retracted, self.last_adder, self.decode_mem = [], None, None
        running = self.running_batch
        if self.chunked_req is not None and self.chunked_req.extend_end > self.chunked_req.prefix_len:
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
        running = self.running_batch
        if running.is_empty():
            running.batch_is_full = False
        if (running.batch_is_full or not self.waiting_queue) and self.chunked_req is None:
            return None
        if self.get_num_allocatable_reqs(len(running.reqs)) <= 0 and self.chunked_req is None:
            running.batch_is_full = True
            return None
        self.policy.calc_priority(self.waiting_queue)
        adder = PrefillAdder(self.page_size, self.tree_cache, running.reqs, self.new_token_ratio_tracker.current,
                             self.args.max_prefill_tokens, self.chunked_prefill_size)
        self.last_adder = adder
        if self.chunked_req is not None:
            init_next_round_input(self.chunked_req, None)
            self.chunked_req = adder.add_chunked_req(self.chunked_req)
        for req in self.waiting_queue:
            if adder.budget_state() == AddReqResult.OTHER:
                break
            held = sum(r.holds_kv for r in adder.can_run_list)
            if len(adder.can_run_list) >= self.get_num_allocatable_reqs(len(running.reqs), held):
                running.batch_is_full = True
            if running.batch_is_full:
                break
            init_next_round_input(req, self.tree_cache)
            res = adder.add_one_req(req)
            if res != AddReqResult.CONTINUE:
                if res == AddReqResult.NO_TOKEN:
                    running.batch_is_full = bool(adder.can_run_list) or not running.is_empty()
                break
        if not adder.can_run_list:
            return None
        admitted = set(adder.can_run_list)
        self.waiting_queue = [r for r in self.waiting_queue if r not in admitted]
        if adder.new_chunked_req is not None:
            self.chunked_req = adder.new_chunked_req
        if self.chunked_req is not None:
            self.chunked_req.inflight_middle_chunks += 1
        batch = ScheduleBatch(adder.can_run_list, "extend")
        self._prepare_for_extend(batch)
        return batch

    def _prepare_for_extend(self, batch: ScheduleBatch):
        """Rows for the new requests, then the extend's slots from the free list in batch order (after evicting
        for a new page per request more than the tokens need: SGLang's conservative estimate)."""
        for req in batch.reqs:
            if not req.holds_kv:
                self.free_rows -= 1
                req.req_to_token = self.tree_cache.path_slots(req.last_node)[:req.prefix_len]
        num_tokens = sum(r.extend_len for r in batch.reqs)
        self.tree_cache.evict_to_free(num_tokens + (len(batch.reqs) * self.page_size if self.page_size > 1 else 0))
        spans = [(r.prefix_len, r.extend_end, r.req_to_token[r.prefix_len - 1] if r.prefix_len else -1)
                 for r in batch.reqs]
        for req, slots in zip(batch.reqs, self.allocator.alloc_extend(spans), strict=True):
            del req.req_to_token[req.prefix_len:]
            req.req_to_token.extend(slots)
            req.kv_committed_len = req.extend_end
            req.is_retracted = False

    def update_running_batch(self, batch: ScheduleBatch) -> ScheduleBatch:
        initial_bs = len(batch.reqs)
        if batch.is_empty():
            batch.batch_is_full = False
            return batch
        if not self._check_decode_mem(batch.reqs):
            self.decode_mem = self._decode_need(batch.reqs), self.allocator.available_size()
            retracted = self.retract_decode(batch)
            self.new_token_ratio_tracker.current = NewTokenRatioTracker.estimate_after_retract(batch.reqs)
            self.retracted = retracted
            self.waiting_queue.extend(retracted)
        else:
            self.new_token_ratio_tracker.decay_step()
        if len(batch.reqs) < initial_bs:
            batch.batch_is_full = False
        if batch.is_empty():
            return batch
        self._prepare_for_decode(batch)
        return batch

    def _check_decode_mem(self, reqs: list[Req]) -> bool:
        """Whether one more token each fits (a new page for those at a page boundary), after evicting what the
        tree can give."""
        num_tokens = self._decode_need(reqs)
        self.tree_cache.evict_to_free(num_tokens)
        return self.allocator.available_size() >= num_tokens

    def _decode_need(self, reqs: list[Req]) -> int:
        return sum(1 for r in reqs if r.kv_committed_len % self.page_size == 0) * self.page_size

    def retract_decode(self, batch: ScheduleBatch) -> list[Req]:
        """Send requests back to the waiting queue until the decode fits, fewest output tokens first (then the
        longest prompt, then the later in the batch); at least one stays. The batch keeps SGLang's keep-order."""
        order = sorted(range(len(batch.reqs)), key=lambda i: (len(batch.reqs[i].output_ids),
                                                              -len(batch.reqs[i].origin_input_ids)), reverse=True)
        retracted, first = [], True
        while first or not self._check_decode_mem([batch.reqs[i] for i in order]):
            if len(order) == 1:
                break
            first = False
            req = batch.reqs[order.pop()]
            self._release_kv_cache(req, checkpoint=False)
            self.tree_cache.evict_to_free(len(order) * RETRACT_DECODE_STEPS)
            req.reset_for_retract()
            retracted.append(req)
        if len(order) <= 1 and not self._check_decode_mem([batch.reqs[i] for i in order]):
            last = batch.reqs[order.pop()]
            last.finished_reason = "abort"  # even alone it cannot decode
            self._release_kv_cache(last, checkpoint=False)
        if len(order) < len(batch.reqs):
            batch.reqs = [batch.reqs[i] for i in order]
        return retracted

    def _prepare_for_decode(self, batch: ScheduleBatch):
        batch.forward_mode = "decode"
        self.tree_cache.evict_to_free(len(batch.reqs) * self.page_size)
        spans = [(r.kv_committed_len, r.req_to_token[r.kv_committed_len - 1]) for r in batch.reqs]
        for req, slot in zip(batch.reqs, self.allocator.alloc_decode(spans), strict=True):
            req.req_to_token.append(slot)
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
        self._insert_into_tree(req, req.extend_end)
        req.prefix_len = req.extend_end

    def _insert_into_tree(self, req: Req, up_to: int):
        tree = self.tree_cache
        key, row = req.fill_ids[:up_to], req.req_to_token
        prefix_len, last_node = tree.insert(key, row[:up_to], req.cache_protected_len)
        prompt = req.origin_input_ids
        page = self.page_size
        if 0 < len(prompt) // page * page < len(key) // page * page:  # split at the prompt's end: the output can
            # then be evicted without it
            tree.insert(prompt, row[:len(prompt)], len(prompt))
        path = tree.path_slots(last_node)
        row[req.cache_protected_len:len(path)] = path[req.cache_protected_len:]
        tree.dec_lock_ref(req.lock)
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
        self.allocator.free(req.req_to_token[req.cache_protected_len:owned])
        self.tree_cache.dec_lock_ref(req.lock)
        req.lock = None
        req.req_to_token = None
        self.free_rows += 1
