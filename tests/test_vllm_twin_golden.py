"""The vLLM twin against decisions recorded from vLLM's own V1 Scheduler, per release it mirrors (0.32, 0.33:
`make vllm-check VLLM=R VLLM_CHECK_ARGS="--workloads 64 --record"`): every step's scheduled tokens, drafts,
admissions, preemptions, finishes, queue order and block table, for a few hundred random workloads (FCFS with
prefix caching off and on, priority, async scheduling, n-gram speculation, and "pool": a max_model_len beyond
what the pool holds, prompts larger than the pool among them). Replayed through the reference-check harness
(tools/refcheck/golden.py)."""

from collections import Counter
from functools import cache

import pytest

from tools.refcheck.golden import golden_path, read_golden, replay
from tools.refcheck.vllm import ADAPTER

RELEASES = ADAPTER.releases


@cache
def golden(release):
    return read_golden(golden_path("vllm", release))


@pytest.mark.parametrize("release", RELEASES)
def test_the_twin_makes_vllms_decisions_on_every_recorded_workload(release):
    recorded = golden(release)
    assert (recorded.system, recorded.release) == ("vllm", release)
    traces = recorded.traces
    assert len(traces) >= 300 and Counter(t["workload"]["mode"] for t in traces).keys() >= set(ADAPTER.modes)
    assert sum(len(t["steps"]) for t in traces) > 5000
    differing = replay(ADAPTER, recorded)
    assert not differing, f"{len(differing)} differ from vLLM; first (workload, mode, step, field): {differing[0]}"


@pytest.mark.parametrize("release", RELEASES)
def test_the_recorded_workloads_preempt_hit_the_prefix_cache_and_speculate(release):
    traces = golden(release).traces
    records = [step for t in traces for step in t["steps"]]
    assert sum(1 for r in records if r[4]) > 100  # preemptions
    assert sum(1 for r in records if r[3]) > 100  # resumed after preemption
    assert sum(1 for r in records if r[1]) > 100  # scheduled drafts
    assert any(-1 in drafts[1:] for r in records for drafts in r[1])  # a resumed decode padded with placeholders
    assert sum(1 for t in traces if t["workload"]["config"]["long_prefill_token_threshold"]) > 30
    assert sum(1 for r in records if any(reason == "eos" for _, reason in r[5])) > 50  # EOS finishes


@pytest.mark.parametrize("release", RELEASES)
def test_a_prompt_larger_than_the_pool_waits_for_good_and_holds_up_the_queue_as_in_vllm(release):
    """vLLM's Scheduler queues such a request (only its engine's start-up check keeps it out): it never fits, and
    at the head of the waiting queue no request behind it is admitted."""
    traces = [t for t in golden(release).traces if t["workload"]["mode"] == "pool"]
    held_up = 0
    for trace in traces:
        cfg, requests = trace["workload"]["config"], trace["workload"]["requests"]
        capacity = cfg["num_kvcache_blocks"] * cfg["kvcache_block_size"]
        waiting = trace["steps"][-1][6]
        if waiting and len(requests[waiting[0]]["prompt"]) > capacity and len(waiting) > 1:
            held_up += 1
    assert held_up >= 10


@pytest.mark.parametrize("release", RELEASES)
def test_the_recorded_workloads_preempt_among_same_step_arrivals_of_equal_priority(release):
    """Requests arriving in one step with one priority differ only in their arrival stamps, which vLLM takes in
    the order they are added: the golden traces hold priority preemptions where that order picked the victim."""
    ties = 0
    for trace in golden(release).traces:
        requests = trace["workload"]["requests"]
        if trace["workload"]["config"]["queue_policy"] != "priority":
            continue
        key = [(r["priority"], r["arrival"]) for r in requests]
        ties += any(key[q] == key[p] for step in trace["steps"] for p in step[4] for q in {*step[7], *step[4]} - {p})
    assert ties >= 8
