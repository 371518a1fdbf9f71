"""The SGLang twin against decisions recorded from SGLang 0.5.23's own Scheduler (`make sglang-check` with
--record): every step's batch kind and rows, waiting order, running batch, retractions, finishes, each request's
KV slots, the radix tree (keys, slots, lock counts), the pool's sizes and new_token_ratio, for random workloads
under lpm, fcfs, dfs-weight and lof, chunked prefill, small pools that retract, and page_size 2 to 16."""

import gzip
import json
from collections import Counter
from pathlib import Path

from tools.sglang_check.twin_run import run_twin
from tools.sglang_check.workloads import FIELDS, first_difference

GOLDEN = Path(__file__).parent / "data" / "sglang_twin_golden.json.gz"
RETRACTED, FINISHED, TREE, RATIO = (FIELDS.index(f) for f in ("retracted", "finished", "tree", "ratio"))


def _traces():
    with gzip.open(GOLDEN, "rt") as f:
        return json.load(f)


def test_the_twin_makes_sglangs_decisions_on_every_recorded_workload():
    traces = _traces()
    assert Counter(t["workload"]["mode"] for t in traces).keys() >= {"lpm", "fcfs", "dfs-weight", "lof", "chunked",
                                                                     "retract", "paged"}
    assert sum(len(t["steps"]) for t in traces) > 3000
    differing = []
    for n, trace in enumerate(traces):
        difference = first_difference(trace["steps"], run_twin(trace["workload"]))
        if difference:
            differing.append((n, trace["workload"]["mode"], *difference))
    assert not differing, f"{len(differing)} differ from SGLang; first (workload, mode, step, field): {differing[0]}"


def test_the_recorded_workloads_retract_stop_at_eos_and_share_prefixes_in_the_tree():
    traces = _traces()
    records = [step for t in traces for step in t["steps"]]
    assert sum(1 for r in records if r[RETRACTED]) >= 15
    jumps = sum(1 for t in traces for a, b in zip(t["steps"], t["steps"][1:], strict=False)
                if b[RATIO] > a[RATIO] + 0.05)
    assert jumps >= 10  # new_token_ratio set high again after a retraction
    assert sum(1 for r in records if any(reason == "eos" for _, reason in r[FINISHED])) > 300
    assert sum(1 for r in records if any(depth > 0 for depth, *_ in r[TREE])) > 1000  # shared prefixes, split
