"""SGLang's waiting-queue order and prefill admission (`managers/schedule_policy.py`): `SchedulePolicy.calc_priority`
for lpm, dfs-weight, fcfs and lof (SGLang's "random" shuffles with the process's random state, so it is left out),
fcfs and lof by priority first under priority scheduling, and `PrefillAdder` with the `new_token_ratio` reserve of
the running requests' future tokens and, under priority scheduling, `preempt_to_schedule`."""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum, auto
from typing import TYPE_CHECKING

from scheduler.events import BudgetBlocked
from scheduler.sglang.radix_cache import RadixCache
from scheduler.sglang.req import CLIP_MAX_NEW_TOKENS, Req, matched_node, priority_of

if TYPE_CHECKING:
    from scheduler.sglang.scheduler import ScheduleBatch

SCHEDULE_POLICIES = ("lpm", "dfs-weight", "fcfs", "lof")
CACHE_AWARE = ("lpm", "dfs-weight")
WAITING_QUEUE_PREFIX_MATCH_MAX = 128  # past this many waiting, lpm falls back to fcfs
WAITING_PREFIX_REFRESH_INTERVAL = 32  # fcfs and lof touch the waiting prefixes every this many passes
IN_BATCH_PREFIX_CACHING_CHECK_THRESHOLD = 32
IN_BATCH_PREFIX_CACHING_DEPRIORITIZE_THRESHOLD = 32


def match_kv_cache(req: Req, tree: RadixCache, token_ids: list[int], limit: int | None = None):
    """Adopt the tree's longest cached prefix of `token_ids` as the request's prefix."""
    req.prefix_len, req.last_node = tree.match_prefix(token_ids, limit)
    req.num_matched_prefix_tokens = min(req.prefix_len, max(len(token_ids) - 1, 0))


def init_next_round_input(req: Req, tree: RadixCache | None):
    """The request's fill ids, and (with the tree) its cached prefix: at most all but the last token."""
    req.refresh_fill_ids()
    if tree is not None:
        match_kv_cache(req, tree, req.fill_ids, max(len(req.fill_ids) - 1, 0))
        req.cache_protected_len = req.prefix_len


class _WaitingPrefixes:
    """The prompts already seen in this pass (SGLang's simulated `waiting_queue_radix_tree`), to find requests
    sharing a long prefix with another waiting one."""

    def __init__(self):
        self.prompts: list[list[int]] = []

    def longest_match(self, ids: list[int]) -> int:
        best = 0
        for prompt in self.prompts:
            n = min(len(prompt), len(ids))
            i = 0
            while i < n and prompt[i] == ids[i]:
                i += 1
            best = max(best, i)
        return best


def priority_sign(schedule_low_priority_values_first: bool) -> int:
    """The sign that makes a smaller `priority x sign` the more important: 1 when low values go first, -1 when
    high values do (SGLang's default)."""
    return 1 if schedule_low_priority_values_first else -1


