"""The SGLang twin against decisions recorded from SGLang 0.5.23's own Scheduler (`make sglang-check
SGLANG_CHECK_ARGS="--workloads 30 --seed 7 --record"`): every step's batch kind and rows, waiting order, running
batch, retractions, finishes, each request's KV slots, the radix tree (keys, slots, lock counts), the pool's sizes
and new_token_ratio, for random workloads under lpm, fcfs, dfs-weight and lof, chunked prefill, small pools that
retract, page_size 2 to 16, arrivals over time, EOS stops, shared prompts, priority scheduling and prompts over SGLang's
input limit. The twin is driven through the adapter the engine uses (tools/refcheck/sglang/twin.py). Replayed through
the reference-check harness (tools/refcheck/golden.py), as vLLM's are."""

from collections import Counter
from functools import cache

from tools.refcheck.golden import golden_path, read_golden, replay
from tools.refcheck.sglang import ADAPTER

RELEASE = ADAPTER.releases[-1]
KIND, RETRACTED, FINISHED, TREE, RATIO = (ADAPTER.fields.index(f)
                                          for f in ("kind", "retracted", "finished", "tree", "ratio"))


@cache
def golden():
    return read_golden(golden_path("sglang", RELEASE))


def test_the_twin_makes_sglangs_decisions_on_every_recorded_workload():
    recorded = golden()
    assert (recorded.system, recorded.release) == ("sglang", RELEASE)
    assert Counter(t["workload"]["mode"] for t in recorded.traces).keys() >= set(ADAPTER.modes)
    assert sum(len(t["steps"]) for t in recorded.traces) > 4000
    differing = replay(ADAPTER, recorded)
    assert not differing, f"{len(differing)} differ from SGLang; first (workload, mode, step, field): {differing[0]}"


def test_the_recorded_workloads_retract_stop_at_eos_share_prefixes_and_abort_over_long_prompts():
    traces = golden().traces
    records = [step for t in traces for step in t["steps"]]
    assert sum(1 for r in records if r[RETRACTED]) >= 15
    jumps = sum(1 for t in traces for a, b in zip(t["steps"], t["steps"][1:], strict=False)
                if b[RATIO] > a[RATIO] + 0.05)
    assert jumps >= 10  # new_token_ratio set high again after a retraction
    assert sum(1 for r in records if any(reason == "eos" for _, reason in r[FINISHED])) > 300
    assert sum(1 for r in records if any(depth > 0 for depth, *_ in r[TREE])) > 1000  # shared prefixes, split
    aborted = [rid for r in records for rid, reason in r[FINISHED] if reason == "abort"]
    assert len(aborted) >= 20  # over-long prompts: a one-token stub prefilled, then aborted, as SGLang does


def _by_mode(mode):
    return [t for t in golden().traces if t["workload"]["mode"] == mode]


def _common_prefix(a, b):
    return next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def test_each_leaning_mode_leans_on_its_part():
    """"eos": most requests stop at EOS (under half elsewhere); "arrivals": requests arriving past step 40, into a
    run already going (none elsewhere); "shared": most pairs of prompts share a prefix of 2 or more tokens (about
    a fifth elsewhere), and a fifth or more of the prompts are repeats."""
    eos = [reason for t in _by_mode("eos") for step in t["steps"] for _, reason in step[FINISHED]]
    assert eos.count("eos") > 0.7 * len(eos)
    late = [r for t in _by_mode("arrivals") for r in t["workload"]["requests"] if r["arrival"] > 40]
    assert len(late) > 60
    prompts = [[r["prompt"] for r in t["workload"]["requests"]] for t in _by_mode("shared")]
    pairs = [_common_prefix(a, b) for ps in prompts for i, a in enumerate(ps) for b in ps[:i]]
    assert sum(k >= 2 for k in pairs) > 0.5 * len(pairs)
    repeats = sum(len(ps) - len({tuple(p) for p in ps}) for ps in prompts)
    assert repeats > 0.2 * sum(len(ps) for ps in prompts)


def test_the_priority_mode_preempts_and_retracts_both_ways_in_both_directions():
    """A request sent back in a prefill step was preempted by priority (a retraction happens in a decode step);
    the recorded workloads preempt, retract, and cover both directions, both retraction policies and preemption
    on and off."""
    traces = _by_mode("priority")
    configs = [t["workload"]["config"] for t in traces]
    assert all(c["enable_priority_scheduling"] and c["schedule_policy"] in ("fcfs", "lof") for c in configs)
    for name in ("schedule_low_priority_values_first", "disable_priority_preemption"):
        assert {c[name] for c in configs} == {False, True}
    assert {c["retraction_policy"] for c in configs} == {"length", "priority"}
    preempted = [t for t in traces if any(s[KIND] == "extend" and s[RETRACTED] for s in t["steps"])]
    retracted = [t for t in traces if any(s[KIND] == "decode" and s[RETRACTED] for s in t["steps"])]
    assert len(preempted) >= 5 and retracted
    assert not [t for t in preempted if t["workload"]["config"]["disable_priority_preemption"]]
    requests = [r for t in traces for r in t["workload"]["requests"]]
    assert any(r["priority"] is None for r in requests)  # sent without one: the least important
