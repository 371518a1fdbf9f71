"""Adaptive batch size against fixed max_num_seqs on the same workload, measured in one run.

1. Simulated (fake model, preset 09's cost model and bursty load): fixed limits 2, 5 and 16 against the
   controller (band 50-200 ms, bounds 1-16). Step latency is the cost model's, so the figures are exact.
2. Real SmolLM2 on this machine: 16 chat prompts in two bursts at fixed max_num_seqs 16 against the
   controller with a band around this CPU's decode times (grow below --low ms, shrink above --high ms).
Per run: tokens per second, mean and p99 step latency, the share of steps slower than the band, and the
limits the controller used; then throughput and p99 latency as ratios to fixed 16. The controller's promise
is a bounded step latency (a steady inter-token time) at some cost in throughput, not a faster run.
Run: python -m bench.bench_adaptive [--low 120] [--high 180]
"""

import argparse
import time
from dataclasses import replace

from bench.stats import percentile
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.inputs.workload import chat_prompts
from engine.run.adaptive import AdaptiveBatch, step_latencies
from engine.run.engine import Engine
from engine.run.recipe import (
    Request,
    RunSpec,
)
from scheduler import Config

REAL_NEW_TOKENS = 32


def measure(engine: Engine, wall: bool) -> dict:
    start = time.perf_counter()
    engine.run()
    seconds = time.perf_counter() - start
    frames = list(engine.frames)
    latencies = step_latencies(frames, wall)
    tokens = sum(r.seq.num_completion_tokens for r in engine.requests)
    limits = [f.config.max_num_seqs for f in frames[1:]]
    return {"tok/s": tokens / (seconds if wall else frames[-1].sim_time_s),
            "mean ms": 1000 * sum(latencies) / len(latencies), "p99 ms": 1000 * percentile(latencies, 99),
            "latencies": latencies, "limits": f"{min(limits)}-{max(limits)}, mean {sum(limits) / len(limits):.1f}",
            "steps": len(latencies)}


def report(title: str, runs: dict[str, dict], high_s: float):
    print(f"\n{title}")
    print(f"{'run':24} {'steps':>6} {'tok/s':>8} {'mean ms':>8} {'p99 ms':>8} {'> band':>7}  max_num_seqs used")
    for name, r in runs.items():
        slow = sum(t > high_s for t in r["latencies"]) / r["steps"]
        print(f"{name:24} {r['steps']:>6} {r['tok/s']:>8.1f} {r['mean ms']:>8.1f} {r['p99 ms']:>8.1f} "
              f"{slow:>7.0%}  {r['limits']}")
    base, adaptive = runs["fixed 16"], runs["adaptive"]
    print(f"adaptive / fixed 16: throughput {adaptive['tok/s'] / base['tok/s']:.2f}x, "
          f"p99 step latency {adaptive['p99 ms'] / base['p99 ms']:.2f}x")


def simulated():
    scenario = load_scenario(SCENARIOS_DIR / "09_adaptive_batch.toml", runner="fake")
    fixed = replace(scenario.spec, adaptive=None)
    runs = {f"fixed {n}": measure(Engine(replace(fixed, config=replace(fixed.config, max_num_seqs=n))), wall=False)
            for n in (2, 5, 16)}
    runs["adaptive"] = measure(scenario.engine(), wall=False)
    report(f"simulated: preset 09 ({len(scenario.spec.workload)} requests in bursts, cost model "
           f"{scenario.spec.cost.step_s * 1000:.0f} ms + {scenario.spec.cost.token_s * 1000:.0f} ms/token), band "
           f"{scenario.spec.adaptive.low_s * 1000:.0f}-{scenario.spec.adaptive.high_s * 1000:.0f} ms",
           runs, scenario.spec.adaptive.high_s)


def real(low_ms: float, high_ms: float):
    texts = [p["text"] for p in chat_prompts()][:16]
    workload = [Request(arrival=0 if i < 8 else 20, prompt=t, max_tokens=REAL_NEW_TOKENS, ignore_eos=True)
                for i, t in enumerate(texts)]
    config = Config(max_num_seqs=16, max_num_batched_tokens=512, max_model_len=256, num_kvcache_blocks=256,
                    kvcache_block_size=16)
    controller = AdaptiveBatch(low_s=low_ms / 1000, high_s=high_ms / 1000, min_seqs=1, max_seqs=16)
    Engine(RunSpec(config, workload[:2], "model")).run()  # load the model and warm up outside the timings
    runs = {"fixed 16": measure(Engine(RunSpec(config, workload, "model")), wall=True),
            "adaptive": measure(Engine(RunSpec(config, workload, "model", adaptive=controller)), wall=True)}
    report(f"real SmolLM2: {len(workload)} chat prompts in two bursts, {REAL_NEW_TOKENS} new tokens each, "
           f"band {low_ms:.0f}-{high_ms:.0f} ms (wall time)", runs, high_ms / 1000)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--low", type=float, default=120, help="real model: grow below this step time (ms)")
    parser.add_argument("--high", type=float, default=180, help="real model: shrink above this step time (ms)")
    args = parser.parse_args()
    simulated()
    real(args.low, args.high)


if __name__ == "__main__":
    main()