class SchedulePolicy:
    def __init__(self, policy: str, tree: RadixCache, enable_priority_scheduling: bool = False,
                 schedule_low_priority_values_first: bool = False):
        if policy not in SCHEDULE_POLICIES:
            raise ValueError(f"schedule_policy={policy!r}: use one of {SCHEDULE_POLICIES}")
        self.policy, self.tree = policy, tree
        self.enable_priority_scheduling = enable_priority_scheduling
        self.priority_sign = priority_sign(schedule_low_priority_values_first)
        self.waiting_prefix_refresh_calls = 0
        self.applied = policy  # the policy the last calc_priority sorted by (lpm falls back to fcfs)
        self.deprioritized: set[int] = set()  # lpm's requests put last in the last calc_priority

    def _priority_key(self, req: Req) -> int:
        """Priority scheduling's key: the more important first."""
        return priority_of(req) * self.priority_sign

    def _policy_key(self, req: Req) -> float:
        """The key of the policy applied (lpm: the longest cached prefix, those deprioritised last; lof: the longest
        output budget); 0 for fcfs, which keeps the queue's order."""
        if self.applied == "lpm":
            return float("inf") if req.rid in self.deprioritized else -req.num_matched_prefix_tokens
        return -req.max_new_tokens if self.applied == "lof" else 0

    def calc_priority(self, waiting_queue: list[Req]):
        """Sort `waiting_queue` in place by the policy (stable, as SGLang's sorts are). Under priority scheduling
        (fcfs or lof only: SGLang refuses it with the others) the priority comes first, then for fcfs the entry
        into the queue, for lof the longest output."""
        policy = self.policy
        if policy == "lpm" and len(waiting_queue) > WAITING_QUEUE_PREFIX_MATCH_MAX:
            policy = "fcfs"
        self.applied, self.deprioritized = policy, set()
        if self.policy == "fcfs" and self.enable_priority_scheduling:
            waiting_queue.sort(key=lambda r: (self._priority_key(r), r.wait_queue_entry_time))
        if policy in CACHE_AWARE:
            self.deprioritized = self._compute_prefix_matches(waiting_queue)
            if policy == "lpm":
                waiting_queue.sort(key=self._policy_key)
            else:
                order = self.tree.dfs_weight_order([matched_node(r) for r in waiting_queue])
                waiting_queue[:] = [waiting_queue[i] for i in order]
            return
        if policy == "lof" and self.enable_priority_scheduling:
            waiting_queue.sort(key=lambda r: (self._priority_key(r), self._policy_key(r)))
        elif policy == "lof":
            waiting_queue.sort(key=self._policy_key)
        self._touch_waiting_prefixes(waiting_queue)

    def first_by(self, head: Req, other: Req) -> str | None:
        """Which part of the last calc_priority's order put `head` before `other`: "priority" (priority
        scheduling), the policy's key ("lpm", "lof"), "dfs-weight" (the tree's order); None when they tie on
        them all (the queue's order kept)."""
        if self.enable_priority_scheduling and self._priority_key(head) != self._priority_key(other):
            return "priority" if self._priority_key(head) < self._priority_key(other) else None
        if self.applied == "dfs-weight":
            return "dfs-weight"
        return self.applied if self._policy_key(head) < self._policy_key(other) else None

    def _compute_prefix_matches(self, waiting_queue: list[Req]) -> set[int]:
        """Match every waiting request against the tree; of those with a short cached prefix that share 32+
        tokens with one seen before them, all but the first are put last this pass (in-batch prefix caching)."""
        deprioritized, seen = set(), _WaitingPrefixes()
        for r in waiting_queue:
            prefix_ids = r.origin_input_ids + r.output_ids
            match_kv_cache(r, self.tree, prefix_ids)
            if r.prefix_len <= IN_BATCH_PREFIX_CACHING_CHECK_THRESHOLD:
                if seen.longest_match(prefix_ids) >= IN_BATCH_PREFIX_CACHING_DEPRIORITIZE_THRESHOLD:
                    deprioritized.add(r.rid)
                else:
                    seen.prompts.append(prefix_ids)
        return deprioritized

    def _touch_waiting_prefixes(self, waiting_queue: list[Req]):
        """Cache-agnostic policies refresh the LRU recency of the waiting requests' cached prefixes every 32nd
        pass, the head last (so it is the most recent)."""
        if not waiting_queue:
            return
        refresh = self.waiting_prefix_refresh_calls % WAITING_PREFIX_REFRESH_INTERVAL == 0
        self.waiting_prefix_refresh_calls += 1
        if refresh:
            for r in reversed(waiting_queue[:WAITING_QUEUE_PREFIX_MATCH_MAX]):
                self.tree.match_prefix(r.origin_input_ids + r.output_ids)


class AddReqResult(Enum):
    CONTINUE = auto()  # room for more
    NO_TOKEN = auto()  # the KV budget is spent
    OTHER = auto()  # the input or chunk budget is spent


