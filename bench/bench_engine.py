"""How much recording frames costs on a long run, and how fast a frame is read back.

The trace: 2000 requests, prompt and output lengths uniform in 100..1024, half of them starting with the
same 512-token prefix, all arriving at once; max_num_seqs=512, budget 16384, blocks of 256, fake runner,
ignore_eos. Run for pools of 1024 and 8192 blocks:

    python -m bench.bench_engine [--requests 2000] [--blocks 1024 8192]
"""

import argparse
import random
import time
import tracemalloc
from dataclasses import dataclass

from engine.inputs.workload import random_workload
from engine.run.engine import Engine
from engine.run.recipe import RunSpec
from scheduler import Config


def workload(n: int, seed: int = 0):
    rng = random.Random(seed)
    return random_workload(n, seed=seed, prompt_lengths=[rng.randint(100, 1024) for _ in range(n)],
                           max_tokens=[rng.randint(100, 1024) for _ in range(n)], shared_prefix_len=512,
                           shared_fraction=0.5, ignore_eos=True)


@dataclass
class Timing:
    cpu_s: float  # CPU time of the whole run: other processes on the machine do not skew it
    schedule_s: float  # wall time in schedule() + postprocess()
    steps: int
    preemptions: int
    prefix_hit_rate: float


def timed_run(config: Config, requests, record: bool) -> Timing:
    engine = Engine(RunSpec(config, requests), record=record)
    start = time.process_time()
    while not engine.is_finished:
        engine.step()
    cpu_s = time.process_time() - start
    bm = engine.scheduler.block_manager
    return Timing(cpu_s, engine.wall_schedule_s, engine.step_count, engine.scheduler.num_preemptions,
                  bm.num_prefix_hits / max(1, bm.num_prefix_queries))


def held_after_run(config: Config, requests, record: bool) -> tuple[Engine, int]:
    """A finished run and the memory it holds (scheduler, requests and, when recording, frames)."""
    tracemalloc.start()
    engine = Engine(RunSpec(config, requests), record=record)
    engine.run()
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return engine, held


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--blocks", type=int, nargs="+", default=[1024, 8192])
    args = parser.parse_args()
    requests = workload(args.requests)
    for num_blocks in args.blocks:
        config = Config(max_num_seqs=512, max_num_batched_tokens=16384, max_model_len=4096,
                        num_kvcache_blocks=num_blocks, kvcache_block_size=256)
        runs = [timed_run(config, requests, record) for _ in range(2) for record in (False, True)]  # interleaved
        bare = min(runs[0::2], key=lambda t: t.cpu_s)
        recorded = min(runs[1::2], key=lambda t: t.cpu_s)
        print(f"\n== {num_blocks} blocks: {bare.steps} steps, {bare.preemptions} preemptions, prefix hit rate "
              f"{bare.prefix_hit_rate:.1%}")
        print(f"schedule() + postprocess(): {bare.schedule_s / bare.steps * 1e3:.2f} ms wall per step")
        print(f"without frames: {bare.cpu_s / bare.steps * 1e3:.2f} ms CPU per step (schedule, fake model, "
              "postprocess)")
        print(f"with frames:    {recorded.cpu_s / bare.steps * 1e3:.2f} ms CPU per step")
        print(f"overhead ratio: {recorded.cpu_s / bare.cpu_s:.2f}x (target <= 1.5x)")
        engine, recorded_bytes = held_after_run(config, requests, record=True)
        store_bytes = recorded_bytes - held_after_run(config, requests, record=False)[1]
        rng = random.Random(0)
        picks = [rng.randrange(len(engine.frames)) for _ in range(50)]
        start = time.perf_counter()
        for k in picks:
            engine.frames[k]
        read_ms = (time.perf_counter() - start) / len(picks) * 1e3
        print(f"read a random frame: {read_ms:.2f} ms (target < 10 ms)")
        print(f"frame store memory: {store_bytes / 2**20:.1f} MiB for {len(engine.frames)} frames "
              f"({store_bytes / len(engine.frames) / 1024:.1f} KiB per frame)")


if __name__ == "__main__":
    main()
