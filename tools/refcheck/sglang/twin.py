"""Steps the SGLang twin through a workload of tools/refcheck/sglang/workloads.py as the engine steps it: through the
adapter the app runs (scheduler/sglang/engine_adapter.py `SglangScheduler`: add, schedule, postprocess), so what
the app shows is what is checked. Each step is recorded as the oracle driver (oracle.py) records SGLang's. Pure
Python: the golden-trace test uses it without SGLang."""

from __future__ import annotations

import time

from scheduler import Config, SamplingParams, Sequence
from scheduler.sglang import ServerArgs
from scheduler.sglang.command_line import server_args
from scheduler.sglang.engine_adapter import SglangScheduler
from tools.refcheck.sglang.workloads import MAX_STEPS, SGLANG_RELEASE, FakeModel, step_record


def engine_config(settings: dict) -> Config:
    """The engine's Config that stands for a workload's SGLang settings (its ServerArgs, checked both ways);
    max_num_batched_tokens, which SGLang does not read, only as large as the Config's own checks ask."""
    args = ServerArgs(**settings)
    config = Config(max_num_seqs=args.max_running_requests, max_model_len=args.context_length,
                    max_num_batched_tokens=max(args.context_length, args.max_running_requests),
                    num_kvcache_blocks=args.max_total_tokens // args.page_size, kvcache_block_size=args.page_size,
                    eos=args.eos, chunked_prefill_size=args.chunked_prefill_size,
                    max_prefill_tokens=args.max_prefill_tokens, schedule_policy=args.schedule_policy,
                    schedule_conservativeness=args.schedule_conservativeness,
                    enable_priority_scheduling=args.enable_priority_scheduling,
                    schedule_low_priority_values_first=args.schedule_low_priority_values_first,
                    priority_scheduling_preemption_threshold=args.priority_scheduling_preemption_threshold,
                    disable_priority_preemption=args.disable_priority_preemption,
                    retraction_policy=args.retraction_policy)
    if server_args(config) != args:
        raise ValueError(f"the engine's Config does not stand for {settings}")
    return config


def run_twin(workload: dict, release: str = SGLANG_RELEASE, max_steps: int = MAX_STEPS,
             timings: list | None = None) -> list[list]:
    """Every step's record until all requests are done or nothing ran for three steps (`release`: the one SGLang
    release the twin mirrors).
    `timings` gets each step's seconds in schedule (get_next_batch_to_run) and in postprocess
    (process_batch_result)."""
    if release != SGLANG_RELEASE:
        raise ValueError(f"the SGLang twin mirrors SGLang {SGLANG_RELEASE}, not {release}")
    scheduler = SglangScheduler(engine_config(workload["config"]))
    s = scheduler.twin
    model = FakeModel(workload)
    requests = workload["requests"]
    pending, reqs, records, idle = list(range(len(requests))), {}, [], 0
    for step in range(1, max_steps + 1):
        while pending and requests[pending[0]]["arrival"] < step:
            i = pending.pop(0)
            r = requests[i]
            params = SamplingParams(max_tokens=r["max_new_tokens"], ignore_eos=r["ignore_eos"])
            scheduler.add(Sequence(list(r["prompt"]), params, priority=r.get("priority"), seq_id=i))
            reqs.update((req.rid, req) for req in scheduler.live_reqs())
        before = {r.rid for r in s.running_batch.reqs}
        start = time.perf_counter()
        batch = scheduler.schedule()
        scheduled_s = time.perf_counter() - start
        finished, processed_s = [], 0.0
        twin_batch = s.last_batch
        if twin_batch is None:
            kind, rows = "idle", []
        else:
            kind = twin_batch.forward_mode
            rows = [[r.rid, r.extend_len] if kind == "extend" else r.rid for r in twin_batch.reqs]
            done_before = {r.rid for r in twin_batch.reqs if r.finished()}
            tokens = [model.token(r.rid, len(r.origin_input_ids) + len(r.output_ids)) for r in twin_batch.reqs]
            start = time.perf_counter()
            scheduler.postprocess(batch.seqs, tokens)
            processed_s = time.perf_counter() - start
            finished = [[r.rid, r.finished_reason] for r in twin_batch.reqs
                        if r.finished() and r.rid not in done_before]
        if timings is not None:
            timings.append((scheduled_s, processed_s))
        slots = sorted([i, *r.req_to_token[:r.kv_committed_len]] for i, r in reqs.items() if r.holds_kv)
        tree = s.tree_cache
        records.append(step_record(
            kind, rows, [r.rid for r in s.waiting_queue], [r.rid for r in s.running_batch.reqs],
            [r.rid for r in s.waiting_queue if r.rid in before], finished, slots, tree.snapshot(),
            [s.allocator.available_size(), tree.evictable_size(), tree.protected_size()],
            s.new_token_ratio_tracker.current))
        idle = idle + 1 if twin_batch is None else 0
        if not pending and (all(r.finished() for r in reqs.values()) or idle >= 3):
            break
    return records