class PrefillAdder:
    """One prefill pass's budgets: KV slots (free + evictable, less the reserve `total_offset` for the running
    requests' future tokens at `new_token_ratio` and for what this pass admits), the input tokens
    (`max_prefill_tokens`) and the chunk (`chunked_prefill_size`). Under priority preemption it may release
    running requests of the `running_batch` (`release_req`: their KV freed, as a retraction frees it)."""

    def __init__(self, page_size: int, tree: RadixCache, running_batch: ScheduleBatch, new_token_ratio: float,
                 rem_input_tokens: int, rem_chunk_tokens: int | None, priority_scheduling_preemption_threshold: int,
                 schedule_low_priority_values_first: bool, release_req: Callable[[Req, int, Req], None]):
        self.page_size, self.tree, self.new_token_ratio = page_size, tree, new_token_ratio
        self.running_batch = running_batch
        self.rem_input_tokens, self.rem_chunk_tokens = rem_input_tokens, rem_chunk_tokens
        self.priority_scheduling_preemption_threshold = priority_scheduling_preemption_threshold
        self.priority_sign = priority_sign(schedule_low_priority_values_first)
        self.release_req = release_req
        self.can_run_list: list[Req] = []
        self.preemptions: list[tuple[Req, Req]] = []  # (the preempted request, the one it made room for)
        self.new_chunked_req: Req | None = None
        self.total_offset: float = 0  # the running requests' part is fractional (at new_token_ratio)
        self.current_offset = 0
        for r in running_batch.reqs:
            self.total_offset += self._get_running_request_total_token_offset(r)
        self.running_reserve = self.total_offset  # the running requests' part of total_offset (less the preempted)
        self.refusal: tuple[AddReqResult, int, float, int] | None = None  # (result, needed, left, prefix locked)

    def refused(self, rid: int) -> BudgetBlocked:
        """The request `rid` refused by its last `add_one_req`, with the numbers that refused it."""
        assert self.refusal is not None, "refused() before add_one_req refused"
        result, needed, left, locked = self.refusal
        return BudgetBlocked(rid, "no_token" if result is AddReqResult.NO_TOKEN else "other", needed, round(left, 2),
                             self.running_reserve, self.new_token_ratio, locked)

    def spent(self, rid: int) -> BudgetBlocked:
        """`rid` waits because this pass spent a budget (`budget_state`): the KV slots left (NO_TOKEN), else the
        input or chunk tokens left (OTHER), as they stand now."""
        if self.budget_state() is AddReqResult.NO_TOKEN:
            return BudgetBlocked(rid, "no_token", 0, round(self.rem_total_tokens, 2),
                                 self.running_reserve, self.new_token_ratio)
        left = self.rem_input_tokens if self.rem_input_tokens <= 0 else self.rem_chunk_tokens
        assert left is not None  # OTHER: the input tokens are spent, else the chunk's
        return BudgetBlocked(rid, "other", 0, left, self.running_reserve, self.new_token_ratio)

    @property
    def preempt_list(self) -> list[Req]:
        return [preempted for preempted, _ in self.preemptions]

    def _get_running_request_total_token_offset(self, req: Req) -> float:
        """The slots kept for a running request's future tokens: its remaining max_new_tokens at new_token_ratio
        (all of them when it ignores EOS)."""
        ratio = 1.0 if req.ignore_eos else self.new_token_ratio
        return min(req.max_new_tokens - len(req.output_ids), CLIP_MAX_NEW_TOKENS) * ratio

    def _available_and_evictable(self) -> int:
        return self.tree.allocator.available_size() + self.tree.evictable_size()

    @property
    def rem_total_tokens(self):
        return self._available_and_evictable() - self.total_offset

    @property
    def cur_rem_tokens(self):
        return self._available_and_evictable() - self.current_offset

    def ceil_paged_tokens(self, tokens: int) -> int:
        return -(-tokens // self.page_size) * self.page_size

    def budget_state(self) -> AddReqResult:
        if not (self.rem_total_tokens > 0 and self.cur_rem_tokens > 0):
            return AddReqResult.NO_TOKEN
        if self.rem_input_tokens <= 0 or (self.rem_chunk_tokens is not None and self.rem_chunk_tokens <= 0):
            return AddReqResult.OTHER
        return AddReqResult.CONTINUE

    def _update_prefill_budget(self, extend_input_len: int, max_new_tokens: int):
        extend_input_len = self.ceil_paged_tokens(extend_input_len)
        self.total_offset += extend_input_len + self.page_size + max_new_tokens
        self.current_offset += extend_input_len + self.page_size
        self.rem_input_tokens -= extend_input_len
        if self.rem_chunk_tokens is not None:
            self.rem_chunk_tokens -= extend_input_len

    def add_chunked_req(self, req: Req) -> Req | None:
        """The next chunk of the request being prefilled in chunks; returns it while chunks remain."""
        rem_chunk = self.rem_chunk_tokens
        assert rem_chunk is not None  # a request is prefilled in chunks only where there is a chunk
        rem_tokens = min(rem_chunk, int(self.rem_total_tokens))
        if rem_tokens <= 0:
            rem_tokens = rem_chunk  # a continuing chunk must make progress to free its KV
        extend_input_len = len(req.fill_ids) - req.prefix_len
        truncated = extend_input_len > rem_tokens
        req.extend_end = req.prefix_len + min(extend_input_len, rem_tokens)
        self.can_run_list.append(req)
        self._update_prefill_budget(req.extend_len, 0 if truncated else min(req.max_new_tokens, CLIP_MAX_NEW_TOKENS))
        return req if truncated else None

    def add_one_req(self, req: Req) -> AddReqResult:
        max_new = min(max(req.max_new_tokens - len(req.output_ids), 0), CLIP_MAX_NEW_TOKENS)
        extend_len = len(req.fill_ids) - req.prefix_len
        total_tokens = extend_len + max_new + self.page_size
        evictable = self.tree.evictable_size()
        last_node = matched_node(req)
        self.tree.inc_lock_ref(last_node)  # the prefix, pinned while the request is judged, is not evictable
        locked = evictable - self.tree.evictable_size()
        try:
            if total_tokens >= self.rem_total_tokens:
                self.refusal = (AddReqResult.NO_TOKEN, total_tokens, self.rem_total_tokens, locked)
                return AddReqResult.NO_TOKEN
            input_tokens = self.ceil_paged_tokens(extend_len)
            if self.rem_chunk_tokens is None and self.can_run_list and input_tokens >= self.rem_input_tokens:
                self.refusal = (AddReqResult.OTHER, input_tokens, self.rem_input_tokens, 0)
                return AddReqResult.OTHER
            admitted_max_new = min(req.max_new_tokens, CLIP_MAX_NEW_TOKENS)
            chunked = self.rem_chunk_tokens is not None and input_tokens > self.rem_chunk_tokens
            if chunked:
                assert self.rem_chunk_tokens is not None  # chunked: there is a chunk budget, and the input is past it
                end = (req.prefix_len + self.rem_chunk_tokens // self.page_size * self.page_size) \
                    // self.page_size * self.page_size
                extend_len = end - req.prefix_len
                if extend_len <= 0:
                    self.refusal = (AddReqResult.OTHER, input_tokens, self.rem_chunk_tokens, 0)
                    return AddReqResult.OTHER
                admitted_max_new = 0
            req.extend_end = req.prefix_len + extend_len
            req.lock = last_node
            self.tree.inc_lock_ref(last_node)
            self.can_run_list.append(req)
            if chunked:
                self.new_chunked_req = req
            self._update_prefill_budget(extend_len, admitted_max_new)
        finally:
            self.tree.dec_lock_ref(last_node)
        return self.budget_state()

    def preempt_to_schedule(self, req: Req) -> bool:
        """Make room for `req` in a full batch: running requests whose priority is lower than its by more than
        the threshold, the least important first (then the latest queued), until their reserves cover the slots
        `req` lacks (its fill ids past its prefix and its max_new_tokens, against what the pass has left; both as
        `req` was last judged: a request not judged yet counts no fill ids). True when that is met: they are
        released now, their KV freed, and queued again after this pass."""
        sign = self.priority_sign
        candidates = sorted(self.running_batch.reqs, key=lambda r: (priority_of(r) * -sign, -r.wait_queue_entry_time))
        preemptible = []
        min_tokens_to_remove = (len(req.fill_ids) - req.prefix_len + min(req.max_new_tokens, CLIP_MAX_NEW_TOKENS)
                                - self.rem_total_tokens)
        for running_req in candidates:
            if (priority_of(req) - priority_of(running_req)) * -sign <= self.priority_scheduling_preemption_threshold:
                break
            preemptible.append(running_req)
            min_tokens_to_remove -= self._get_running_request_total_token_offset(running_req)
            if min_tokens_to_remove <= 0:
                break
        if not preemptible or min_tokens_to_remove > 0:
            return False
        batch = self.running_batch
        for released, running_req in enumerate([r for r in batch.reqs if r in preemptible], 1):
            self.total_offset -= self._get_running_request_total_token_offset(running_req)
            self.running_reserve -= self._get_running_request_total_token_offset(running_req)
            self.release_req(running_req, len(batch.reqs) - released, req)
        batch.reqs = [r for r in batch.reqs if r not in preemptible]
        self.preemptions += [(preempted, req) for preempted in preemptible]
        return True
