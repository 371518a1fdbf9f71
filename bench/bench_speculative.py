"""End-to-end speed-up of speculative decoding (n-gram prompt lookup) with the real model, greedy.

Two workloads of two chat requests, 48 new tokens at most each: one that rewards prompt lookup (repeat or
edit a given paragraph: the answer copies the prompt) and one that does not (open-ended questions). Each
runs through the engine without speculation and with k draft tokens; the bench prints tokens/s, the
speed-up, the acceptance rate, output tokens per request per forward pass and the mean model time per step
(a verifying pass computes up to k + 1 tokens per request), and fails if speculation changed a single
output token. Run: python -m bench.bench_speculative [--k 4] [--max-num-seqs 1]
"""

import argparse
import sys
import time

from engine.run.engine import Engine
from engine.run.metrics import speculation_metrics
from engine.run.recipe import (
    Request,
    RunSpec,
)
from scheduler import Config

NEW_TOKENS = 48
PARAGRAPH = ("The scheduler decides, at every step, which requests run and how many tokens each one computes. "
             "Waiting requests are admitted while KV-cache blocks and the token budget allow it; running "
             "requests decode one token per step, and a request that cannot grow is preempted and recomputed.")
WORKLOADS = {
    "repeat/edit (rewards lookup)": [
        f"Repeat this text exactly: {PARAGRAPH}",
        f"Rewrite this text, replacing 'requests' with 'jobs': {PARAGRAPH}",
    ],
    "open-ended chat (does not)": ["Write a short story about a lighthouse keeper.", "Why do cats purr?"],
}


def config(max_num_seqs: int, k: int) -> Config:
    return Config(max_num_seqs=max_num_seqs, max_num_batched_tokens=1024, max_model_len=512,
                  num_kvcache_blocks=4 * 512 // 16, kvcache_block_size=16, num_speculative_tokens=k)


def run(prompts: list[str], max_num_seqs: int, k: int):
    """(outputs, output tokens per wall second, model ms per step, speculation metrics) of one run."""
    workload = [Request(prompt=p, max_tokens=NEW_TOKENS) for p in prompts]
    engine = Engine(RunSpec(config(max_num_seqs, k), workload, runner="model"))
    start = time.perf_counter()
    engine.run()
    seconds = time.perf_counter() - start
    outputs = [r.seq.completion_token_ids for r in engine.requests]
    model_ms = engine.wall_model_s * 1000 / engine.step_count
    return outputs, sum(map(len, outputs)) / seconds, model_ms, speculation_metrics(engine.frames)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=4, help="draft tokens per decode step (default 4)")
    parser.add_argument("--max-num-seqs", type=int, default=1, help="batch limit (default 1)")
    args = parser.parse_args()
    k, max_num_seqs = args.k, args.max_num_seqs
    run(["Hello"], 1, 0)  # load the model and warm up outside the timings
    print(f"greedy, {NEW_TOKENS} new tokens at most, max_num_seqs={max_num_seqs}, n-gram prompt lookup k={k}")
    print(f"{'workload':30} {'tok/s off':>9} {'tok/s on':>9} {'speed-up':>8} {'accept':>7} {'tok/pass':>8} "
          f"{'ms/step off':>11} {'ms/step on':>10}")
    identical = True
    for name, prompts in WORKLOADS.items():
        plain, plain_rate, plain_ms, _ = run(prompts, max_num_seqs, 0)
        spec, spec_rate, spec_ms, stats = run(prompts, max_num_seqs, k)
        identical &= spec == plain
        print(f"{name:30} {plain_rate:>9.1f} {spec_rate:>9.1f} {spec_rate / plain_rate:>7.2f}x "
              f"{stats.acceptance_rate:>7.0%} {stats.tokens_per_pass:>8.2f} {plain_ms:>11.0f} {spec_ms:>10.0f}",
              flush=True)
    print("outputs token-for-token identical with and without speculation:", "yes" if identical else "NO")
    sys.exit(0 if identical else 1)


if __name__ == "__main__":
    main()
