"""A request as SGLang's scheduler holds it (`managers/schedule_batch.py` `Req`), with SGLang's field names."""

from __future__ import annotations

from dataclasses import dataclass, field

from scheduler.sglang.radix_cache import TreeNode

CLIP_MAX_NEW_TOKENS = 4096  # SGLang clips its reserve estimate of a request's future tokens here


@dataclass(eq=False)
class Req:
    rid: int
    origin_input_ids: list[int]
    max_new_tokens: int
    ignore_eos: bool = False
    eos_token_id: int = -1
    priority: int | None = None  # under priority scheduling, set for every request as it is queued
    wait_queue_entry_time: int = 0  # when it last entered the waiting queue (a count of entries, not seconds)
    output_ids: list[int] = field(default_factory=list)
    fill_ids: list[int] = field(default_factory=list)
    prefix_len: int = 0
    extend_end: int | None = None
    num_matched_prefix_tokens: int = 0
    last_node: TreeNode | None = None
    lock: TreeNode | None = None  # the node this request's tree lock is held on
    req_to_token: list[int] | None = None  # the KV slots of its row, once it holds one
    kv_committed_len: int = 0
    cache_protected_len: int = 0  # the row's leading slots that are the tree's
    inflight_middle_chunks: int = 0
    is_retracted: bool = False
    sent_back: str | None = None  # "retracted" or "preempted" (by priority) while it waits to be prefilled again
    finished_reason: str | None = None  # "eos", "length" or "abort"
    to_finish: str | None = None  # "abort": the finish its next result takes (an over-long prompt's stub)

    @property
    def extend_len(self) -> int:
        return extend_end_of(self) - self.prefix_len

    @property
    def holds_kv(self) -> bool:
        return self.req_to_token is not None

    def finished(self) -> bool:
        return self.finished_reason is not None

    def refresh_fill_ids(self):
        self.fill_ids = self.origin_input_ids + self.output_ids

    def set_finish_with_abort(self):
        """SGLang's answer to a prompt over its input limit: the prompt replaced by one token (0) to skip the long
        prefill, the request aborted at its first result."""
        self.origin_input_ids = [0]
        self.to_finish = "abort"

    def update_finish_state(self):
        """A finish set ahead (`to_finish`) first; then EOS (unless ignore_eos) before the length limit, as SGLang
        checks them; an EOS past max_new_tokens (one clipped to 0 at arrival) is a length finish (SGLang's
        `_cap_finished_len_at_max_new_tokens`)."""
        if self.to_finish is not None:
            self.finished_reason, self.to_finish = self.to_finish, None
        elif not self.ignore_eos and self.output_ids[-1] == self.eos_token_id:
            self.finished_reason = "eos" if len(self.output_ids) <= self.max_new_tokens else "length"
        elif len(self.output_ids) >= self.max_new_tokens:
            self.finished_reason = "length"

    def reset_for_retract(self):
        self.prefix_len, self.last_node, self.lock, self.extend_end = 0, None, None, None
        self.cache_protected_len = self.kv_committed_len = self.num_matched_prefix_tokens = 0
        self.inflight_middle_chunks = 0
        self.is_retracted = True


# The fields a request holds for part of its life only (None before and after), read where it holds them

def matched_node(req: Req) -> TreeNode:
    """`last_node`: the tree node its cached prefix ends at, as `match_kv_cache` found it."""
    assert req.last_node is not None, f"request {req.rid} was not matched against the tree"
    return req.last_node


def extend_end_of(req: Req) -> int:
    """`extend_end`: where the prefill pass that admitted it computes up to."""
    assert req.extend_end is not None, f"request {req.rid} was not admitted to a prefill"
    return req.extend_end


def row_of(req: Req) -> list[int]:
    """`req_to_token`: its row's KV slots, held from its first prefill until it is released."""
    assert req.req_to_token is not None, f"request {req.rid} holds no row"
    return req.req_to_token


def lock_of(req: Req) -> TreeNode:
    """`lock`: the node its lock on the tree is held on, taken with its admission and dropped with its row."""
    assert req.lock is not None, f"request {req.rid} holds no lock on the tree"
    return req.lock


def priority_of(req: Req) -> int:
    """`priority`, which priority scheduling gives every request it queues (`_set_or_validate_priority`: the least
    important value where it had none)."""
    assert req.priority is not None, f"request {req.rid} has no priority"
    return req.priority
