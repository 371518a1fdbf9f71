"""Steps vLLM's own V1 `Scheduler` (or `AsyncScheduler`) offline, without a model or a GPU, through a workload of
tools/refcheck/vllm/workloads.py with the same fake model, recording each step as the twin driver (twin.py) does.

Only this module imports vLLM (run it in the environment `make vllm-check VLLM=0.32|0.33` builds). vLLM needs a
model config to start: a tiny Llama config.json written to a temporary folder, never loaded as weights."""

from __future__ import annotations

import hashlib
import json
import logging
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import vllm
from vllm.config import CacheConfig, ModelConfig, SchedulerConfig, SpeculativeConfig, VllmConfig
from vllm.sampling_params import SamplingParams
from vllm.v1.core.kv_cache_utils import get_request_block_hasher, init_none_hash
from vllm.v1.core.sched.async_scheduler import AsyncScheduler
from vllm.v1.core.sched.scheduler import Scheduler
from vllm.v1.kv_cache_interface import FullAttentionSpec, KVCacheConfig, KVCacheGroupSpec
from vllm.v1.outputs import DraftTokenIds, ModelRunnerOutput
from vllm.v1.request import Request, RequestStatus
from vllm.v1.spec_decode.ngram_proposer import _find_longest_matched_ngram_and_propose_tokens
from vllm.v1.structured_output import StructuredOutputManager

from tools.refcheck.vllm.workloads import MAX_STEPS, FakeModel, step_record

logging.getLogger("vllm").setLevel(logging.ERROR)  # its warnings about tiny budgets are expected here

TINY_LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
              "intermediate_size": 128, "num_attention_heads": 2, "num_key_value_heads": 1, "num_hidden_layers": 1,
              "vocab_size": 1024, "max_position_embeddings": 8192, "head_dim": 32, "rms_norm_eps": 1e-5,
              "bos_token_id": 1, "eos_token_id": 2, "tie_word_embeddings": True, "torch_dtype": "float32"}
REASONS = {RequestStatus.FINISHED_STOPPED: "eos", RequestStatus.FINISHED_LENGTH_CAPPED: "length"}


def _hash(value) -> bytes:
    return hashlib.sha256(repr(value).encode()).digest()


class VllmFactory:
    """Builds vLLM schedulers for workload configs; the model config is made once (it takes seconds)."""

    def __init__(self):
        folder = Path(tempfile.mkdtemp(prefix="vllm-check-"))
        (folder / "config.json").write_text(json.dumps(TINY_LLAMA))
        self.model_config = ModelConfig(model=str(folder), skip_tokenizer_init=True, max_model_len=8192,
                                        dtype="float32")
        init_none_hash(_hash)

    def scheduler(self, config: dict, asynchronous: bool = False):
        bs, blocks = config["kvcache_block_size"], config["num_kvcache_blocks"] + 1  # + vLLM's null block
        model = self.model_config
        model.max_model_len = config["max_model_len"]
        spec = None
        if config.get("num_speculative_tokens"):
            spec = SpeculativeConfig(method="ngram", num_speculative_tokens=config["num_speculative_tokens"],
                                     prompt_lookup_min=config["prompt_lookup_min"],
                                     prompt_lookup_max=config["prompt_lookup_max"])
        vllm_config = VllmConfig(
            model_config=model, speculative_config=spec,
            scheduler_config=SchedulerConfig(
                max_num_seqs=config["max_num_seqs"], max_num_batched_tokens=config["max_num_batched_tokens"],
                max_model_len=config["max_model_len"], enable_chunked_prefill=config["chunked_prefill"],
                long_prefill_token_threshold=config["long_prefill_token_threshold"],
                policy=config["queue_policy"], is_encoder_decoder=False, async_scheduling=asynchronous,
                **_knobs(config)),
            cache_config=CacheConfig(block_size=bs, enable_prefix_caching=config["enable_prefix_caching"]))
        vllm_config.cache_config.num_gpu_blocks = blocks
        kv = KVCacheConfig(num_blocks=blocks, kv_cache_tensors=[], kv_cache_groups=[KVCacheGroupSpec(
            ["layer"], FullAttentionSpec(block_size=bs, num_kv_heads=1, head_size=1, dtype=torch.float32))])
        cls = AsyncScheduler if asynchronous else Scheduler
        return cls(vllm_config=vllm_config, kv_cache_config=kv, block_size=bs, log_stats=False,
                   structured_output_manager=StructuredOutputManager(vllm_config))


