"""Step time with the next step scheduled while the model runs (engine.run.overlap) against the synchronous loop.

Two models: the real one (a few chat prompts, greedy, EOS ignored so both loops run the same batches) and
the zero-cost fake one on a large workload, where the scheduler's own work is all there is. Each loop runs
twice, alternating, after a warm-up on the same prompts; per loop the faster run's mean wall time per step,
and the scheduler's (schedule + postprocess) and the model's time per step are printed: the saving overlapping
can give is at most the smaller of those two. Then the share of steps scheduled while the model still computed the
step before (tests/test_overlap.py checks only that it can be all). Fails if the loops wrote different tokens.
Run: python -m bench.bench_overlap
"""

import sys

from engine.inputs.workload import random_token_prompts
from engine.run.overlap import LoopResult, run_loop
from engine.run.runner_factory import make_runner
from scheduler import Config, SamplingParams, Sequence
from scheduler.article import Scheduler

QUESTIONS = ["Why is the sky blue?", "Write a haiku about the sea.", "What does a CPU do?",
             "Give me a tip for learning Python."]


def step_ms(result: LoopResult) -> float:
    return result.wall_s * 1000 / len(result.timings)


def mean_ms(result: LoopResult, attr: str) -> float:
    return sum(getattr(t, attr)[1] - getattr(t, attr)[0] for t in result.timings) * 1000 / len(result.timings)


def compare(name: str, config: Config, runner, prompts: list[list[int]], max_tokens: int) -> bool:
    def run(overlap: bool, tokens: int) -> LoopResult:
        seqs = [Sequence(p, SamplingParams(max_tokens=tokens, ignore_eos=True), seq_id=i)
                for i, p in enumerate(prompts)]
        return run_loop(Scheduler(config), runner, seqs, overlap)

    run(False, 4)  # warm-up: the model's first passes at these shapes are slow
    runs = [(overlap, run(overlap, max_tokens)) for overlap in (False, True, False, True)]
    same = len({str(r.outputs) for _, r in runs}) == 1
    results = {overlap: min((r for o, r in runs if o == overlap), key=step_ms) for overlap in (False, True)}
    for overlap, result in results.items():
        cpu_ms = mean_ms(result, "schedule") + mean_ms(result, "postprocess")
        print(f"{name:28} {'overlapped' if overlap else 'synchronous':12} {len(result.timings):>6} "
              f"{step_ms(result):>10.3f} {cpu_ms:>10.3f} {mean_ms(result, 'model'):>10.3f}",
              flush=True)
    sync, over = results[False], results[True]
    print(f"{'':28} step time overlapped / synchronous: {step_ms(over) / step_ms(sync):.3f}")
    pairs = list(zip(over.timings, over.timings[1:], strict=False))
    early = sum(after.schedule[0] < before.model[1] for before, after in pairs)
    print(f"{'':28} steps scheduled before the model returned the step before: {early} of {len(pairs)} "
          f"({early / max(len(pairs), 1):.3f})")
    return same


def main():
    print(f"{'model':28} {'loop':12} {'steps':>6} {'ms/step':>10} {'sched ms':>10} {'model ms':>10}")
    config = Config(max_num_seqs=4, max_num_batched_tokens=512, max_model_len=256, num_kvcache_blocks=64,
                    kvcache_block_size=16)
    runner = make_runner("model", config)
    prompts = [runner.encode_prompt(q) for q in QUESTIONS]
    same = compare("SmolLM2-135M, 4 chats", config, runner, prompts, max_tokens=32)
    config = Config(max_num_seqs=128, max_num_batched_tokens=4096, max_model_len=128, num_kvcache_blocks=2048,
                    kvcache_block_size=16)
    prompts = random_token_prompts(512, seed=0, min_len=16, max_len=64)
    same &= compare("zero-cost fake, 512 requests", config, make_runner("fake", config), prompts, max_tokens=32)
    print("same tokens in both loops:", "yes" if same else "NO")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
