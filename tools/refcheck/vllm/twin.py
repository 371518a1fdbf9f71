"""Steps the vLLM twin (scheduler/vllm_v1/) through a workload of tools/refcheck/vllm/workloads.py, recording each
step as the oracle driver (oracle.py) does. Pure Python: the golden-trace test uses it without vLLM."""

from __future__ import annotations

import time

from scheduler import Config
from scheduler.sequence import PLACEHOLDER
from scheduler.vllm_v1 import VllmScheduler
from tools.refcheck.adapter import workload_sequences
from tools.refcheck.vllm.workloads import MAX_STEPS, FakeModel, step_record

LENGTH = ("max_tokens", "max_model_len")  # vLLM reports both as "length"


def _scheduler(workload: dict, release: str) -> VllmScheduler:
    return VllmScheduler(Config(**workload["config"], vllm_version=release))


def run_twin(workload: dict, release: str, max_steps: int = MAX_STEPS, timings: list | None = None) -> list[list]:
    """Every step's record of the twin mirroring vLLM `release`, until all requests are done or nothing ran for
    three steps (a stalled run). `timings` (synchronous modes) gets each step's seconds in schedule() and in
    postprocess()."""
    if workload["mode"] == "async":
        return run_twin_async(workload, release, max_steps)
    sched = _scheduler(workload, release)
    model, seqs = FakeModel(workload), workload_sequences(workload)
    pending, records, idle = list(seqs), [], 0
    for step in range(1, max_steps + 1):
        while pending and pending[0].arrival < step:
            sched.add(pending.pop(0))
        start = time.perf_counter()
        batch = sched.schedule()
        scheduled_s = time.perf_counter() - start
        outputs = []
        for seq in batch.seqs:
            drafts = seq.draft_token_ids
            done = seq.num_computed_tokens + seq.num_scheduled_tokens >= len(seq) + len(drafts)
            sampled = model.sample(seq.seq_id, len(seq), drafts) if done else None
            outputs.append(sampled if drafts or sampled is None else sampled[0])
        scheduled = [[s.seq_id, n] for s, n in zip(batch.seqs, batch.num_scheduled_tokens, strict=True)]
        drafts = [[s.seq_id, *s.draft_token_ids] for s in batch.seqs if s.draft_token_ids]
        start = time.perf_counter()
        events = list(batch.events) + sched.postprocess(batch.seqs, outputs)
        if timings is not None:
            timings.append((scheduled_s, time.perf_counter() - start))
        new = [e.seq_id for e in events if e.kind == "admitted" and not e.recompute]
        resumed = [e.seq_id for e in events if e.kind == "admitted" and e.recompute]
        preempted = [e.seq_id for e in events if e.kind == "preempted"]
        finished = [[e.seq_id, "length" if e.reason in LENGTH else e.reason] for e in events if e.kind == "finished"]
        waiting, running = sched.waiting_seqs, sched.running_seqs
        tables = sorted([s.seq_id, *s.block_table] for s in [*waiting, *running] if s.block_table)
        records.append(step_record(scheduled, drafts, new, resumed, preempted, finished,
                                   [s.seq_id for s in waiting], [s.seq_id for s in running], tables))
        idle = idle + 1 if not scheduled else 0
        if (not pending and sched.is_finished()) or (not pending and idle >= 3):
            break
    return records


def _reasons(late) -> list:
    return [[s.seq_id, "length" if s.finish_reason in LENGTH else s.finish_reason] for s, _ in late]


def run_twin_async(workload: dict, release: str, max_steps: int = MAX_STEPS) -> list[list]:
    """As the engine's overlapped scheduling steps it (engine/run/overlap.py): schedule step k, land step k - 1's
    tokens (requests that stop leave step k's batch), hand step k to the model with placeholders."""
    sched = _scheduler(workload, release)
    model, seqs = FakeModel(workload), workload_sequences(workload)
    pending, records, idle, in_flight = list(seqs), [], 0, None  # (sequence, index) of the step in flight
    for step in range(1, max_steps + 1):
        while pending and pending[0].arrival < step:
            sched.add(pending.pop(0))
        batch = sched.schedule()
        scheduled = [[s.seq_id, n] for s, n in zip(batch.seqs, batch.num_scheduled_tokens, strict=True)]
        landed = [] if in_flight is None else [(s, i, model.sample(s.seq_id, i, [])[0]) for s, i in in_flight]
        late = [] if in_flight is None else sched.land(landed)[0]
        gone = {s for s, _ in late}
        kept = [s for s in batch.seqs if s not in gone]
        outputs = [None if s.num_computed_tokens + s.num_scheduled_tokens < len(s) else PLACEHOLDER for s in kept]
        in_flight = [(s, len(s)) for s, out in zip(kept, outputs, strict=True) if out is not None] if kept else None
        if kept:
            sched.launch(kept, outputs)
        events = batch.events
        new = [e.seq_id for e in events if e.kind == "admitted" and not e.recompute]
        resumed = [e.seq_id for e in events if e.kind == "admitted" and e.recompute]
        preempted = [e.seq_id for e in events if e.kind == "preempted"]
        waiting, running = sched.waiting_seqs, sched.running_seqs
        tables = sorted([s.seq_id, *s.block_table] for s in [*waiting, *running] if s.block_table)
        records.append(step_record(scheduled, [], new, resumed, preempted, _reasons(late),
                                   [s.seq_id for s in waiting], [s.seq_id for s in running], tables))
        idle = idle + 1 if not scheduled else 0
        if not pending and in_flight is None and (sched.is_finished() or idle >= 3):
            break
    return records
