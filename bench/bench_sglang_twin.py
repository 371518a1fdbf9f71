"""The SGLang twin's scheduling time per step against SGLang 0.5.23's own Scheduler, on the same trace, in one
process.

Run it in the environment `make sglang-check` builds (it ends `make sglang-check`):

    .sglang-venv/bin/python -m bench.bench_sglang_twin [--requests 300] [--repeats 3]

The trace: `--requests` requests arriving over the first 40 steps, prompts of 32..512 tokens (half of them
starting with one of four 256-token stems, so the radix tree shares prefixes), 16..256 output tokens or EOS, lpm,
chunked prefill of 1024, max_running_requests=64, a pool of 12,000 token slots (retractions happen). Both
schedulers are driven by tools/sglang_check with the same fake model and must make the same decisions at every
step (checked). Timed: get_next_batch_to_run() and process_batch_result() per step (the fake model and the records
are outside the clock); best of `--repeats` runs. Target: the twin at most 0.5x.
"""

import argparse
import random

from tools.sglang_check.twin_run import run_twin
from tools.sglang_check.workloads import FIELDS, first_difference

try:
    from tools.sglang_check.sglang_run import SglangFactory, run_sglang
except ImportError:  # `make bench` runs in the app's environment, which never holds SGLang
    SglangFactory = None


def trace(num_requests: int, seed: int = 0) -> dict:
    rng = random.Random(seed)
    stems = [[rng.randint(1, 30000) for _ in range(256)] for _ in range(4)]
    requests = []
    for _ in range(num_requests):
        n = rng.randint(32, 512)
        prompt = (rng.choice(stems) + [rng.randint(1, 30000) for _ in range(n)])[:n] if rng.random() < 0.5 else \
            [rng.randint(1, 30000) for _ in range(n)]
        requests.append({"arrival": rng.randint(0, 40), "prompt": prompt, "max_new_tokens": rng.randint(16, 256),
                         "ignore_eos": False})
    requests.sort(key=lambda r: r["arrival"])
    config = {"max_total_tokens": 12000, "page_size": 1, "chunked_prefill_size": 1024, "max_prefill_tokens": 4096,
              "max_running_requests": 64, "schedule_policy": "lpm", "schedule_conservativeness": 0.3,
              "context_length": 8192, "eos": 0}
    return {"mode": "lpm", "config": config, "requests": requests, "seed": seed, "vocab": 400}


def best(run, repeats: int) -> tuple[list, list]:
    """The records and the per-step (schedule, process) seconds of the fastest of `repeats` runs."""
    results = []
    for _ in range(repeats):
        timings = []
        records = run(timings)
        results.append((sum(a + b for a, b in timings), records, timings))
    _, records, timings = min(results, key=lambda r: r[0])
    return records, timings


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if SglangFactory is None:
        print("skipped: SGLang is not installed in this environment (`make sglang-check` builds one and runs this)")
        return
    workload, factory = trace(args.requests), SglangFactory()
    sglang_records, sglang_t = best(lambda t: run_sglang(factory, workload, 100_000, t), args.repeats)
    twin_records, twin_t = best(lambda t: run_twin(workload, max_steps=100_000, timings=t), args.repeats)
    difference = first_difference(sglang_records, twin_records)
    if difference:
        raise SystemExit(f"the twin and SGLang part at step {difference[0] + 1} ({difference[1]}): no comparison")
    steps = len(sglang_records)
    retracted = sum(len(r[FIELDS.index("retracted")]) for r in sglang_records)
    print(f"trace: {args.requests} requests, {steps} steps, {retracted} retractions, identical decisions")
    for name, part in (("get_next_batch_to_run", 0), ("process_batch_result", 1), ("both", None)):
        s = sum(t[part] if part is not None else sum(t) for t in sglang_t) / steps * 1e6
        w = sum(t[part] if part is not None else sum(t) for t in twin_t) / steps * 1e6
        print(f"{name:22s} SGLang {s:8.1f} us/step   twin {w:8.1f} us/step   twin/SGLang {w / s:.2f}x")


if __name__ == "__main__":
    main()
