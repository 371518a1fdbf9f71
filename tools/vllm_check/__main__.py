"""`make vllm-check`: the vLLM twin against vLLM's own V1 Scheduler on random workloads, per mode.

    python -m tools.vllm_check [--workloads N] [--modes fcfs,priority,...] [--seed S] [--record tests/data/F]

Prints per mode "N/N workloads identical", or the first difference with a workload shrunk to show it.
`--record` also writes the workloads and vLLM's step records as golden traces for tests/test_vllm_twin_golden.py.
Run it in the environment `make vllm-check` builds (vLLM installed)."""

from __future__ import annotations

import argparse
import gzip
import json
import random
import time

from tools.vllm_check.twin_run import run_twin
from tools.vllm_check.vllm_run import VllmFactory, run_vllm
from tools.vllm_check.workloads import FIELDS, MODES, first_difference, random_workload


def shrink(factory: VllmFactory, workload: dict) -> dict:
    """A smaller workload that still differs: requests dropped, then prompts and max_tokens cut, while it does."""
    def differs(w):
        return first_difference(run_vllm(factory, w), run_twin(w)) is not None

    changed = True
    while changed:
        changed = False
        for i in range(len(workload["requests"])):
            smaller = {**workload, "requests": workload["requests"][:i] + workload["requests"][i + 1:]}
            if smaller["requests"] and differs(smaller):
                workload, changed = smaller, True
                break
        for i, r in enumerate(workload["requests"]):
            for cut in ({"max_tokens": r["max_tokens"] // 2}, {"prompt": r["prompt"][:len(r["prompt"]) // 2]}):
                trial = {**r, **cut}
                if trial["max_tokens"] < 1 or not trial["prompt"] or trial == r:
                    continue
                smaller = {**workload, "requests": [*workload["requests"][:i], trial, *workload["requests"][i + 1:]]}
                if differs(smaller):
                    workload, changed = smaller, True
    return workload


def check_mode(factory: VllmFactory, mode: str, count: int, seed: int, golden: list | None) -> bool:
    rng = random.Random(f"{seed}:{mode}")
    start, identical = time.perf_counter(), 0
    for n in range(count):
        workload = random_workload(rng, mode)
        expected = run_vllm(factory, workload)
        difference = first_difference(expected, run_twin(workload))
        if difference is None:
            identical += 1
            if golden is not None:
                golden.append({"workload": workload, "steps": expected})
            continue
        small = shrink(factory, workload)
        step, field = first_difference(run_vllm(factory, small), run_twin(small))
        print(f"{mode}: workload {n} differs at step {step + 1} ({field}); shrunk workload:\n{json.dumps(small)}")
        for name, records in (("vLLM", run_vllm(factory, small)), ("twin", run_twin(small))):
            print(f"  {name}: " + (str(dict(zip(FIELDS, records[step], strict=True))) if step < len(records)
                                   else f"(no step {step + 1}: {len(records)} steps)"))
        print(f"{mode}: {identical}/{n + 1} workloads identical before the first difference")
        return False
    print(f"{mode}: {identical}/{count} workloads identical ({time.perf_counter() - start:.0f} s)")
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, default=1000)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--record", help="write golden traces (gzipped JSON) of the identical workloads here")
    args = parser.parse_args()
    factory = VllmFactory()
    golden = [] if args.record else None
    ok = all([check_mode(factory, mode, args.workloads, args.seed, golden) for mode in args.modes.split(",")])
    if args.record:
        with gzip.open(args.record, "wt") as f:
            json.dump(golden, f, separators=(",", ":"))
        print(f"wrote {len(golden)} golden traces to {args.record}")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