def _knobs(config: dict) -> dict:
    """vLLM's SchedulerConfig knobs a workload sets (the knobs mode), with vLLM's None for the twin's 0."""
    knobs = {key: config[key] for key in ("scheduler_reserve_full_isl", "watermark",
                                          "long_prefill_token_threshold_adaptive") if key in config}
    for key in ("max_num_scheduled_tokens", "max_num_active_seqs"):
        if config.get(key):
            knobs[key] = config[key]
    return knobs


class VllmOracle:
    """vLLM's own Scheduler as the harness's oracle (tools/refcheck/adapter.py): the release installed here."""

    def __init__(self):
        self.release = ".".join(vllm.__version__.split(".")[:2])
        self.factory = VllmFactory()

    def run(self, workload: dict, max_steps: int = MAX_STEPS, timings: list | None = None) -> list[list]:
        return run_vllm(self.factory, workload, max_steps, timings)


def arrival_time(workload: dict, i: int) -> float:
    """Request i's arrival time as vLLM stamps it when the request is added: its arrival step, plus its place in
    the order of adding, so requests of one step have distinct stamps in that order (the twin orders them by id)."""
    return workload["requests"][i]["arrival"] + i / len(workload["requests"])


def _requests(workload: dict) -> list[Request]:
    hasher = get_request_block_hasher(workload["config"]["kvcache_block_size"], _hash)
    requests = []
    for i, r in enumerate(workload["requests"]):
        params = SamplingParams(max_tokens=r["max_tokens"], ignore_eos=r["ignore_eos"],
                                stop_token_ids=r.get("stop_token_ids"), min_tokens=r.get("min_tokens", 0))
        params.update_from_generation_config({}, workload["config"]["eos"])
        requests.append(Request(f"{i:05d}", list(r["prompt"]), params, None, arrival_time=arrival_time(workload, i),
                                priority=r["priority"], block_hasher=hasher))
    return requests


class _Run:
    """One workload through vLLM: its scheduler, requests, fake model and the records so far."""

    def __init__(self, factory: VllmFactory, workload: dict, asynchronous: bool):
        self.cfg = workload["config"]
        self.sched = factory.scheduler(self.cfg, asynchronous)
        self.model, self.requests = FakeModel(workload), _requests(workload)
        self.arrivals = [r["arrival"] for r in workload["requests"]]

    def outputs(self, out) -> ModelRunnerOutput:
        """What the model returns for a step, decided when it is scheduled: a token for each request not left
        part-way through its prompt, at the position after its known tokens and those still in flight."""
        ids = list(out.num_scheduled_tokens)
        sampled = []
        for rid in ids:
            request = self.requests[int(rid)]
            drafts = out.scheduled_spec_decode_tokens.get(rid, [])
            position = request.num_tokens + max(request.num_output_placeholders - 1, 0)
            sampled.append([] if request.is_prefill_chunk else self.model.sample(int(rid), position, drafts))
        return ModelRunnerOutput(req_ids=ids, req_id_to_index={r: i for i, r in enumerate(ids)},
                                 sampled_token_ids=sampled)

    def propose_drafts(self, out, sampled: list[list[int]]):
        """vLLM's n-gram drafter (its own function) for the requests that sampled, as its model runner does."""
        cfg, ids, drafts = self.cfg, list(out.num_scheduled_tokens), []
        for rid, tokens in zip(ids, sampled, strict=True):
            request = self.sched.requests.get(rid)
            if not tokens or request is None or request.num_tokens >= cfg["max_model_len"]:
                drafts.append([])
                continue
            proposal = _find_longest_matched_ngram_and_propose_tokens(
                np.array(request.all_token_ids, dtype=np.int64), cfg["prompt_lookup_min"], cfg["prompt_lookup_max"],
                cfg["max_model_len"], cfg["num_speculative_tokens"])
            drafts.append([int(t) for t in proposal])
        self.sched.update_draft_token_ids(DraftTokenIds(ids, drafts))

    def record(self, out, before: set[str], finished: list) -> list:
        sched = self.sched
        scheduled = [[int(r), n] for r, n in out.num_scheduled_tokens.items()]
        drafts = [[int(r), *d] for r, d in out.scheduled_spec_decode_tokens.items()]
        admitted = [r for r in out.num_scheduled_tokens if r in before]
        new = [int(r) for r in admitted if self.requests[int(r)].num_preemptions == 0]
        resumed = [int(r) for r in admitted if self.requests[int(r)].num_preemptions > 0]
        waiting, running = [int(r.request_id) for r in sched.waiting], [int(r.request_id) for r in sched.running]
        tables = sorted([int(r.request_id), *sched.kv_cache_manager.get_block_ids(r.request_id)[0]]
                        for r in [*sched.waiting, *sched.running]
                        if sched.kv_cache_manager.get_block_ids(r.request_id)[0])
        preempted = [int(r) for r in (out.preempted_req_ids or ())]
        return step_record(scheduled, drafts, new, resumed, preempted, finished, waiting, running, tables)


