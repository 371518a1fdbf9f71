"""How long a four-config comparison takes on the generated 200-request workload (fake runner), and what
recording and measuring add to the bare engine runs (the baseline, measured in the same process):

    python -m bench.bench_compare [--requests 200]
"""

import argparse
import time
from dataclasses import replace

from engine.analysis.compare import GENERATED_CONFIG, Variant, compare, generated_workload, same_capacity
from engine.run.engine import Engine
from engine.run.recipe import RunSpec


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    workload = generated_workload(args.requests)
    base = GENERATED_CONFIG
    variants = [Variant("prefill-first", base), Variant("decode-first", replace(base, prefill_first=False)),
                Variant("block size 4", same_capacity(base, 4)), Variant("block size 64", same_capacity(base, 64))]

    start = time.perf_counter()
    for variant in variants:
        Engine(RunSpec(variant.config, workload), record=False).run()
    bare = time.perf_counter() - start

    start = time.perf_counter()
    runs = compare(variants, workload)
    total = time.perf_counter() - start

    print(f"{args.requests} requests, {len(variants)} configs, fake runner")
    for run in runs:
        print(f"  {run.label:<14} {run.run.num_steps:>5} steps  {run.elapsed_s:6.2f} s")
    print(f"comparison (record + metrics): {total:.2f} s   bare engine runs (record=False): {bare:.2f} s   "
          f"overhead x{total / bare:.1f}")


if __name__ == "__main__":
    main()
