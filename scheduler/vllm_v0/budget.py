"""V0's SchedulingBudget and PartialPrefillMetadata (vllm/core/scheduler.py): the tokens and sequences one step may
take, counted per request id once (adding a request twice counts it once, subtracting one never added does
nothing), and, under chunked prefill, how many prefills may be partial at once and how many of them long."""

from __future__ import annotations


class SchedulingBudget:
    """`num_batched_tokens` counts the uncached tokens scheduled, `num_cached_tokens` the prefix-cache hits (they
    cost no budget), `num_curr_seqs` the sequences running this step."""
    __slots__ = ("token_budget", "max_num_seqs", "_token_ids", "_seq_ids", "num_batched_tokens",
                 "num_cached_tokens", "num_curr_seqs")

    def __init__(self, token_budget: int, max_num_seqs: int):
        self.token_budget, self.max_num_seqs = token_budget, max_num_seqs
        self._token_ids: set[int] = set()
        self._seq_ids: set[int] = set()
        self.num_batched_tokens = self.num_cached_tokens = self.num_curr_seqs = 0

    def can_schedule(self, num_new_tokens: int, num_new_seqs: int) -> bool:
        return (self.num_batched_tokens + num_new_tokens <= self.token_budget
                and self.num_curr_seqs + num_new_seqs <= self.max_num_seqs)

    def remaining_token_budget(self) -> int:
        return self.token_budget - self.num_batched_tokens

    def add_num_batched_tokens(self, request_id: int, num_batched_tokens: int, num_cached_tokens: int = 0):
        if request_id not in self._token_ids:
            self._token_ids.add(request_id)
            self.num_batched_tokens += num_batched_tokens
            self.num_cached_tokens += num_cached_tokens

    def subtract_num_batched_tokens(self, request_id: int, num_batched_tokens: int):
        if request_id in self._token_ids:
            self._token_ids.remove(request_id)
            self.num_batched_tokens -= num_batched_tokens

    def add_num_seqs(self, request_id: int, num_seqs: int):
        if request_id not in self._seq_ids:
            self._seq_ids.add(request_id)
            self.num_curr_seqs += num_seqs

    def subtract_num_seqs(self, request_id: int, num_seqs: int):
        if request_id in self._seq_ids:
            self._seq_ids.remove(request_id)
            self.num_curr_seqs -= num_seqs


class PartialPrefillMetadata:
    """Chunked prefill's partial prefills this step: `schedulable_prefills` (the running prefills plus the waiting
    ones that could join, at most max_num_partial_prefills: the budget is split between them) and
    `long_prefills` (prefills of more than long_prefill_token_threshold tokens, at most max_long_partial_prefills
    when several may be partial)."""
    __slots__ = ("schedulable_prefills", "long_prefills", "threshold", "max_long", "max_partial")

    def __init__(self, running, waiting, threshold: int, max_partial: int, max_long: int):
        self.threshold, self.max_partial, self.max_long = threshold, max_partial, max_long
        prefills = long_prefills = waiting_long = 0
        for group in running:
            if group.is_prefill:
                prefills += 1
                if group.num_new_tokens > threshold:
                    long_prefills += 1
        for group in waiting:
            if prefills >= max_partial:
                break
            if group.num_new_tokens > threshold:
                if long_prefills + waiting_long >= max_long:
                    continue
                waiting_long += 1
            prefills += 1
        self.schedulable_prefills = min(prefills, max_partial)
        self.long_prefills = long_prefills

    def can_schedule(self, group) -> bool:
        """A long prefill waits while max_long_partial_prefills long ones run (only with several partial)."""
        return not (group.num_new_tokens > self.threshold and self.long_prefills >= self.max_long
                    and self.max_partial > 1)

    def maybe_increment_partial_prefills(self, group):
        if group.num_new_tokens > self.threshold:
            self.long_prefills += 1
