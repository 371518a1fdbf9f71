"""The referee's time (engine/check/referee.py) against the engine's on the same run: what the server adds to every
learner run it receives. Per built-in kind, a 600-step run of 50 requests on the fake model (prompts of 8..64 tokens
sharing a prefix, arrivals over the first 100 steps, 64..128 outputs each, a pool that preempts, prefix caching on)
is made by the engine (`Engine.run`, frames recorded: what the worker does), written as a trace and checked by the
schema (`trace_dict` + `checked_trace`: what the server does with any trace) and refereed, held to its recipe
(`referee(trace, spec)`: what it adds). Best of `--repeats` for each; the ratio referee / engine is the figure.

    python -m bench.bench_referee [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import random
import time

from engine.check.referee import referee
from engine.run.engine import Engine
from engine.run.recipe import Request, RunSpec
from engine.traces.schema import checked_trace
from engine.traces.trace import trace_dict
from scheduler import Config
from scheduler.factory import SCHEDULERS

STEPS, REQUESTS = 600, 50


def workload(seed: int = 0) -> tuple[Request, ...]:
    rng = random.Random(seed)
    prefix = tuple(rng.randint(1, 999) for _ in range(16))
    return tuple(Request(arrival=rng.randint(0, 100), max_tokens=rng.randint(64, 128), ignore_eos=True,
                         prompt_token_ids=prefix[:rng.choice((0, 16))] + tuple(rng.randint(1, 999) for _ in
                                                                               range(rng.randint(8, 48))))
                 for _ in range(REQUESTS))


def best(repeats: int, work) -> tuple[float, object]:
    """The fastest of `repeats` runs of `work()`, in seconds, and what it returned."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    return min(times), result


def measure(kind: str, repeats: int):
    config = Config(max_num_seqs=8, max_num_batched_tokens=256, max_model_len=256, num_kvcache_blocks=64,
                    kvcache_block_size=8, enable_prefix_caching=True)
    spec = RunSpec(config, workload(), scheduler=kind, max_steps=STEPS)

    def run() -> Engine:
        engine = Engine(spec)
        engine.run()
        return engine

    engine_s, engine = best(repeats, run)
    assert isinstance(engine, Engine)
    data = json.dumps(trace_dict(engine))
    schema_s, trace = best(repeats, lambda: checked_trace(data))
    referee_s, _ = best(repeats, lambda: referee(trace, spec))  # the trace as checked_trace left it (unchanged)
    ended = sum(r.seq.is_done for r in engine.requests)
    print(f"{kind:10} {engine.step_count:>6} {ended:>6} {engine_s * 1e3:>10.0f} {schema_s * 1e3:>10.0f} "
          f"{referee_s * 1e3:>11.0f} {referee_s / engine_s:>16.2f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"{'kind':10} {'steps':>6} {'ended':>6} {'engine ms':>10} {'schema ms':>10} {'referee ms':>11} "
          f"{'referee / engine':>16}")
    for kind in SCHEDULERS:
        measure(kind, args.repeats)


if __name__ == "__main__":
    main()
