"""Steps SGLang 0.5.23's own `Scheduler` offline on the CPU through a workload of tools/refcheck/sglang/workloads.py,
with the fake model's tokens in place of sampled ones, recording each step as the twin driver does.

Only this module imports SGLang (run it in the environment `make sglang-check` builds). One Scheduler is built per
process (SGLang refuses a second: "init_parallel_runtime() ran twice") on a tiny Llama config with dummy weights;
each workload resets it: its token pool resized and cleared (SGLang's paged allocator swapped in for page_size > 1),
its radix tree emptied, the settings of the workload set, and the tree's LRU counter started again. The tree is
SGLang's Python TreeCore (the Rust one, its default, hides its nodes; both decide alike). The model's forward pass
is skipped: the scheduler reads only the sampled tokens, which the driver writes.

Priority scheduling's settings are set where SGLang reads them: on the Scheduler (read once at its start) and in the
runtime context's schedule flags (read as it preempts and retracts). One thing is made definite: the requests one
priority preemption releases are queued again in the order of a Python set of them (by their memory addresses, so
it varies from run to run); the driver gives `schedule_policy` an insertion-ordered set, so they are queued in the
order preempt_to_schedule picked them (the least important first), which is the order the twin takes."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import tempfile
import time
import warnings
from array import array

if importlib.util.find_spec("sglang") is None:  # before the stubs, which would serve `vllm` to this process
    raise ImportError("SGLang is not installed in this environment (`make sglang-check` builds one)")

from tools.refcheck.sglang import stub_modules  # noqa: E402

stub_modules.install("torchvision", "vllm")
warnings.filterwarnings("ignore")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ["SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND"] = "python"

import torch  # noqa: E402
from sglang.srt.managers import schedule_policy  # noqa: E402
from sglang.srt.managers.io_struct import TokenizedGenerateReqInput  # noqa: E402
from sglang.srt.managers.schedule_batch import FINISH_ABORT, FINISH_MATCHED_TOKEN, ScheduleBatch  # noqa: E402
from sglang.srt.managers.schedule_policy import SchedulePolicy  # noqa: E402
from sglang.srt.managers.scheduler import Scheduler  # noqa: E402
from sglang.srt.managers.scheduler_components.new_token_ratio_tracker import NewTokenRatioTracker  # noqa: E402
from sglang.srt.managers.utils import GenerationBatchResult  # noqa: E402
from sglang.srt.mem_cache.allocator.paged import PagedTokenToKVPoolAllocator  # noqa: E402
from sglang.srt.mem_cache.unified_cache.components import base as tree_components  # noqa: E402
from sglang.srt.runtime_context import SpawnRanks, get_context, publish  # noqa: E402
from sglang.srt.sampling.sampling_params import SamplingParams  # noqa: E402
from sglang.srt.server_args import PortArgs, ServerArgs  # noqa: E402

from tools.refcheck.sglang.workloads import MAX_STEPS, FakeModel, step_record  # noqa: E402

logging.getLogger("sglang").setLevel(logging.ERROR)
logging.getLogger("sglang.srt.managers.schedule_batch").setLevel(logging.CRITICAL)  # an error per over-long prompt

TINY_LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
              "intermediate_size": 128, "num_attention_heads": 2, "num_key_value_heads": 1, "num_hidden_layers": 1,
              "vocab_size": 1024, "max_position_embeddings": 8192, "head_dim": 32, "rms_norm_eps": 1e-5,
              "bos_token_id": 1, "eos_token_id": 0, "tie_word_embeddings": True, "torch_dtype": "float32"}
BUILT_POOL = 4096  # the pool the Scheduler is built with; a workload's pool is a smaller view of it
BUILT_ROWS = 64  # request rows (max_running_requests) it is built with


class _InsertionOrderedSet(dict):
    """A set that iterates in insertion order: what `schedule_policy` builds with `set(...)` (its in-batch prefix
    check's ids, the requests a preemption releases), so the preempted requests are queued in a definite order."""

    def __init__(self, items=()):
        super().__init__((item, None) for item in items)

    def add(self, item):
        self[item] = None


schedule_policy.set = _InsertionOrderedSet

# The settings of priority scheduling, at SGLang's defaults where a workload has none.
PRIORITY_DEFAULTS = {"enable_priority_scheduling": False, "schedule_low_priority_values_first": False,
                     "priority_scheduling_preemption_threshold": 10, "disable_priority_preemption": False,
                     "retraction_policy": "length"}


def _reason(req) -> str:
    if isinstance(req.finished_reason, FINISH_ABORT):
        return "abort"
    return "eos" if isinstance(req.finished_reason, FINISH_MATCHED_TOKEN) else "length"


class _NoChecks:
    """Stands in for SGLang's idle-time pool checker, which would count against the pool the Scheduler was
    built with rather than the smaller one a workload uses."""

    def _check_all_pools(self, stats):
        return False, []

    def _check_req_pool(self):
        pass

    def _check_tree_cache(self):
        pass


def _no_forward(batch, **kwargs) -> GenerationBatchResult:
    """The model worker's forward pass, skipped: the scheduler reads only the tokens, which the driver writes."""
    return GenerationBatchResult(next_token_ids=torch.zeros(len(batch.reqs), dtype=torch.int64))


class SglangFactory:
    """The one Scheduler of this process, reset for each workload."""

    def __init__(self):
        folder = tempfile.mkdtemp(prefix="sglang-check-")
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(TINY_LLAMA, f)
        args = ServerArgs(model_path=folder, device="cpu", skip_tokenizer_init=True, load_format="dummy",
                          attention_backend="torch_native", sampling_backend="pytorch", disable_cuda_graph=True,
                          disable_overlap_schedule=True, tp_size=1, dtype="float32", random_seed=0, page_size=1,
                          max_total_tokens=BUILT_POOL, max_running_requests=BUILT_ROWS, chunked_prefill_size=64,
                          max_prefill_tokens=256, mem_fraction_static=0.9, schedule_policy="lpm",
                          context_length=8192, watchdog_timeout=10**6)
        publish(args, role="scheduler", ranks=SpawnRanks(world_rank=0, dp_rank=None, gpu_id=0))
        self.scheduler = Scheduler(args, PortArgs.init_new(args))
        for name in ("send_to_tokenizer", "send_to_detokenizer"):  # outputs go nowhere; never block on close
            sender = getattr(self.scheduler, name, None)
            socket = getattr(sender, "socket", None)
            if socket is not None:
                socket.setsockopt(__import__("zmq").LINGER, 0)
        self.scheduler.model_worker.forward_batch_generation = _no_forward
        self.scheduler.invariant_checker = _NoChecks()  # it counts against the built pool, not a workload's
        self.allocators = {1: self.scheduler.token_to_kv_pool_allocator}
        # the scheduler and its parts that hold the allocator (the result processor frees in groups through it;
        # the beam coordinator, unused here, refuses a new one)
        self.allocator_holders = [self.scheduler] + [
            part for part in vars(self.scheduler).values()
            if getattr(part, "token_to_kv_pool_allocator", None) is self.allocators[1]
            and type(part).__name__ != "BeamCoordinator"]

    def reset(self, config: dict) -> Scheduler:
        s = self.scheduler
        pool, page_size = config["max_total_tokens"], config["page_size"]
        allocator = self.allocators.get(page_size)
        if allocator is None:  # SGLang's paged allocator over the same (never written) KV buffers
            allocator = self.allocators[page_size] = PagedTokenToKVPoolAllocator(
                BUILT_POOL, page_size, torch.float32, "cpu", self.allocators[1].get_kvcache(), False)
        for holder in self.allocator_holders:
            object.__setattr__(holder, "token_to_kv_pool_allocator", allocator)  # some are frozen dataclasses
        s.page_size = s.tree_cache.page_size = page_size
        s.max_total_num_tokens = allocator.size = pool
        allocator.num_pages = pool // page_size
        allocator.clear()
        s.req_to_token_pool.clear()
        s.tree_cache.reset()
        tree_components._LAST_ACCESS_TIME_COUNTER_FLOAT = 1.0
        s.max_req_len = min(config["context_length"] - 1, pool - 1)
        s.max_req_input_len = s.max_req_len - 5
        s.max_running_requests = config["max_running_requests"]
        s.req_to_token_pool.free_slots = list(range(1, config["max_running_requests"] + 1))
        get_context().override("scheduler.pp_max_micro_batch_size_default",
                               pp_max_micro_batch_size=config["max_running_requests"])
        chunk = config["chunked_prefill_size"]
        s.chunked_prefill_size = chunk if chunk > 0 else None
        s.max_prefill_tokens = config["max_prefill_tokens"]
        priority = {name: config.get(name, default) for name, default in PRIORITY_DEFAULTS.items()}
        get_context().override("refcheck.priority", **priority)
        enabled, low_first = priority["enable_priority_scheduling"], priority["schedule_low_priority_values_first"]
        s.enable_priority_scheduling, s.schedule_low_priority_values_first = enabled, low_first
        s.priority_scheduling_preemption_threshold = priority["priority_scheduling_preemption_threshold"]
        s.enable_priority_preemption = enabled and not priority["disable_priority_preemption"]
        s.policy = SchedulePolicy(config["schedule_policy"], s.tree_cache, False, enabled, low_first)
        init = min(0.7 * config["schedule_conservativeness"], 1.0)
        floor = min(init * 0.14, 1.0)
        s.new_token_ratio_tracker = NewTokenRatioTracker(init=init, min=floor, decay=(init - floor) / 600,
                                                         current=init)
        s.waiting_queue = []
        s.running_batch = ScheduleBatch(reqs=[], batch_is_full=False)
        s.last_batch = None
        s.chunked_req = None
        return s


class SglangOracle:
    """SGLang's own Scheduler as the harness's oracle (tools/refcheck/adapter.py): the release installed here."""

    def __init__(self):
        import sglang

        self.release, self.factory = sglang.__version__, SglangFactory()

    def run(self, workload: dict, max_steps: int = MAX_STEPS, timings: list | None = None) -> list[list]:
        return run_sglang(self.factory, workload, max_steps, timings)


def _add(s: Scheduler, rid: int, request: dict, eos: int):
    params = SamplingParams(max_new_tokens=request["max_new_tokens"], temperature=0,
                            ignore_eos=request["ignore_eos"], stop_token_ids=[eos])
    params.normalize(None)
    params.verify(1024)
    s.handle_generate_request(TokenizedGenerateReqInput(
        rid=str(rid), input_text=None, input_ids=array("q", request["prompt"]), input_embeds=None, mm_inputs=None,
        token_type_ids=None, sampling_params=params, return_logprob=False, logprob_start_len=-1,
        top_logprobs_num=0, token_ids_logprob=None, stream=False, priority=request.get("priority")))
    return s.waiting_queue[-1]


def tree_record(tree_cache) -> list:
    """The tree depth-first, children by their first token: [depth, tokens, slots, lock count] per node."""
    core = tree_cache.tree_core
    out = []

    def walk(node, depth):
        for _, child in sorted(node.children.items(), key=lambda kv: kv[0]):
            data = child.component_data[0]
            out.append([depth, list(child.key.token_ids), data.value.tolist() if data.value is not None else None,
                        data.lock_ref])
            walk(child, depth + 1)
    walk(core.root_node, 0)
    return out


def run_sglang(factory: SglangFactory, workload: dict, max_steps: int = MAX_STEPS, timings: list | None = None
               ) -> list[list]:
    """Every step's record, stepping as `event_loop_normal` does: get_next_batch_to_run, run_batch (without the
    forward pass; the fake model's tokens as the sampled ones), process_batch_result; on_idle when there is no batch.
    `timings` gets each step's seconds in get_next_batch_to_run and in process_batch_result."""
    config = workload["config"]
    s = factory.reset(config)
    model = FakeModel(workload)
    arrivals = [r["arrival"] for r in workload["requests"]]
    pending, reqs, records, idle = list(range(len(arrivals))), {}, [], 0
    for step in range(1, max_steps + 1):
        while pending and arrivals[pending[0]] < step:
            i = pending.pop(0)
            reqs[i] = _add(s, i, workload["requests"][i], config["eos"])
        before = {r.rid for r in s.running_batch.reqs}
        start = time.perf_counter()
        plan = s.get_next_batch_to_run(running_batch=s.running_batch, last_batch=s.last_batch)
        scheduled_s = time.perf_counter() - start
        s.running_batch, batch = plan.running_batch, plan.batch_to_run
        retracted = [int(r.rid) for r in s.waiting_queue if r.rid in before]
        finished, processed_s = [], 0.0
        if batch is None:
            kind, rows = "idle", []
            s.on_idle()
        else:
            extend = batch.forward_mode.is_extend()
            kind = "extend" if extend else "decode"
            rows = [[int(r.rid), r.extend_len] if extend else int(r.rid) for r in batch.reqs]
            done_before = {r.rid for r in batch.reqs if r.finished()}
            result = s.run_batch(batch)
            result.next_token_ids = torch.tensor(
                [model.token(int(r.rid), len(r.origin_input_ids) + len(r.output_ids)) for r in batch.reqs],
                dtype=result.next_token_ids.dtype)
            start = time.perf_counter()
            s.process_batch_result(batch, result)
            processed_s = time.perf_counter() - start
            finished = [[int(r.rid), _reason(r)] for r in batch.reqs if r.finished() and r.rid not in done_before]
        s.last_batch = batch
        if timings is not None:
            timings.append((scheduled_s, processed_s))
        slots = sorted([i, *s.req_to_token_pool.req_to_token[r.kv.req_pool_idx, :r.kv.kv_committed_len].tolist()]
                       for i, r in reqs.items() if r.kv.holds_kv)
        tree = s.tree_cache
        records.append(step_record(
            kind, rows, [int(r.rid) for r in s.waiting_queue], [int(r.rid) for r in s.running_batch.reqs],
            retracted, finished, slots, tree_record(tree),
            [s.token_to_kv_pool_allocator.available_size(), tree.evictable_size(), tree.protected_size()],
            s.new_token_ratio_tracker.current))
        idle = idle + 1 if batch is None else 0
        if not pending and (all(r.finished() for r in reqs.values()) or idle >= 3):
            break
    return records

