"""Steps the V0 twin (scheduler/vllm_v0/) through a workload of workloads.py, recording each step as the oracle
driver (oracle.py) does. Pure Python: the golden-trace test uses it without vLLM."""

from __future__ import annotations

import time

from scheduler.vllm_v0 import V0Config, V0Status, VllmV0Scheduler
from tools.refcheck.adapter import workload_sequences
from tools.refcheck.vllm_v0.workloads import MAX_STEPS, FakeModel, error_record, step_record

STOPPED = ("eos", "stop_token")  # V0's FINISHED_STOPPED; the other reasons are FINISHED_LENGTH_CAPPED


def _tables(sched: VllmV0Scheduler) -> tuple[list, list]:
    gpu = [[g.request_id, *g.seq.block_table] for g in sched.running if g.seq.block_table]
    cpu = [[g.request_id, *sched.cpu_block_table(g.seq)] for g in sched.swapped]
    return gpu, cpu


def run_twin(workload: dict, release: str = "0.10.2", max_steps: int = MAX_STEPS, timings: list | None = None
             ) -> list[list]:
    """Every step's record of the twin, until all requests are done, nothing ran for three steps, or the twin
    raised what V0 raises (its last record names it). `timings` gets each step's seconds in schedule() and in
    postprocess()."""
    sched = VllmV0Scheduler(V0Config(**workload["config"]))
    model, pending, records, idle = FakeModel(workload), workload_sequences(workload), [], 0
    bm = sched.block_manager
    for step in range(1, max_steps + 1):
        while pending and pending[0].arrival < step:
            sched.add(pending.pop(0))
        running_before = {g.request_id for g in sched.running}
        start = time.perf_counter()
        try:
            batch = sched.schedule()
        except (RuntimeError, AssertionError, ValueError, KeyError) as error:
            records.append(error_record(error))
            break
        scheduled_s = time.perf_counter() - start
        out = sched.outputs
        outputs = [model.sample(s.seq_id, len(s), [])[0] if s.num_computed_tokens + n >= len(s) else None
                   for s, n in zip(batch.seqs, batch.num_scheduled_tokens, strict=True)]
        scheduled = [[s.seq_id, n, list(c)] for s, n, c in zip(batch.seqs, batch.num_scheduled_tokens,
                                                                 out.computed_block_nums, strict=True)]
        preempted = [[g.request_id, "recompute" if g.status is V0Status.WAITING else "swap"]
                     for g in (*sched.waiting, *sched.swapped) if g.request_id in running_before]
        start = time.perf_counter()
        events = sched.postprocess(batch.seqs, outputs)
        if timings is not None:
            timings.append((scheduled_s, time.perf_counter() - start))
        finished = [[e.seq_id, "stopped" if e.reason in STOPPED else "length"] for e in events]
        gpu, cpu = _tables(sched)
        records.append(step_record(
            scheduled, out.num_batched_tokens, preempted, [list(p) for p in out.blocks_to_swap_out],
            [list(p) for p in out.blocks_to_swap_in], [g.request_id for g in out.ignored], finished,
            [g.request_id for g in sched.waiting], [g.request_id for g in sched.running],
            [g.request_id for g in sched.swapped], gpu, cpu, [bm.gpu.num_free, bm.cpu.num_free]))
        idle = idle + 1 if not scheduled else 0
        if not pending and (sched.is_finished() or idle >= 3):
            break
    return records
