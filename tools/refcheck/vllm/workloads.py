"""Random workloads for checking the vLLM twin, the fake model both schedulers are stepped with, and the step
record both drivers write (tools/refcheck/vllm/twin.py, oracle.py).

A workload is plain data (JSON-able): the scheduler settings, the requests (arrival step, prompt, max_tokens,
priority, ignore_eos) and the fake model's seed and vocabulary. Pools are small so preemption is frequent,
prompts share stems so the prefix cache hits, arrivals spread over steps, many in the same step (often with one
priority: then only their arrival stamps, distinct and in the order added, as vLLM stamps them, decide between
them). The "knobs" mode also draws vLLM's own SchedulerConfig knobs and a request's stop_token_ids and min_tokens
(the other modes leave them at vLLM's defaults, so their workloads are as they were). Pure Python: the
golden-trace test replays these without vLLM."""

from __future__ import annotations

import random
from collections.abc import Iterator

from runner.fake import FakeRunner
from scheduler.speculative import accept_drafts
from tools.refcheck.bench_trace import bench_requests
from tools.refcheck.shrink import fewer_or_shorter

EOS = 0
MODES = ("fcfs", "fcfs-prefix", "priority", "async", "spec", "pool", "knobs")
MAX_STEPS = 400


def random_workload(rng: random.Random, mode: str) -> dict:
    """A workload of `mode` (MODES). "pool": a max_model_len beyond what the pool holds (vLLM's engine would refuse
    to start; its Scheduler alone keeps a prompt larger than the pool waiting for good) and prompts up to it."""
    block_size = rng.choice((1, 2, 4, 4, 8))
    num_blocks = rng.randint(3, 24)
    max_model_len = rng.randint(8, 64)
    if mode == "pool":
        num_blocks = rng.randint(2, 8)
        max_model_len = rng.randint(num_blocks * block_size + 1, 2 * num_blocks * block_size + 8)
    max_num_seqs = rng.randint(1, 6)
    chunked = rng.random() < 0.85
    budget = rng.randint(max_num_seqs, 48) if chunked else rng.randint(max_model_len, 2 * max_model_len)
    budget = max(budget, max_num_seqs)
    config = {"max_num_seqs": max_num_seqs, "max_num_batched_tokens": budget, "max_model_len": max_model_len,
              "num_kvcache_blocks": num_blocks, "kvcache_block_size": block_size, "chunked_prefill": chunked,
              "enable_prefix_caching": mode != "fcfs" and (mode == "fcfs-prefix" or rng.random() < 0.7),
              "queue_policy": "priority" if mode == "priority" or mode == "pool" and rng.random() < 0.5 else "fcfs",
              "eos": EOS,
              "long_prefill_token_threshold": rng.choice((0, 0, 0, rng.randint(1, max_model_len)))}
    if mode == "knobs":
        config |= knobs(rng, config)
    if mode == "spec":
        low, k = rng.randint(1, 3), rng.randint(1, 4)
        config |= {"num_speculative_tokens": k, "prompt_lookup_min": low, "prompt_lookup_max": rng.randint(low, 4)}
        if config["long_prefill_token_threshold"] <= k:  # below 1 + k vLLM 0.32 fails its own assertion
            config["long_prefill_token_threshold"] = 0
    vocab = rng.choice((3, 6, 20, 200))
    longest = max_model_len - 1 if mode == "pool" else min(max_model_len - 1, num_blocks * block_size)
    stems = [[rng.randint(1, vocab) for _ in range(rng.randint(1, longest))] for _ in range(rng.randint(1, 3))]
    requests = []
    for _ in range(rng.randint(1, 10)):
        n = rng.randint(1, longest)
        prompt = (rng.choice(stems) + [rng.randint(1, vocab) for _ in range(n)])[:n] if rng.random() < 0.6 else \
            [rng.randint(1, vocab) for _ in range(n)]
        requests.append({"arrival": rng.choice((0, 0, rng.randint(0, 20))), "prompt": prompt,
                         "max_tokens": rng.randint(1, 24), "priority": rng.randint(0, 3),
                         "ignore_eos": rng.random() < 0.2})
    requests.sort(key=lambda r: r["arrival"])  # request ids in arrival order, as an engine numbers them
    if mode == "knobs":
        for r in requests:
            r |= stop_params(rng, vocab, r["max_tokens"])
    return {"mode": mode, "config": config, "requests": requests, "seed": rng.randint(0, 2**31), "vocab": vocab}


