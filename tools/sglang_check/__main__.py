"""`make sglang-check`: the SGLang twin against SGLang 0.5.23's own Scheduler on random workloads, per mode.

    python -m tools.sglang_check [--workloads N] [--modes lpm,fcfs,...] [--seed S] [--record tests/data/F]

Prints per mode "N/N workloads identical", or the first difference with a workload shrunk to show it.
`--record` also writes the workloads and SGLang's step records as golden traces for
tests/test_sglang_twin_golden.py. Run it in the environment `make sglang-check` builds (SGLang installed)."""

from __future__ import annotations

import argparse
import gzip
import json
import random
import time

from tools.sglang_check import ADAPTER
from tools.sglang_check.workloads import first_difference


def shrink(oracle, workload: dict) -> dict:
    """The smallest workload reached by taking ADAPTER.smaller steps that still differ."""
    changed = True
    while changed:
        changed = False
        for trial in ADAPTER.smaller(workload):
            if first_difference(oracle.run(trial), ADAPTER.run_twin(trial)) is not None:
                workload, changed = trial, True
                break
    return workload


def check_mode(oracle, mode: str, count: int, seed: int, golden: list | None) -> bool:
    rng = random.Random(f"{seed}:{mode}")
    start, identical = time.perf_counter(), 0
    for n in range(count):
        workload = ADAPTER.random_workload(rng, mode)
        expected = oracle.run(workload)
        if first_difference(expected, ADAPTER.run_twin(workload)) is None:
            identical += 1
            if golden is not None:
                golden.append({"workload": workload, "steps": expected})
            continue
        small = shrink(oracle, workload)
        expected, actual = oracle.run(small), ADAPTER.run_twin(small)
        step, field = first_difference(expected, actual)
        print(f"{mode}: workload {n} differs at step {step + 1} ({field}); shrunk workload:\n{json.dumps(small)}")
        for name, records in (("SGLang", expected), ("twin", actual)):
            for k in range(max(0, step - 1), step + 1):
                print(f"  {name} step {k + 1}: " + (str(dict(zip(ADAPTER.fields, records[k], strict=True)))
                                                   if k < len(records) else f"(no step: {len(records)} steps)"))
        print(f"{mode}: {identical}/{n + 1} workloads identical before the first difference")
        return False
    print(f"{mode}: {identical}/{count} workloads identical ({time.perf_counter() - start:.0f} s)")
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, default=1000)
    parser.add_argument("--modes", default=",".join(ADAPTER.modes))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--record", help="write golden traces (gzipped JSON) of the identical workloads here")
    args = parser.parse_args()
    oracle = ADAPTER.open_oracle()
    golden = [] if args.record else None
    ok = all([check_mode(oracle, mode, args.workloads, args.seed, golden) for mode in args.modes.split(",")])
    if args.record:
        with gzip.open(args.record, "wt") as f:
            json.dump(golden, f, separators=(",", ":"))
        print(f"wrote {len(golden)} golden traces to {args.record}")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
