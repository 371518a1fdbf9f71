"""Scheduler-only benchmark: schedule() + postprocess() against nano-vllm's scheduler, side by side in one run.

The trace: 1000 requests, prompt and output lengths uniform in 100..1024, half the prompts starting with one
512-token prefix, all queued at once; max_num_seqs=512, budget 16384, 1024 KV blocks of 256, prefix caching
on, ignore_eos. Only schedule() + postprocess() are timed (the fake model's tokens are drawn outside the
clock); our scheduler's events are collected as the engine collects them. Printed: time per step and per
scheduled sequence for nano-vllm (the pre-chunked version our basic mode follows), this scheduler in basic
mode and with chunked prefill + mixed batches, and the ratios per scheduled sequence (targets: basic at
most 1.2x nano-vllm, chunked + mixed at most 1.5x). Times are CPU time of this process, so that other
processes on a busy machine do not count; the runs are interleaved and the best of each is shown.
`--scaling` adds the cost per scheduled sequence for a pool of 8192 blocks and for a queue a tenth as long,
against the 1024-block run (it should not grow with either).
`--before REV` measures REV's scheduler beside this one's instead (bench/before.py): each side in a process of its
own, run in REV's tree and in this one, `--repeats` rounds alternating; the best of each, and the ratios this/REV.

nano-vllm is not part of this project: point NANOVLLM_SRC (or --nanovllm) at a directory holding its
`nanovllm` package, e.g.

    git clone https://github.com/GeeeekExplorer/nano-vllm && git -C nano-vllm archive 9e8507e nanovllm \\
        | tar -x -C /tmp/nanovllm-9e8507e
    NANOVLLM_SRC=/tmp/nanovllm-9e8507e python -m bench.bench_scheduler [--requests 1000] [--repeats 2]

Its scheduler, block manager and sequence are loaded from there at run time with its torch-importing
config module stubbed; without it only this scheduler's figures are printed.
"""

import argparse
import importlib.util
import json
import os
import random
import sys
import time
import types
from pathlib import Path

from bench import before as before_rev
from runner.fake import FakeRunner
from scheduler import Config, SamplingParams, Sequence

try:
    from scheduler.article import Scheduler
except ImportError:  # a tree from before the article's package, measured with --before (bench/before.py)
    from scheduler import Scheduler  # type: ignore[attr-defined, no-redef]

MAX_NUM_SEQS, BUDGET, BLOCK_SIZE, MAX_MODEL_LEN = 512, 16384, 256, 4096
MODES = {"basic": {}, "chunked + mixed": {"chunked_prefill": True, "mixed_batches": True}}


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


def _figures(elapsed: float, steps: int, scheduled: int, **extra) -> dict:
    return {"steps": steps, "ms_per_step": 1e3 * elapsed / steps, "us_per_seq": 1e6 * elapsed / scheduled,
            "batch": scheduled / steps, **extra}


def run_ours(requests, num_blocks: int = 1024, **policy) -> dict:
    cfg = Config(max_num_seqs=MAX_NUM_SEQS, max_num_batched_tokens=BUDGET, max_model_len=MAX_MODEL_LEN,
                 num_kvcache_blocks=num_blocks, kvcache_block_size=BLOCK_SIZE, eos=-1, enable_prefix_caching=True,
                 **policy)
    scheduler, runner = Scheduler(cfg), FakeRunner(cfg.max_model_len, eos=-1, seed=0, low=1, high=30000)
    for i, (prompt, max_tokens) in enumerate(requests):
        scheduler.add(Sequence(prompt, SamplingParams(temperature=0.0, max_tokens=max_tokens, ignore_eos=True),
                               seq_id=i))
    elapsed, steps, scheduled, events = 0.0, 0, 0, 0
    clock = time.process_time  # CPU time: other processes on the machine do not count
    while not scheduler.is_finished():
        t0 = clock()
        batch = scheduler.schedule()
        t1 = clock()
        tokens = runner.run(batch.seqs)
        t2 = clock()
        finished = scheduler.postprocess(batch.seqs, tokens)
        elapsed += (t1 - t0) + (clock() - t2)
        steps += 1
        scheduled += len(batch.seqs)
        events += len(batch.events) + len(finished)
    bm = scheduler.block_manager
    return _figures(elapsed, steps, scheduled, preemptions=scheduler.num_preemptions, events=events,
                    hit_rate=bm.num_prefix_hits / max(1, bm.num_prefix_queries))