def knobs(rng: random.Random, config: dict) -> dict:
    """vLLM's own SchedulerConfig knobs the twin models, each away from its default about half the time, and the
    queue policy either way (the other modes leave the knobs at vLLM's defaults)."""
    budget, seqs = config["max_num_batched_tokens"], config["max_num_seqs"]
    return {"scheduler_reserve_full_isl": rng.random() < 0.5,
            "watermark": rng.choice((0.0, 0.0, 0.05, 0.1, 0.2, 0.3)),
            "max_num_scheduled_tokens": rng.choice((0, rng.randint(1, budget))),
            "max_num_active_seqs": rng.choice((0, rng.randint(1, seqs))),
            "long_prefill_token_threshold_adaptive": rng.random() < 0.3,
            "queue_policy": rng.choice(("fcfs", "priority"))}


def stop_params(rng: random.Random, vocab: int, max_tokens: int) -> dict:
    """A request's stop tokens (vLLM's SamplingParams.stop_token_ids) and min_tokens (at most max_tokens, as vLLM
    requires), for about half the requests."""
    if rng.random() < 0.5:
        return {}
    return {"stop_token_ids": sorted({rng.randint(1, vocab) for _ in range(rng.randint(1, 2))}),
            "min_tokens": rng.choice((0, rng.randint(1, max_tokens)))}


def bench_workload(num_requests: int, seed: int = 0) -> dict:
    """The benchmark's trace (bench/bench_twins.py): tools/refcheck/bench_trace.py's requests (stopping at EOS
    or their output length) under FCFS with chunked prefill and prefix caching, max_num_seqs=64, a budget of 1024
    tokens, 500 blocks of 16 (it preempts)."""
    requests = [{"arrival": r["arrival"], "prompt": r["prompt"], "max_tokens": r["output"], "priority": 0,
                 "ignore_eos": False} for r in bench_requests(num_requests, seed)]
    config = {"max_num_seqs": 64, "max_num_batched_tokens": 1024, "max_model_len": 1024, "num_kvcache_blocks": 500,
              "kvcache_block_size": 16, "chunked_prefill": True, "enable_prefix_caching": True, "queue_policy": "fcfs",
              "eos": EOS, "long_prefill_token_threshold": 0}
    return {"mode": "fcfs-prefix", "config": config, "requests": requests, "seed": seed, "vocab": 400}


class FakeModel:
    """The tokens both schedulers' steps produce: a deterministic function of (request, position), EOS among
    them, so a request writes the same tokens however it is scheduled; drafts are checked against it. Below a
    request's min_tokens outputs it never samples a stop token (EOS unless ignore_eos, its stop_token_ids), as
    vLLM's sampler masks them (its min-tokens logits processor): min_tokens acts there, not in the Scheduler."""

    def __init__(self, workload: dict):
        self._runner = FakeRunner(10**9, eos=EOS, seed=workload["seed"], low=EOS, high=workload["vocab"])
        self._requests = workload["requests"]

    def sample(self, request_id: int, num_tokens: int, drafts: list[int]) -> list[int]:
        """The accepted drafts, then the model's own token, for a request of `num_tokens` known tokens."""
        model = [self._token(request_id, num_tokens + j) for j in range(len(drafts) + 1)]
        return accept_drafts(drafts, model)

    def _token(self, request_id: int, position: int) -> int:
        token, r = self._runner.next_token(request_id, position), self._requests[request_id]
        if position - len(r["prompt"]) < r.get("min_tokens", 0):
            stops = {*r.get("stop_token_ids", ()), *(() if r["ignore_eos"] else (EOS,))}
            token = next(t for t in (token, *range(1, len(stops) + 2)) if t not in stops)
        return token


def step_record(scheduled, drafts, new, resumed, preempted, finished, waiting, running, tables) -> list:
    """One step as both drivers report it: scheduled [id, tokens] pairs in order, the scheduled drafts by id,
    admitted (new, resumed), preempted, finished [id, reason], the queues in order, and every live request's
    block table."""
    return [scheduled, drafts, new, resumed, sorted(preempted), sorted(finished), waiting, running, tables]


FIELDS = ("scheduled", "drafts", "new", "resumed", "preempted", "finished", "waiting", "running", "tables")


def smaller(workload: dict) -> Iterator[dict]:
    """Workloads one cut smaller, for the shrinker: a request dropped, then a request's max_tokens or prompt
    halved."""
    return fewer_or_shorter(workload, "max_tokens")
