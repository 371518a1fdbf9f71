"""How much recording frames costs on a long run, and how fast a frame is read back.

The trace: 2000 requests, prompt and output lengths uniform in 100..1024, half of them starting with the
same 512-token prefix, all arriving at once; max_num_seqs=512, budget 16384, blocks of 256, fake runner,
ignore_eos. Run for pools of 1024 and 8192 blocks:

    python bench/bench_engine.py [--requests 2000] [--blocks 1024 8192]
"""

import argparse
import random
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.engine import Engine  # noqa: E402
from engine.workload import random_workload  # noqa: E402
from scheduler import Config  # noqa: E402


def workload(n: int, seed: int = 0):
    rng = random.Random(seed)
    return random_workload(n, seed=seed, prompt_lengths=[rng.randint(100, 1024) for _ in range(n)],
                           max_tokens=[rng.randint(100, 1024) for _ in range(n)], shared_prefix_len=512,
                           shared_fraction=0.5, ignore_eos=True)


def timed_run(config: Config, requests, record: bool) -> tuple[Engine, float, float]:
    """(engine, seconds in the whole run, seconds in schedule() + postprocess())."""
    engine = Engine(config, requests, record=record)
    scheduler_s = 0.0
    start = time.perf_counter()
    while not engine.is_finished:
        engine.step()
        if record:
            scheduler_s += engine.frames._records[-1].wall_schedule_s
    return engine, time.perf_counter() - start, scheduler_s


def traced_bytes(config: Config, requests, record: bool) -> int:
    """Memory held at the end of a run by its engine (scheduler, requests and, if recording, frames)."""
    tracemalloc.start()
    engine = timed_run(config, requests, record)[0]
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del engine
    return held


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--blocks", type=int, nargs="+", default=[1024, 8192])
    args = parser.parse_args()
    requests = workload(args.requests)
    for num_blocks in args.blocks:
        config = Config(max_num_seqs=512, max_num_batched_tokens=16384, max_model_len=4096,
                        num_kvcache_blocks=num_blocks, kvcache_block_size=256)
        bare, bare_s, _ = min((timed_run(config, requests, record=False) for _ in range(2)), key=lambda r: r[1])
        bm = bare.scheduler.block_manager
        steps = bare.step_count
        print(f"\n== {num_blocks} blocks: {steps} steps, {bare.scheduler.num_preemptions} preemptions, prefix hit "
              f"rate {bm.num_prefix_hits / max(1, bm.num_prefix_queries):.1%}")
        print(f"without frames: {bare_s / steps * 1e3:.2f} ms per step (schedule + fake model + postprocess)")
        recorded, rec_s, sched_s = min((timed_run(config, requests, record=True) for _ in range(2)),
                                       key=lambda r: r[1])
        print(f"with frames:    {rec_s / steps * 1e3:.2f} ms per step, of which schedule() + postprocess() "
              f"{sched_s / steps * 1e3:.2f} ms")
        print(f"overhead ratio: {rec_s / bare_s:.2f}x (target <= 1.5x)")
        bare_bytes, recorded_bytes = (traced_bytes(config, requests, record) for record in (False, True))
        rng = random.Random(0)
        picks = [rng.randrange(len(recorded.frames)) for _ in range(50)]
        start = time.perf_counter()
        for k in picks:
            recorded.frames[k]
        read_ms = (time.perf_counter() - start) / len(picks) * 1e3
        print(f"read a random frame: {read_ms:.2f} ms (target < 10 ms)")
        print(f"frame store memory: {(recorded_bytes - bare_bytes) / 2**20:.1f} MiB for {len(recorded.frames)} "
              f"frames ({(recorded_bytes - bare_bytes) / len(recorded.frames) / 1024:.1f} KiB per frame)")

if __name__ == "__main__":
    main()
