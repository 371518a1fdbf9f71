"""Latency and throughput metrics computed from frames, in steps and in seconds.

Conventions (see engine/run/frame.py): a request with arrival a joins the queue at the start of step a + 1, so
times are measured from the end of step a, i.e. from frame a's clocks.
- TTFT = first-token step - arrival;  TPOT = (finish - first token) / (output tokens - 1);
- end-to-end latency = finish - arrival;  queueing delay = first scheduled step - (arrival + 1).
Seconds come from the simulated clock (`*_s`) and from the measured wall time of schedule + model
(`*_wall_s`), both read at the same frames as the steps.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from statistics import fmean

from engine.run.frame import Frame
from scheduler.events import Speculated

DONE = ("finished", "aborted")


@dataclass(frozen=True)
class Span:
    """One latency, as steps and as simulated and wall seconds."""
    steps: float
    s: float
    wall_s: float


@dataclass(frozen=True)
class RequestMetrics:
    id: int
    arrival: int
    status: str
    num_output_tokens: int
    num_preemptions: int
    first_scheduled_step: int | None
    first_token_step: int | None
    finish_step: int | None
    ttft: Span | None
    tpot: Span | None  # None with fewer than 2 output tokens
    e2e: Span | None
    queueing: Span | None


LATENCY_SPANS = ("ttft", "tpot", "e2e", "queueing")  # RequestMetrics' latency spans, by field name


@dataclass(frozen=True)
class RunMetrics:
    num_steps: int
    sim_time_s: float
    wall_time_s: float
    num_finished: int
    num_aborted: int
    num_output_tokens: int
    throughput_tokens_per_step: float
    throughput_tokens_per_s: float  # simulated
    prefix_hit_rate: float  # cached blocks found / full prompt blocks looked up
    mean_kv_usage: float  # over steps 1..n
    num_preemptions: int
    mean_ttft: Span | None
    mean_tpot: Span | None
    mean_e2e: Span | None


@dataclass
class _Scan:
    """What one pass over the frames gathers."""
    sim: list[float] = field(default_factory=list)  # simulated clock at each frame
    wall: list[float] = field(default_factory=list)  # wall time of schedule + model up to each frame
    kv_usage: list[float] = field(default_factory=list)
    first_scheduled: dict[int, int] = field(default_factory=dict)
    first_token: dict[int, int] = field(default_factory=dict)
    finish: dict[int, int] = field(default_factory=dict)
    last: Frame | None = None


def _scan(frames: Iterable[Frame]) -> _Scan:
    scan, elapsed_wall = _Scan(), 0.0
    for frame in frames:
        elapsed_wall += frame.wall_schedule_s + frame.wall_model_s
        scan.sim.append(frame.sim_time_s)
        scan.wall.append(elapsed_wall)
        if frame.step:
            scan.kv_usage.append(frame.metrics.kv_usage)
        for rid in frame.batch.seq_ids:
            scan.first_scheduled.setdefault(rid, frame.step)
        for req in frame.requests:
            if req.num_tokens > req.num_prompt_tokens:
                scan.first_token.setdefault(req.id, frame.step)
            if req.status in DONE:
                scan.finish.setdefault(req.id, frame.step)
        scan.last = frame
    if scan.last is None:
        raise ValueError("no frames to measure")
    return scan


def _span(start: int | None, end: int | None, sim: list[float], wall: list[float], per: int = 1) -> Span | None:
    if start is None or end is None or per < 1:
        return None
    return Span((end - start) / per, (sim[end] - sim[start]) / per, (wall[end] - wall[start]) / per)


def _mean(spans: list[Span | None]) -> Span | None:
    known = [s for s in spans if s is not None]
    if not known:
        return None
    return Span(fmean(s.steps for s in known), fmean(s.s for s in known), fmean(s.wall_s for s in known))


def request_metrics(frames: Iterable[Frame]) -> list[RequestMetrics]:
    return _request_metrics(_scan(frames))


def _request_metrics(scan: _Scan) -> list[RequestMetrics]:
    sim, wall, result = scan.sim, scan.wall, []
    assert scan.last is not None  # _scan refuses no frames
    for req in scan.last.requests:
        a, first, end = req.arrival, scan.first_token.get(req.id), scan.finish.get(req.id)
        scheduled = scan.first_scheduled.get(req.id)
        finished = req.status == "finished"
        result.append(RequestMetrics(
            req.id, a, req.status, req.num_output_tokens, req.num_preemptions, scheduled, first, end,
            ttft=_span(a, first, sim, wall),
            tpot=_span(first, end, sim, wall, per=req.num_output_tokens - 1) if finished else None,
            e2e=_span(a, end, sim, wall),
            queueing=None if scheduled is None else Span(scheduled - a - 1, sim[scheduled - 1] - sim[a],
                                                         wall[scheduled - 1] - wall[a]),
        ))
    return result


def run_metrics(frames: Iterable[Frame]) -> tuple[RunMetrics, list[RequestMetrics]]:
    """Run-level metrics, with the per-request ones they summarise."""
    scan = _scan(frames)
    requests, last = _request_metrics(scan), scan.last
    assert last is not None  # _scan refuses no frames
    output_tokens = sum(r.num_output_tokens for r in requests)
    m = last.metrics
    return RunMetrics(
        num_steps=last.step, sim_time_s=last.sim_time_s, wall_time_s=scan.wall[-1],
        num_finished=sum(r.status == "finished" for r in requests),
        num_aborted=sum(r.status == "aborted" for r in requests),
        num_output_tokens=output_tokens,
        throughput_tokens_per_step=output_tokens / max(1, last.step),
        throughput_tokens_per_s=output_tokens / last.sim_time_s if last.sim_time_s else 0.0,
        prefix_hit_rate=m.num_prefix_hits / m.num_prefix_queries if m.num_prefix_queries else 0.0,
        mean_kv_usage=fmean(scan.kv_usage) if scan.kv_usage else 0.0,
        num_preemptions=m.num_preemptions,
        mean_ttft=_mean([r.ttft for r in requests]),
        mean_tpot=_mean([r.tpot for r in requests]),
        mean_e2e=_mean([r.e2e for r in requests]),
    ), requests


# -- distributions and KV waste ----------------------------------------------------------------------------

def percentile(values: Iterable[float], q: float) -> float | None:
    """The q-th percentile (0..100) with linear interpolation between ranks (numpy's default); None if empty."""
    ordered = sorted(values)
    if not ordered:
        return None
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def recomputed_tokens(frames: Iterable[Frame]) -> int:
    """Tokens whose KV cache a waiting request lost (preemption, pool rebuild) after computing them: each drop
    of its computed-token count between frames counts the tokens dropped, which must be computed again. (A
    finished request frees its blocks too, but has nothing left to compute.)"""
    computed: dict[int, int] = {}
    lost = 0
    for frame in frames:
        for req in frame.requests:
            before = computed.get(req.id, 0)
            if req.status == "waiting" and req.num_computed_tokens < before:
                lost += before - req.num_computed_tokens
            computed[req.id] = req.num_computed_tokens
    return lost


def internal_fragmentation(frame: Frame) -> float:
    """Share of the slots of held blocks that hold no token (a request's last block is partly empty). A block
    shared by prefix caching holds the most tokens any of its owners put there."""
    size = frame.config.kvcache_block_size
    filled: dict[int, int] = {}
    for req in frame.requests:
        for i, block_id in enumerate(req.block_table):
            tokens = min(size, max(0, req.num_computed_tokens - i * size))
            filled[block_id] = max(filled.get(block_id, 0), tokens)
    if not filled:
        return 0.0
    return 1 - sum(filled.values()) / (len(filled) * size)


# -- speculative decoding ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class SpeculationMetrics:
    num_drafted: int  # draft tokens checked by the model
    num_accepted: int  # of those, the ones the model agreed with
    acceptance_rate: float  # accepted / drafted; 0 when nothing was drafted
    tokens_per_pass: float  # output tokens a request gains in a step that gives it any (1 without speculation)


def speculation_metrics(frames: Iterable[Frame]) -> SpeculationMetrics:
    """Draft acceptance and output tokens per request per forward pass, read off the `speculated` events and
    the requests' token counts (a request emits in a step when its output grows)."""
    drafted = accepted = emitted = passes = 0
    num_output: dict[int, int] = {}
    for frame in frames:
        for e in frame.events:
            if not isinstance(e, Speculated):
                continue
            drafted += len(e.draft_token_ids)
            accepted += e.num_accepted
        for req in frame.requests:
            gained = req.num_output_tokens - num_output.get(req.id, 0)
            if gained > 0:
                emitted += gained
                passes += 1
            num_output[req.id] = req.num_output_tokens
    return SpeculationMetrics(drafted, accepted, accepted / drafted if drafted else 0.0,
                              emitted / passes if passes else 0.0)
