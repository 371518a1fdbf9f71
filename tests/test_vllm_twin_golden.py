"""The vLLM twin against decisions recorded from vLLM's own V1 Scheduler (vLLM 0.32, `make vllm-check` with
--record): every step's scheduled tokens, drafts, admissions, preemptions, finishes, queue order and block table,
for a few hundred random workloads (FCFS with prefix caching off and on, priority, async scheduling, n-gram
speculation, and "pool": a max_model_len beyond what the pool holds, prompts larger than the pool among them)."""

import gzip
import json
from collections import Counter
from pathlib import Path

from tools.vllm_check.twin_run import run_twin
from tools.vllm_check.workloads import first_difference

GOLDEN = Path(__file__).parent / "data" / "vllm_twin_golden.json.gz"


def test_the_twin_makes_vllms_decisions_on_every_recorded_workload():
    with gzip.open(GOLDEN, "rt") as f:
        traces = json.load(f)
    assert len(traces) >= 300 and Counter(t["workload"]["mode"] for t in traces).keys() >= {
        "fcfs", "fcfs-prefix", "priority", "async", "spec", "pool"}
    steps = sum(len(t["steps"]) for t in traces)
    assert steps > 5000
    differing = []
    for n, trace in enumerate(traces):
        difference = first_difference(trace["steps"], run_twin(trace["workload"]))
        if difference:
            differing.append((n, trace["workload"]["mode"], *difference))
    assert not differing, f"{len(differing)} differ from vLLM; first (workload, mode, step, field): {differing[0]}"


def test_the_recorded_workloads_preempt_hit_the_prefix_cache_and_speculate():
    with gzip.open(GOLDEN, "rt") as f:
        traces = json.load(f)
    records = [step for t in traces for step in t["steps"]]
    assert sum(1 for r in records if r[4]) > 100  # preemptions
    assert sum(1 for r in records if r[3]) > 100  # resumed after preemption
    assert sum(1 for r in records if r[1]) > 100  # scheduled drafts
    assert any(-1 in drafts[1:] for r in records for drafts in r[1])  # a resumed decode padded with placeholders
    assert sum(1 for t in traces if t["workload"]["config"]["long_prefill_token_threshold"]) > 30
    assert sum(1 for r in records if any(reason == "eos" for _, reason in r[5])) > 50  # EOS finishes


def test_a_prompt_larger_than_the_pool_waits_for_good_and_holds_up_the_queue_as_in_vllm():
    """vLLM's Scheduler queues such a request (only its engine's start-up check keeps it out): it never fits, and
    at the head of the waiting queue no request behind it is admitted."""
    with gzip.open(GOLDEN, "rt") as f:
        traces = [t for t in json.load(f) if t["workload"]["mode"] == "pool"]
    held_up = 0
    for trace in traces:
        cfg, requests = trace["workload"]["config"], trace["workload"]["requests"]
        capacity = cfg["num_kvcache_blocks"] * cfg["kvcache_block_size"]
        waiting = trace["steps"][-1][6]
        if waiting and len(requests[waiting[0]]["prompt"]) > capacity and len(waiting) > 1:
            held_up += 1
    assert held_up >= 10
