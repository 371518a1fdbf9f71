"""The step as vLLM's `Scheduler.schedule()` hands it to the model runner (vLLM's `sched/output.py`
SchedulerOutput), and the counters vLLM keeps per request and logs: the record a scheduler may keep of each step
(its panel `OUTPUT_PANEL`, scheduler/contract.py `PanelKind`), which the vLLM twin reads off itself right after
schedule(): what a vLLM learner compares with vLLM's own debug output. The tokens scheduled per request and the draft
tokens are the step's batch (engine/run/frame.py BatchView), in the same order as vLLM's num_scheduled_tokens."""

from __future__ import annotations

from dataclasses import dataclass, fields

from scheduler.contract import PanelKind

NOT_SCHEDULED_YET = -1  # vLLM's num_cached_tokens before the request was first scheduled


@dataclass(frozen=True, slots=True)
class RequestCounters:
    """One waiting or running request as vLLM's Request counts it once schedule() returned: num_computed_tokens
    already holds this step's scheduled tokens (vLLM advances it as it schedules), num_tokens its known tokens
    (prompt and output), num_cached_tokens the prefix-cache hits of its first scheduling (-1 before it)."""
    req_id: int
    num_computed_tokens: int
    num_tokens: int
    num_cached_tokens: int


@dataclass(frozen=True, slots=True)
class SchedulerOutput:
    """`new_req_ids`: scheduled_new_reqs (scheduled for the first time); `resumed_req_ids` and `running_req_ids`:
    scheduled_cached_reqs, resumed from a preemption or running on; `new_block_ids`: (request, the block ids it
    got this step: its whole table for a new or resumed one); `preempted_req_ids`; `finished_req_ids`: those that
    finished since the previous schedule() (vLLM tells the workers to drop them); `requests`: the counters of
    every request waiting or running; `prefix_cache_queries` / `prefix_cache_hits`: vLLM's prefix-cache counters so
    far, in tokens, of requests never preempted (its log's hit rate is their ratio), `preempted_queries` /
    `preempted_hits` those of preempted requests looking themselves up again (vLLM counts them apart)."""
    new_req_ids: tuple[int, ...]
    resumed_req_ids: tuple[int, ...]
    running_req_ids: tuple[int, ...]
    new_block_ids: tuple[tuple[int, tuple[int, ...]], ...]
    preempted_req_ids: tuple[int, ...]
    finished_req_ids: tuple[int, ...]
    requests: tuple[RequestCounters, ...]
    prefix_cache_queries: int
    prefix_cache_hits: int
    preempted_queries: int
    preempted_hits: int

    def to_dict(self) -> dict:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["new_block_ids"] = [[rid, list(ids)] for rid, ids in self.new_block_ids]
        data["requests"] = [[r.req_id, r.num_computed_tokens, r.num_tokens, r.num_cached_tokens] for r in self.requests]
        return {k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}

    @classmethod
    def from_dict(cls, data: dict) -> SchedulerOutput:
        values = {f.name: data[f.name] for f in fields(cls)}
        for name in ("new_req_ids", "resumed_req_ids", "running_req_ids", "preempted_req_ids", "finished_req_ids"):
            values[name] = tuple(values[name])
        values["new_block_ids"] = tuple((rid, tuple(ids)) for rid, ids in values["new_block_ids"])
        values["requests"] = tuple(RequestCounters(*r) for r in values["requests"])
        return cls(**values)


OUTPUT_PANEL = PanelKind("scheduler_output", SchedulerOutput.from_dict)  # a frame's panel of a kind that keeps one
