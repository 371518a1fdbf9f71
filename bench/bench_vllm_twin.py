"""The vLLM twin's scheduling time per step against vLLM's own V1 Scheduler, on the same trace, in one process.

Run it in the environment `make vllm-check` builds (it ends `make vllm-check`):

    .vllm-venv/bin/python -m bench.bench_vllm_twin [--requests 300] [--repeats 3]

(vLLM 0.33: VLLM_TARGET_DEVICE=cpu .vllm-venv-0.33/bin/python ...; it compares the twin set to that release.)

The trace: `--requests` requests arriving over the first 40 steps, prompts of 32..512 tokens (half of them
starting with one of four 256-token stems, so the prefix cache hits), 16..256 output tokens or EOS, FCFS with
chunked prefill and prefix caching, max_num_seqs=64, a budget of 1024 tokens, 500 blocks of 16 (preemptions
happen). Both schedulers are driven by tools/refcheck/vllm/ with the same fake model, and must make the same
decisions at every step (checked). Timed: schedule() and postprocess() / update_from_output() per step (the
fake model and the records are outside the clock); best of `--repeats` runs. Target: the twin at most 0.5x.
"""

import argparse
import random

from tools.refcheck.record import first_difference
from tools.refcheck.vllm.twin import run_twin
from tools.refcheck.vllm.workloads import FIELDS

try:
    from tools.refcheck.vllm.oracle import VllmOracle, run_vllm
except ImportError:  # `make bench` runs in the app's environment, which never holds vLLM
    VllmOracle = None


def trace(num_requests: int, seed: int = 0) -> dict:
    rng = random.Random(seed)
    stems = [[rng.randint(1, 30000) for _ in range(256)] for _ in range(4)]
    requests = []
    for _ in range(num_requests):
        n = rng.randint(32, 512)
        prompt = (rng.choice(stems) + [rng.randint(1, 30000) for _ in range(n)])[:n] if rng.random() < 0.5 else \
            [rng.randint(1, 30000) for _ in range(n)]
        requests.append({"arrival": rng.randint(0, 40), "prompt": prompt, "max_tokens": rng.randint(16, 256),
                         "priority": 0, "ignore_eos": False})
    requests.sort(key=lambda r: r["arrival"])
    config = {"max_num_seqs": 64, "max_num_batched_tokens": 1024, "max_model_len": 1024, "num_kvcache_blocks": 500,
              "kvcache_block_size": 16, "chunked_prefill": True, "enable_prefix_caching": True, "queue_policy": "fcfs",
              "eos": 0, "long_prefill_token_threshold": 0}
    return {"mode": "fcfs-prefix", "config": config, "requests": requests, "seed": seed, "vocab": 400}


def best(run, repeats: int) -> tuple[list, list]:
    """The records and the per-step (schedule, update) seconds of the fastest of `repeats` runs."""
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
    if VllmOracle is None:
        print("skipped: vLLM is not installed in this environment (`make vllm-check` builds one and runs this)")
        return
    workload, oracle = trace(args.requests), VllmOracle()
    vllm_records, vllm_t = best(lambda t: run_vllm(oracle.factory, workload, 100_000, t), args.repeats)
    twin_records, twin_t = best(lambda t: run_twin(workload, oracle.release, 100_000, t), args.repeats)
    difference = first_difference(vllm_records, twin_records, FIELDS)
    if difference:
        raise SystemExit(f"the twin and vLLM part at step {difference[0] + 1} ({difference[1]}): no comparison")
    steps = len(vllm_records)
    preemptions = sum(len(r[4]) for r in vllm_records)
    print(f"vLLM {oracle.release}, trace: {args.requests} requests, {steps} steps, {preemptions} preemptions, "
          "identical decisions")
    for name, part in (("schedule()", 0), ("update (postprocess)", 1), ("both", None)):
        v = sum(t[part] if part is not None else sum(t) for t in vllm_t) / steps * 1e6
        w = sum(t[part] if part is not None else sum(t) for t in twin_t) / steps * 1e6
        print(f"{name:22s} vLLM {v:8.1f} us/step   twin {w:8.1f} us/step   twin/vLLM {w / v:.2f}x")


if __name__ == "__main__":
    main()
