"""Steps the SGLang twin (scheduler/sglang/) through a workload of tools/refcheck/sglang/workloads.py, recording each
step as the oracle driver (oracle.py) does. Pure Python: the golden-trace test uses it without SGLang."""

from __future__ import annotations

import time

from scheduler.sglang import Scheduler, ServerArgs
from tools.refcheck.sglang.workloads import MAX_STEPS, SGLANG_RELEASE, FakeModel, step_record


def run_twin(workload: dict, release: str = SGLANG_RELEASE, max_steps: int = MAX_STEPS,
             timings: list | None = None) -> list[list]:
    """Every step's record until all requests are done or nothing ran for three steps (`release`: the one SGLang
    release the twin mirrors).
    `timings` gets each step's seconds in get_next_batch_to_run and in process_batch_result."""
    if release != SGLANG_RELEASE:
        raise ValueError(f"the SGLang twin mirrors SGLang {SGLANG_RELEASE}, not {release}")
    s = Scheduler(ServerArgs(**workload["config"]))
    model = FakeModel(workload)
    requests = workload["requests"]
    pending, reqs, records, idle = list(range(len(requests))), {}, [], 0
    for step in range(1, max_steps + 1):
        while pending and requests[pending[0]]["arrival"] < step:
            i = pending.pop(0)
            r = requests[i]
            reqs[i] = s.add_request(i, r["prompt"], r["max_new_tokens"], r["ignore_eos"], r.get("priority"))
        before = {r.rid for r in s.running_batch.reqs}
        start = time.perf_counter()
        batch = s.get_next_batch_to_run()
        scheduled_s = time.perf_counter() - start
        finished, processed_s = [], 0.0
        if batch is None:
            kind, rows = "idle", []
            s.on_idle()
        else:
            kind = batch.forward_mode
            rows = [[r.rid, r.extend_len] if kind == "extend" else r.rid for r in batch.reqs]
            done_before = {r.rid for r in batch.reqs if r.finished()}
            tokens = [model.token(r.rid, len(r.origin_input_ids) + len(r.output_ids)) for r in batch.reqs]
            start = time.perf_counter()
            s.process_batch_result(batch, tokens)
            processed_s = time.perf_counter() - start
            finished = [[r.rid, r.finished_reason] for r in batch.reqs if r.finished() and r.rid not in done_before]
        s.step_done(batch)
        if timings is not None:
            timings.append((scheduled_s, processed_s))
        slots = sorted([i, *r.req_to_token[:r.kv_committed_len]] for i, r in reqs.items() if r.holds_kv)
        tree = s.tree_cache
        records.append(step_record(
            kind, rows, [r.rid for r in s.waiting_queue], [r.rid for r in s.running_batch.reqs],
            [r.rid for r in s.waiting_queue if r.rid in before], finished, slots, tree.snapshot(),
            [s.allocator.available_size(), tree.evictable_size(), tree.protected_size()],
            s.new_token_ratio_tracker.current))
        idle = idle + 1 if batch is None else 0
        if not pending and (all(r.finished() for r in reqs.values()) or idle >= 3):
            break
    return records
