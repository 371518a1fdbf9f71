"""Random workloads for checking the V0 twin (scheduler/vllm_v0/) against vLLM 0.10.2's V0 Scheduler, and the step
record both drivers write (twin.py, oracle.py). The fake model is the vLLM adapter's (tools/refcheck/vllm): a
request writes the same tokens however it is scheduled, EOS among them.

A workload is plain data: V0's settings under V0's names (`config`, the V0Config fields), the requests (arrival
step, prompt, max_tokens, priority, ignore_eos), the fake model's seed and vocabulary. Pools are small, so
preemption is frequent; prompts share stems, so the prefix cache hits. Per mode:
- recompute: preemption by recompute (preemption_mode unset or "recompute"), chunked prefill off;
- swap: preemption_mode "swap" with a CPU pool sometimes too small: V0's RuntimeError is mirrored (the run's last
  record says "cpu_swap_space"), prefix caching on in a third of them;
- chunked: chunked prefill with up to 3 partial prefills and a long-prefill threshold, prefix caching in a third,
  swap in a quarter (then no prefix caching and max_model_len <= the budget, see below);
- prefix: prefix caching on, chunked prefill in half;
- priority: the priority policy (chunked prefill off, where it acts), recompute only;
- arrivals: requests arriving over 40 steps, any of the settings above but swap;
- eos: a vocabulary of 3 to 6 tokens, so EOS ends most requests early; half the requests have stop tokens and a
  min_tokens (V0's StopChecker; below min_tokens the fake model never samples a stop token, as V0's sampler);
- watermark: 100 to 400 GPU blocks of 1 or 2 tokens (the watermark is 1 to 4 blocks), half the prompts within a
  few watermarks of the pool's size, so can_allocate says LATER for the watermark and NEVER for prompts over the
  pool less it.

V0's failure modes the generator avoids, deliberately: priority with swap (V0 queues the swapped victim in waiting
and fails its own assertion at the next admission), a chunked prefill that needs every GPU block (it preempts
itself forever: max_model_len stays under the pool less one block with chunked prefill), a chunked prefill swapped
out with more than the budget left (never swapped in: swap with chunking only where max_model_len <= the budget)
and chunked prefill + prefix caching + swap (a swapped prefill's cached-token count fails V0's assertion). Any
error either side raises ends its run with a record naming it, so a crash the generator did not avoid is still
compared."""

from __future__ import annotations

import random
from collections.abc import Iterator

from tools.refcheck.bench_trace import bench_requests
from tools.refcheck.shrink import fewer_or_shorter
from tools.refcheck.vllm.workloads import EOS, FakeModel, stop_params

MODES = ("recompute", "swap", "chunked", "prefix", "priority", "arrivals", "eos", "watermark")
MAX_STEPS = 400
FIELDS = ("scheduled", "num_batched_tokens", "preempted", "swap_out", "swap_in", "ignored", "finished", "waiting",
          "running", "swapped", "gpu_tables", "cpu_tables", "free", "error")
CPU_SWAP_SPACE = "cpu_swap_space"

__all__ = ["EOS", "FIELDS", "FakeModel", "MAX_STEPS", "MODES", "bench_workload", "error_name", "random_workload",
           "smaller", "step_record"]


def _settings(rng: random.Random, mode: str) -> dict:
    block_size = rng.choice((1, 2, 4, 4, 8))
    num_gpu_blocks = rng.randint(3, 24)
    if mode == "watermark":
        block_size, num_gpu_blocks = rng.choice((1, 2)), rng.randint(100, 400)
    chunked = mode == "chunked" or (mode in ("prefix", "arrivals", "eos") and rng.random() < 0.5)
    prefix = mode == "prefix" or (mode in ("swap", "chunked", "arrivals", "eos", "watermark") and rng.random() < 0.33)
    swap = mode == "swap" or (mode == "chunked" and not prefix and rng.random() < 0.25)
    capacity = num_gpu_blocks * block_size
    max_model_len = rng.randint(8, 64) if mode != "watermark" else capacity + rng.randint(1, 8)
    if chunked:  # a prefill needing every block would preempt itself forever
        max_model_len = min(max_model_len, (num_gpu_blocks - 1) * block_size)
    max_model_len = max(max_model_len, 2)
    max_num_seqs = rng.randint(1, 6)
    if chunked:
        budget = rng.randint(max_num_seqs, 48)
        if swap:  # a swapped prefill with more than the budget left is never swapped in
            budget = max(budget, max_model_len)
    else:
        budget = rng.randint(max_model_len, 2 * max_model_len)
    budget = max(budget, max_num_seqs)
    partial = rng.choice((1, 1, 2, 3)) if chunked else 1
    config = {"num_gpu_blocks": num_gpu_blocks, "block_size": block_size,
              "num_cpu_blocks": rng.randint(0, 2 * num_gpu_blocks) if swap else 0,
              "preemption_mode": "swap" if swap else rng.choice((None, "recompute")),
              "max_num_seqs": max_num_seqs, "max_num_batched_tokens": budget, "max_model_len": max_model_len,
              "enable_chunked_prefill": chunked, "max_num_partial_prefills": partial,
              "max_long_partial_prefills": rng.randint(1, partial),
              "long_prefill_token_threshold": rng.choice((0, rng.randint(1, max_model_len))) if partial > 1 else 0,
              "enable_prefix_caching": prefix, "policy": "priority" if mode == "priority" else "fcfs", "eos": EOS}
    if swap and rng.random() < 0.7:  # mostly room enough on the CPU; else V0's RuntimeError
        config["num_cpu_blocks"] = rng.randint(num_gpu_blocks, 3 * num_gpu_blocks)
    return config


