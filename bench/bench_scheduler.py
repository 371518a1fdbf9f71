"""Scheduler-only benchmark: schedule() + postprocess() on a large trace, driven by the fake model.

Prints the mean time per step and per scheduled sequence, preemptions and the prefix-hit rate for a
small and a large KV pool, and for a short and a long waiting queue. The ratios against the smaller
case, measured in the same run, show whether the cost per step grows with the pool or the queue
(it should not) rather than with the batch.

    python bench/bench_scheduler.py [--requests 2000]
"""

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from runner.fake import FakeRunner  # noqa: E402
from scheduler import Config, SamplingParams, Scheduler, Sequence  # noqa: E402


def trace(num_requests: int, seed: int = 0) -> list[tuple[list[int], int]]:
    """Prompt and output lengths uniform in 100-1024; half the prompts start with one 512-token prefix."""
    rng = random.Random(seed)
    shared = [rng.randint(1, 30000) for _ in range(512)]
    requests = []
    for i in range(num_requests):
        n = rng.randint(100, 1024)
        prompt = [rng.randint(1, 30000) for _ in range(n)]
        if i % 2 and n > 512:
            prompt[:512] = shared
        requests.append((prompt, rng.randint(100, 1024)))
    return requests


def run(requests, num_blocks: int) -> dict:
    cfg = Config(max_num_seqs=512, max_num_batched_tokens=16384, max_model_len=2048, num_kvcache_blocks=num_blocks,
                 kvcache_block_size=256, eos=-1, enable_prefix_caching=True)
    scheduler, runner = Scheduler(cfg), FakeRunner(cfg.max_model_len, eos=-1, seed=0, low=1, high=30000)
    for i, (prompt, max_tokens) in enumerate(requests):
        params = SamplingParams(temperature=0.0, max_tokens=max_tokens, ignore_eos=True)
        scheduler.add(Sequence(prompt, params, seq_id=i))
    elapsed, steps, scheduled = 0.0, 0, 0
    while not scheduler.is_finished():
        t0 = time.perf_counter()
        batch = scheduler.schedule()
        t1 = time.perf_counter()
        tokens = runner.run(batch.seqs)
        t2 = time.perf_counter()
        scheduler.postprocess(batch.seqs, tokens)
        elapsed += (t1 - t0) + (time.perf_counter() - t2)
        steps += 1
        scheduled += len(batch.seqs)
    bm = scheduler.block_manager
    return {"steps": steps, "ms_per_step": 1e3 * elapsed / steps, "us_per_seq": 1e6 * elapsed / scheduled,
            "batch": scheduled / steps, "preemptions": scheduler.num_preemptions,
            "hit_rate": bm.num_prefix_hits / max(1, bm.num_prefix_queries)}


def report(label: str, r: dict, baseline: dict | None = None):
    ratio = f"  x{r['us_per_seq'] / baseline['us_per_seq']:.2f} per seq vs baseline" if baseline else "  (baseline)"
    print(f"{label:<34} {r['steps']:>6} steps  {r['ms_per_step']:7.3f} ms/step  {r['us_per_seq']:6.2f} us/seq"
          f"  batch {r['batch']:6.1f}  preemptions {r['preemptions']:>5}  prefix hits {r['hit_rate']:6.1%}{ratio}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    args = parser.parse_args()
    requests = trace(args.requests)
    small_pool = run(requests, 1024)
    report(f"{args.requests} requests, 1024 blocks", small_pool)
    report(f"{args.requests} requests, 8192 blocks", run(requests, 8192), small_pool)
    short_queue = run(requests[: args.requests // 10], 1024)
    report(f"{args.requests // 10} requests, 1024 blocks", short_queue)
    print("The long queue above (same pool) against this short one:")
    report(f"{args.requests} requests, 1024 blocks", small_pool, short_queue)


if __name__ == "__main__":
    main()