def _finished(run: _Run, out) -> list:
    return [[int(r), _reason(run.requests[int(r)])] for r in out.num_scheduled_tokens
            if run.requests[int(r)].is_finished()]


def _reason(request: Request) -> str:
    """Why vLLM finished it, as the twin names it: a stop token is a stop with its stop_reason set."""
    if request.status == RequestStatus.FINISHED_STOPPED and request.stop_reason is not None:
        return "stop_token"
    return REASONS[request.status]


def run_vllm(factory: VllmFactory, workload: dict, max_steps: int = MAX_STEPS, timings: list | None = None
             ) -> list[list]:
    """Every step's record, stepping as vLLM's EngineCore.step does: schedule, model, update, drafts.
    `timings` (synchronous modes) gets each step's seconds in schedule() and in update_from_output()."""
    if workload["mode"] == "async":
        return run_vllm_async(factory, workload, max_steps)
    run = _Run(factory, workload, asynchronous=False)
    sched, pending, records, idle = run.sched, list(run.requests), [], 0
    for step in range(1, max_steps + 1):
        while pending and run.arrivals[int(pending[0].request_id)] < step:
            sched.add_request(pending.pop(0))
        before = {r.request_id for r in sched.waiting}
        start = time.perf_counter()
        out = sched.schedule()
        scheduled_s = time.perf_counter() - start
        model_output = run.outputs(out)
        start = time.perf_counter()
        sched.update_from_output(out, model_output)
        if timings is not None:
            timings.append((scheduled_s, time.perf_counter() - start))
        if run.cfg.get("num_speculative_tokens") and out.num_scheduled_tokens:
            run.propose_drafts(out, model_output.sampled_token_ids)
        records.append(run.record(out, before, _finished(run, out)))
        idle = idle + 1 if not out.num_scheduled_tokens else 0
        if not pending and (all(r.is_finished() for r in run.requests) or idle >= 3):
            break
    return records


def run_vllm_async(factory: VllmFactory, workload: dict, max_steps: int = MAX_STEPS) -> list[list]:
    """vLLM's AsyncScheduler stepped as EngineCore.step_with_batch_queue does with two batches in flight:
    schedule step k, then take step k - 1's output (update_from_output)."""
    run = _Run(factory, workload, asynchronous=True)
    sched, pending, records, idle, queue = run.sched, list(run.requests), [], 0, []
    for step in range(1, max_steps + 1):
        while pending and run.arrivals[int(pending[0].request_id)] < step:
            sched.add_request(pending.pop(0))
        before = {r.request_id for r in sched.waiting}
        out = sched.schedule()
        queue.append((out, run.outputs(out)))
        finished = []
        if len(queue) == 2:
            done_before = {r.request_id for r in run.requests if r.is_finished()}
            sched.update_from_output(*queue.pop(0))
            finished = [[int(r.request_id), _reason(r)] for r in run.requests
                        if r.is_finished() and r.request_id not in done_before]
        records.append(run.record(out, before, finished))
        idle = idle + 1 if not out.num_scheduled_tokens else 0
        in_flight = any(not run.requests[int(r)].is_finished() for o, _ in queue for r in o.num_scheduled_tokens)
        if not pending and not in_flight and (all(r.is_finished() for r in run.requests) or idle >= 3):
            break
    return records