def load_nanovllm(src: Path) -> types.SimpleNamespace:
    """nano-vllm's Scheduler, Sequence and SamplingParams from a checkout, its config module stubbed (the real
    one imports transformers); nothing of it is imported unless the benchmark is given its path."""
    package = src / "nanovllm"
    if not (package / "engine" / "scheduler.py").is_file():
        raise FileNotFoundError(f"{package}/engine/scheduler.py not found")
    for name, path in (("nanovllm", package), ("nanovllm.engine", package / "engine")):
        module = types.ModuleType(name)
        module.__path__ = [str(path)]
        sys.modules[name] = module
    config = types.ModuleType("nanovllm.config")
    config.Config = types.SimpleNamespace
    sys.modules["nanovllm.config"] = config

    def load(name: str):
        spec = importlib.util.spec_from_file_location(name, package / (name.split(".", 1)[1].replace(".", "/") + ".py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module

    params, sequence = load("nanovllm.sampling_params"), load("nanovllm.engine.sequence")
    load("nanovllm.engine.block_manager")
    return types.SimpleNamespace(Scheduler=load("nanovllm.engine.scheduler").Scheduler, Sequence=sequence.Sequence,
                                 SamplingParams=params.SamplingParams)


def run_nanovllm(nano: types.SimpleNamespace, requests, num_blocks: int = 1024) -> dict:
    cfg = types.SimpleNamespace(max_num_seqs=MAX_NUM_SEQS, max_num_batched_tokens=BUDGET, eos=-1,
                                num_kvcache_blocks=num_blocks, kvcache_block_size=BLOCK_SIZE,
                                max_model_len=MAX_MODEL_LEN)
    if hasattr(nano.Sequence, "set_block_size"):
        nano.Sequence.set_block_size(BLOCK_SIZE)
    else:
        nano.Sequence.block_size = BLOCK_SIZE
    scheduler, runner = nano.Scheduler(cfg), FakeRunner(MAX_MODEL_LEN, eos=-1, seed=0, low=1, high=30000)
    for prompt, max_tokens in requests:
        scheduler.add(nano.Sequence(prompt, nano.SamplingParams(temperature=1.0, max_tokens=max_tokens,
                                                                ignore_eos=True)))
    elapsed, steps, scheduled = 0.0, 0, 0
    clock = time.process_time  # CPU time: other processes on the machine do not count
    while not scheduler.is_finished():
        t0 = clock()
        seqs, _ = scheduler.schedule()
        t1 = clock()
        tokens = [runner.next_token(seq.seq_id, len(seq)) for seq in seqs]
        t2 = clock()
        scheduler.postprocess(seqs, tokens)
        elapsed += (t1 - t0) + (clock() - t2)
        steps += 1
        scheduled += len(seqs)
    return _figures(elapsed, steps, scheduled)


def report(label: str, r: dict, baseline: dict | None = None, baseline_name: str = "baseline"):
    ratio = (f"  x{r['us_per_seq'] / baseline['us_per_seq']:.2f} per seq vs {baseline_name}" if baseline
             else "  (baseline)")
    extra = (f"  preemptions {r['preemptions']:>5}  prefix hits {r['hit_rate']:6.1%}  events {r['events']:>6}"
             if "events" in r else "")
    print(f"{label:<34} {r['steps']:>6} steps  {r['ms_per_step']:7.3f} ms/step  {r['us_per_seq']:6.2f} us/seq"
          f"  batch {r['batch']:6.1f}{extra}{ratio}")


def best(runs: list[dict]) -> dict:
    return min(runs, key=lambda r: r["us_per_seq"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=2, help="interleaved runs of each; the best is shown")
    parser.add_argument("--nanovllm", default=os.environ.get("NANOVLLM_SRC"),
                        help="directory holding nano-vllm's `nanovllm` package (default: $NANOVLLM_SRC)")
    parser.add_argument("--scaling", action="store_true", help="also a larger pool and a shorter queue")
    parser.add_argument("--side", action="store_true", help=argparse.SUPPRESS)  # one run of each mode, as JSON
    before_rev.add_argument(parser)
    args = parser.parse_args()
    requests = trace(args.requests)
    if args.side:
        print(json.dumps({mode: run_ours(requests, **policy) for mode, policy in MODES.items()}))
        return
    if args.before:
        before_after(args.before, args.requests, args.repeats)
        return
    nano = None
    if args.nanovllm:
        try:
            nano = load_nanovllm(Path(args.nanovllm))
        except (OSError, ImportError, AttributeError) as error:
            print(f"could not load nano-vllm from {args.nanovllm}: {error}")
    runs: dict[str, list[dict]] = {"nano-vllm": [], **{mode: [] for mode in MODES}}
    for _ in range(args.repeats):  # interleaved, so that a busy moment of the machine hits all of them
        if nano is not None:
            runs["nano-vllm"].append(run_nanovllm(nano, requests))
        for mode, policy in MODES.items():
            runs[mode].append(run_ours(requests, **policy))
    print(f"{args.requests} requests, {MAX_NUM_SEQS} seqs, budget {BUDGET}, 1024 blocks of {BLOCK_SIZE}; "
          f"best of {args.repeats} interleaved runs")
    if nano is None:
        print("nano-vllm side-by-side baseline SKIPPED: set NANOVLLM_SRC (or --nanovllm) to a directory holding "
              "its `nanovllm` package (see this script's docstring); our figures only:")
        for mode in MODES:
            report(f"schedlab {mode}", best(runs[mode]))
    else:
        baseline = best(runs["nano-vllm"])
        report("nano-vllm 9e8507e (pre-chunked)", baseline)
        targets = {"basic": 1.2, "chunked + mixed": 1.5}
        for mode in MODES:
            ours = best(runs[mode])
            report(f"schedlab {mode}", ours, baseline, "nano-vllm")
            ratio = ours["us_per_seq"] / baseline["us_per_seq"]
            print(f"  ratio {mode} / nano-vllm per scheduled sequence: {ratio:.2f}x (target <= {targets[mode]}x)"
                  f" {'met' if ratio <= targets[mode] else 'NOT MET'}")
    if args.scaling:
        small = best(runs["basic"])
        print("Cost per scheduled sequence against the 1024-block run above (basic mode):")
        report(f"{args.requests} requests, 8192 blocks", run_ours(requests, 8192), small, "1024 blocks")
        short = run_ours(requests[: args.requests // 10])
        report(f"{args.requests // 10} requests, 1024 blocks", short)
        report(f"{args.requests} requests, 1024 blocks", small, short, "the short queue")


def before_after(rev: str, num_requests: int, repeats: int):
    """This scheduler's figures against REV's, each measured by this file's run_ours in a process of its own (REV's
    scheduler and runner packages, this tree's measurement), in alternating rounds; the best of each."""
    runs: dict[str, list[dict]] = {}
    with before_rev.tree_at(rev) as old:
        for _, name, tree in before_rev.rounds({rev: old, before_rev.THIS_TREE: before_rev.ROOT}, repeats):
            runs.setdefault(name, []).append(json.loads(before_rev.run_in(tree, "bench_scheduler", "--side",
                                                                          "--requests", str(num_requests))))
    print(f"{num_requests} requests, {MAX_NUM_SEQS} seqs, budget {BUDGET}, 1024 blocks of {BLOCK_SIZE}; best of "
          f"{repeats} runs each, {rev} and this tree alternating")
    for mode in MODES:
        old, new = (best([r[mode] for r in runs[name]]) for name in (rev, before_rev.THIS_TREE))
        report(f"{rev} {mode}", old)
        report(f"this tree {mode}", new, old, rev)
        same = all(old[k] == new[k] for k in ("steps", "preemptions", "events", "hit_rate"))
        ratio = before_rev.ratio_line(f"us per scheduled sequence, {mode}", new["us_per_seq"], old["us_per_seq"], rev)
        print(f"  {ratio}; steps, preemptions, events and prefix hits {'identical' if same else 'DIFFER'}")


if __name__ == "__main__":
    main()