def random_workload(rng: random.Random, mode: str) -> dict:
    """A workload of `mode` (MODES), drawn from `rng` alone."""
    config = _settings(rng, mode)
    vocab = rng.choice((3, 4, 6)) if mode == "eos" else rng.choice((3, 6, 20, 200))
    capacity = config["num_gpu_blocks"] * config["block_size"]
    longest = max(1, min(config["max_model_len"] - 1, capacity))
    if mode == "watermark":
        longest = config["max_model_len"] - 1
    stems = [[rng.randint(1, vocab) for _ in range(rng.randint(1, longest))] for _ in range(rng.randint(1, 3))]
    spread = 40 if mode == "arrivals" else 20
    requests = []
    for _ in range(rng.randint(1, 10)):
        n = rng.randint(1, longest)
        if mode == "watermark":  # about the pool less the watermark: over it NEVER fits, just under it waits
            watermark_tokens = max(1, config["num_gpu_blocks"] // 100) * config["block_size"]
            n = rng.randint(longest // 2, longest) if rng.random() < 0.5 else \
                rng.randint(capacity - 3 * watermark_tokens, min(longest, capacity))
        prompt = (rng.choice(stems) + [rng.randint(1, vocab) for _ in range(n)])[:n] if rng.random() < 0.6 else \
            [rng.randint(1, vocab) for _ in range(n)]
        arrival = rng.randint(0, spread) if mode == "arrivals" else rng.choice((0, 0, rng.randint(0, spread)))
        requests.append({"arrival": arrival, "prompt": prompt, "max_tokens": rng.randint(1, 24),
                         "priority": rng.randint(0, 3), "ignore_eos": rng.random() < (0.05 if mode == "eos" else 0.2)})
    requests.sort(key=lambda r: r["arrival"])  # request ids in arrival order, as an engine numbers them
    if mode == "eos":
        for r in requests:
            r |= stop_params(rng, vocab, r["max_tokens"])
    return {"mode": mode, "config": config, "requests": requests, "seed": rng.randint(0, 2**31), "vocab": vocab}


def bench_workload(num_requests: int, seed: int = 0) -> dict:
    """The benchmark's trace (bench/bench_twins.py): tools/refcheck/bench_trace.py's requests under V0's default
    scheduler (chunked prefill off) with prefix caching, max_num_seqs=64, 500 GPU blocks of 16 and preemption by
    swap to 1000 CPU blocks (it preempts and swaps)."""
    requests = [{"arrival": r["arrival"], "prompt": r["prompt"], "max_tokens": r["output"], "priority": 0,
                 "ignore_eos": False} for r in bench_requests(num_requests, seed)]
    config = {"num_gpu_blocks": 500, "block_size": 16, "num_cpu_blocks": 1000, "preemption_mode": "swap",
              "max_num_seqs": 64, "max_num_batched_tokens": 2048, "max_model_len": 1024,
              "enable_chunked_prefill": False, "max_num_partial_prefills": 1, "max_long_partial_prefills": 1,
              "long_prefill_token_threshold": 0, "enable_prefix_caching": True, "policy": "fcfs", "eos": EOS}
    return {"mode": "swap", "config": config, "requests": requests, "seed": seed, "vocab": 400}


def error_name(error: BaseException) -> str:
    """How a run's last record names the error that stopped it: V0's CPU swap-space RuntimeError, or its type."""
    if isinstance(error, RuntimeError) and "lack of CPU swap space" in str(error):
        return CPU_SWAP_SPACE
    return type(error).__name__


def step_record(scheduled, num_batched_tokens, preempted, swap_out, swap_in, ignored, finished, waiting, running,
                swapped, gpu_tables, cpu_tables, free, error=None) -> list:
    """One step as both drivers report it: scheduled [id, token_chunk_size, computed_block_nums] in V0's order,
    SchedulerOutputs.num_batched_tokens, preempted [id, "recompute" | "swap"], the swap pairs (CPU blocks by their
    number in the CPU pool), ignored ids, finished [id, "stopped" | "length"], the three queues in order, every
    GPU block table and every swapped group's CPU block table, free [GPU, CPU] blocks, and the error that stopped
    the run (None)."""
    return [scheduled, num_batched_tokens, sorted(preempted), swap_out, swap_in, ignored, sorted(finished), waiting,
            running, swapped, sorted(gpu_tables), sorted(cpu_tables), free, error]


def error_record(error: BaseException) -> list:
    return step_record([], 0, [], [], [], [], [], [], [], [], [], [], [], error_name(error))


def smaller(workload: dict) -> Iterator[dict]:
    """Workloads one cut smaller, for the shrinker: a request dropped, then a request's max_tokens or prompt
    halved."""
    return fewer_or_shorter(workload, "max_tokens")
