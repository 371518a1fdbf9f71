"""`make sglang-check`: the SGLang twin against SGLang 0.5.23's own Scheduler on random workloads, per mode.

    python -m tools.sglang_check [--workloads N] [--modes lpm,fcfs,...] [--seed S] [--record tests/data/F]

Prints per mode "N/N workloads identical", or the first difference with a workload shrunk to show it.
`--record` also writes the workloads and SGLang's step records as golden traces for
tests/test_sglang_twin_golden.py. Run it in the environment `make sglang-check` builds (SGLang installed).
Shaped like tools/vllm_check/ so that both can move onto one harness with an adapter per system."""

from __future__ import annotations

import argparse
import gzip
import json
import random
import time

from tools.sglang_check.sglang_run import SglangFactory, run_sglang
from tools.sglang_check.twin_run import run_twin
from tools.sglang_check.workloads import FIELDS, MODES, first_difference, random_workload


def shrink(factory: SglangFactory, workload: dict) -> dict:
    """A smaller workload that still differs: requests dropped, then prompts and max_new_tokens cut, while it does."""
    def differs(w):
        return first_difference(run_sglang(factory, w), run_twin(w)) is not None

    changed = True
    while changed:
        changed = False
        for i in range(len(workload["requests"])):
            smaller = {**workload, "requests": workload["requests"][:i] + workload["requests"][i + 1:]}
            if smaller["requests"] and differs(smaller):
                workload, changed = smaller, True
                break
        for i, r in enumerate(workload["requests"]):
            for cut in ({"max_new_tokens": r["max_new_tokens"] // 2}, {"prompt": r["prompt"][:len(r["prompt"]) // 2]}):
                trial = {**r, **cut}
                if trial["max_new_tokens"] < 1 or not trial["prompt"] or trial == r:
                    continue
                smaller = {**workload, "requests": [*workload["requests"][:i], trial, *workload["requests"][i + 1:]]}
                if differs(smaller):
                    workload, changed = smaller, True
    return workload


def check_mode(factory: SglangFactory, mode: str, count: int, seed: int, golden: list | None) -> bool:
    rng = random.Random(f"{seed}:{mode}")
    start, identical = time.perf_counter(), 0
    for n in range(count):
        workload = random_workload(rng, mode)
        expected = run_sglang(factory, workload)
        difference = first_difference(expected, run_twin(workload))
        if difference is None:
            identical += 1
            if golden is not None:
                golden.append({"workload": workload, "steps": expected})
            continue
        small = shrink(factory, workload)
        step, field = first_difference(run_sglang(factory, small), run_twin(small))
        print(f"{mode}: workload {n} differs at step {step + 1} ({field}); shrunk workload:\n{json.dumps(small)}")
        for name, records in (("SGLang", run_sglang(factory, small)), ("twin", run_twin(small))):
            for k in range(max(0, step - 1), step + 1):
                print(f"  {name} step {k + 1}: " + (str(dict(zip(FIELDS, records[k], strict=True)))
                                                   if k < len(records) else f"(no step: {len(records)} steps)"))
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
    factory = SglangFactory()
    golden = [] if args.record else None
    ok = all([check_mode(factory, mode, args.workloads, args.seed, golden) for mode in args.modes.split(",")])
    if args.record:
        with gzip.open(args.record, "wt") as f:
            json.dump(golden, f, separators=(",", ":"))
        print(f"wrote {len(golden)} golden traces to {args.record}")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
