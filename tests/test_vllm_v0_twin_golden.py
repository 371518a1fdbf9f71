"""The V0 twin against decisions recorded from vLLM 0.10.2's own V0 Scheduler (`make v0-check
V0_CHECK_ARGS="--workloads 48 --record"`): every step's scheduled groups and chunks (with the blocks the prefix
cache lets the model skip), batched tokens, preemptions by recompute or swap, the swap pairs, ignored and finished
requests, the three queues, GPU and CPU block tables and free blocks, and the error that stopped a run, for 48
random workloads of each mode (tools/refcheck/vllm_v0/workloads.py). Replayed through the reference-check harness
(tools/refcheck/golden.py). V0's block hashes vary between processes (hash(None) is an address in CPython 3.11);
they decide only a tie in the evictor's heap, and the recorded workloads replay identically in fresh processes."""

from collections import Counter
from functools import cache

from tools.refcheck.golden import golden_path, read_golden, replay
from tools.refcheck.vllm_v0 import ADAPTER
from tools.refcheck.vllm_v0.workloads import CPU_SWAP_SPACE, FIELDS

FIELD = {name: i for i, name in enumerate(FIELDS)}


@cache
def golden():
    return read_golden(golden_path("vllm_v0", "0.10.2"))


def records(mode: str | None = None) -> list[list]:
    return [step for t in golden().traces if mode in (None, t["workload"]["mode"]) for step in t["steps"]]


def test_the_twin_makes_v0s_decisions_on_every_recorded_workload():
    recorded = golden()
    assert (recorded.system, recorded.release) == ("vllm_v0", "0.10.2")
    assert Counter(t["workload"]["mode"] for t in recorded.traces) == {mode: 48 for mode in ADAPTER.modes}
    assert sum(len(t["steps"]) for t in recorded.traces) > 8000
    differing = replay(ADAPTER, recorded)
    assert not differing, f"{len(differing)} differ from V0; first (workload, mode, step, field): {differing[0]}"


def test_the_recorded_workloads_swap_both_ways_recompute_ignore_and_hit_the_cache():
    steps = records()
    count = {name: sum(1 for r in steps if r[FIELD[name]]) for name in ("swap_out", "swap_in", "ignored")}
    assert count["swap_out"] > 30 and count["swap_in"] > 30 and count["ignored"] > 30
    modes = Counter(how for r in steps for _, how in r[FIELD["preempted"]])
    assert modes["recompute"] > 100 and modes["swap"] > 30
    assert sum(1 for r in steps for s in r[FIELD["scheduled"]] if s[2]) > 300  # computed blocks skipped
    assert sum(1 for r in steps if r[FIELD["error"]] == CPU_SWAP_SPACE) >= 5  # V0's full CPU pool
    assert sum(1 for r in steps for _, reason in r[FIELD["finished"]] if reason == "stopped") > 100  # EOS


def test_v0_never_swaps_in_in_a_step_that_preempted_nor_prefills_while_something_is_swapped():
    """V0's own recorded steps (chunked prefill off): a step that preempted swapped nothing in, and while the
    swapped queue held a request no new request was admitted."""
    preempted_with_swapped = 0
    for trace in golden().traces:
        if trace["workload"]["config"]["enable_chunked_prefill"]:
            continue
        swapped, waiting = [], []
        for r in trace["steps"]:
            if r[FIELD["preempted"]]:
                assert not r[FIELD["swap_in"]]
                preempted_with_swapped += bool(swapped)
            if swapped:
                assert not {rid for rid, *_ in r[FIELD["scheduled"]]} & set(waiting)
            swapped, waiting = r[FIELD["swapped"]], r[FIELD["waiting"]]
    assert preempted_with_swapped >= 5


def test_the_watermark_makes_v0_ignore_prompts_the_pool_could_hold():
    """can_allocate says NEVER when the pool less the watermark (1% of it) cannot hold a prompt: in V0's recorded
    watermark runs prompts that would fit the bare pool are ignored, and every ignored one (its prompt, or its
    prompt and outputs after a recompute) is over the pool less the watermark."""
    only_the_watermark = 0
    for trace in golden().traces:
        if trace["workload"]["mode"] != "watermark":
            continue
        cfg, requests = trace["workload"]["config"], trace["workload"]["requests"]
        blocks, watermark = cfg["num_gpu_blocks"], int(0.01 * cfg["num_gpu_blocks"])
        for r in trace["steps"]:
            for rid in r[FIELD["ignored"]]:
                prompt, most = len(requests[rid]["prompt"]), len(requests[rid]["prompt"]) + requests[rid]["max_tokens"]
                assert blocks - -(-most // cfg["block_size"]) < watermark
                only_the_watermark += 0 <= blocks - -(-prompt // cfg["block_size"]) < watermark
    assert only_the_watermark >= 3
