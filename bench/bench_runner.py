"""Throughput of the paged ModelRunner behind the scheduler against transformers' own generation paths.

Same 16 chat prompts, 64 new tokens each, EOS ignored, greedy, in one process:
  (a) generate() one prompt at a time   (b) transformers' continuous batching, generate_batch(), 16 at a time
  (c) this runner behind the scheduler at max_num_seqs 4 and 16 (--batches; above 16 the prompts repeat)
plus model load times, per-step times, the share of decode steps spent gathering K/V from the paged cache
(CPU), and peak RSS. Every path must write the same tokens. --runs 2 measures (a), (b), (c) twice in a row.
Run: python -m bench.bench_runner [--device cpu|cuda] [--runs N] [--batches 4 16 64] [--skip-cold-load]
"""

import argparse
import os
import resource
import tempfile
import time

import torch
from transformers import GenerationConfig, logging
from transformers.generation.configuration_utils import ContinuousBatchingConfig

from runner import default_model
from runner.model_loading import load_model, stock_attention
from runner.model_runner import ModelRunner
from runner.paged_attention import GATHER_LABEL
from scheduler import Config, SamplingParams, Sequence
from scheduler.article import Scheduler

NEW_TOKENS = 64
MAX_BATCHED_TOKENS = 512
QUESTIONS = [
    "What is the capital of France?", "Write a haiku about the sea.", "Name three primary colors.",
    "How many legs does a spider have?", "Explain photosynthesis in one sentence.", "What is 12 times 7?",
    "Give me a tip for learning Python.", "Why is the sky blue?", "Suggest a name for a black cat.",
    "What does a CPU do?", "List two uses of copper.", "Describe a rainy day in Paris.",
    "What is the boiling point of water?", "Tell me a fun fact about octopuses.",
    "How do airplanes stay in the air?", "Translate 'good morning' into Spanish.",
]


def timed(fn):
    """(result, seconds), with every CUDA kernel the call launched finished."""
    start = time.perf_counter()
    result = fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return result, time.perf_counter() - start


def load_times(device: str | None):
    """Cold: dequantize the GGUF into an empty cache and load; cached: load that cache again."""
    with tempfile.TemporaryDirectory() as cache:
        os.environ[default_model.CACHE_ENV] = cache
        _, cold = timed(lambda: load_model(device=device))
        loaded, cached = timed(lambda: load_model(device=device))
    del os.environ[default_model.CACHE_ENV]
    return loaded, cold, cached


def greedy_ignoring_eos(loaded) -> GenerationConfig:
    """An EOS id no token has, so generation runs on past EOS like the runner's ignore_eos (min_new_tokens
    would instead forbid EOS and change the greedy choice)."""
    return GenerationConfig(max_new_tokens=NEW_TOKENS, do_sample=False, eos_token_id=-1,
                            pad_token_id=loaded.eos_token_id)


def generate_one_at_a_time(loaded, prompts):
    outputs = []
    with stock_attention(loaded.model), torch.inference_mode():
        for prompt in prompts:
            ids = torch.tensor([prompt], device=loaded.device)
            out = loaded.model.generate(ids, attention_mask=torch.ones_like(ids),
                                        generation_config=greedy_ignoring_eos(loaded))
            outputs.append(out[0, len(prompt):].tolist())
    return outputs


def generate_batch(loaded, prompts):
    config = greedy_ignoring_eos(loaded)
    limits = ContinuousBatchingConfig(max_requests_per_batch=16, max_batch_tokens=MAX_BATCHED_TOKENS)
    with stock_attention(loaded.model), torch.inference_mode():
        results = loaded.model.generate_batch(prompts, generation_config=config, continuous_batching_config=limits)
    return [results[f"req_{i}"].generated_tokens for i in range(len(prompts))]


def runner_config(loaded, max_num_seqs: int, num_requests: int = 16) -> Config:
    """KV room for every request at up to 256 tokens, whatever max_num_seqs."""
    return Config(max_num_seqs=max_num_seqs, max_num_batched_tokens=MAX_BATCHED_TOKENS, max_model_len=256,
                  num_kvcache_blocks=num_requests * 256 // 16, kvcache_block_size=16, eos=loaded.eos_token_id)


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def scheduled_runner(loaded, prompts, max_num_seqs: int):
    config = runner_config(loaded, max_num_seqs, len(prompts))
    scheduler, runner = Scheduler(config), ModelRunner(loaded, config)
    seqs = [Sequence(p, SamplingParams(temperature=0.0, max_tokens=NEW_TOKENS, ignore_eos=True)) for p in prompts]
    for seq in seqs:
        scheduler.add(seq)
    while not scheduler.is_finished():
        batch = scheduler.schedule()
        scheduler.postprocess(batch.seqs, runner.run(batch.seqs))
    return [seq.completion_token_ids for seq in seqs]


def staged_step(runner, prompts, context: int, computed: int):
    """Sequences of `context` tokens whose first `computed` have K/V, laid out in consecutive blocks."""
    seqs, size, next_block = [], runner.block_size, 0
    for prompt in prompts:
        seq = Sequence((prompt * context)[:context], SamplingParams(temperature=0.0))
        blocks = -(-context // size)
        seq.block_table = list(range(next_block, next_block + blocks))
        seq.num_computed_tokens, seq.num_scheduled_tokens = computed, context - computed
        next_block += blocks
        seqs.append(seq)
    return seqs


def step_time(runner, seqs, repeats: int = 5) -> float:
    runner.run(seqs)  # warm-up
    start = time.perf_counter()
    for _ in range(repeats):
        runner.run(seqs)
    return (time.perf_counter() - start) / repeats


def gather_ms(runner, seqs, repeats: int = 5) -> float:
    """Milliseconds per step spent gathering K/V, read from the profiler's label around the cache reads. Steps are
    timed apart, without the profiler: its own cost per torch call inflates a step of ~2,600 calls."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        step_time(runner, seqs, repeats)
    gather_us = sum(e.cpu_time_total for e in profile.key_averages() if e.key == GATHER_LABEL)
    return gather_us / 1000 / (repeats + 1)


def measure(loaded, prompts, batches: list[int]) -> dict:
    """One run of (a), (b) and (c) at each max_num_seqs, printed as it goes: the rates and the number of outputs
    equal to (a)'s, by label."""
    rates, equal, reference = {}, {}, None
    paths = [("(a)", "generate(), one prompt at a time", generate_one_at_a_time, prompts),
             ("(b)", "transformers generate_batch(), 16 at a time", generate_batch, prompts)]
    for batch in batches:
        repeated = [prompts[i % len(prompts)] for i in range(max(batch, len(prompts)))]
        paths.append((f"(c){batch}", f"runner + scheduler, max_num_seqs={batch}",
                      lambda m, p, batch=batch: scheduled_runner(m, p, batch), repeated))
    for label, name, fn, inputs in paths:
        outputs, seconds = timed(lambda fn=fn, inputs=inputs: fn(loaded, inputs))
        reference = reference or outputs
        rates[label] = len(inputs) * NEW_TOKENS / seconds
        agree = equal[label] = sum(o == reference[i % len(reference)] for i, o in enumerate(outputs))
        versus = "".join(f"  {rates[label] / rates[base]:5.2f}x {base}" for base in ("(a)", "(b)")
                         if base in rates and base != label)
        print(f"{label[:3]} {name:45s} {rates[label]:7.1f} tok/s{versus:22s}  outputs equal to (a): "
              f"{agree}/{len(outputs)}  (peak RSS {peak_rss_mib():.0f} MiB)", flush=True)
    return rates, equal


def step_times(loaded, prompts):
    runner = ModelRunner(loaded, runner_config(loaded, 16))
    prefill = step_time(runner, staged_step(runner, prompts[:1], context=128, computed=0))
    print(f"step: prefill of 128 tokens {prefill * 1000:.1f} ms")
    for batch in (1, 4, 16):
        seqs = staged_step(runner, prompts[:batch], context=160, computed=159)
        step_ms = step_time(runner, seqs) * 1000
        line = f"step: decode batch {batch:2d} at context 160: {step_ms:6.1f} ms"
        if loaded.device.type == "cpu":  # on CUDA the profiler's CPU clock would time kernel launches, not gathers
            gather = gather_ms(runner, seqs)
            line += f", K/V gather {gather:5.2f} ms ({gather / step_ms:.0%} of the step)"
        print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default=None, help="default: CUDA when available")
    parser.add_argument("--runs", type=int, default=1, help="measure (a), (b), (c) this many times in a row")
    parser.add_argument("--batches", type=int, nargs="+", default=[4, 16], help="max_num_seqs values for (c)")
    parser.add_argument("--skip-cold-load", action="store_true", help="do not time a GGUF conversion")
    args = parser.parse_args()
    logging.set_verbosity_error()  # e.g. the warning that eos_token_id=-1 never stops generation: intended
    logging.disable_progress_bar()

    if args.skip_cold_load:
        loaded, seconds = timed(lambda: load_model(device=args.device))
        load_line = f"model load (cached) {seconds:.2f} s"
    else:
        loaded, cold, cached = load_times(args.device)
        load_line = f"model load: cold (GGUF -> safetensors cache) {cold:.1f} s, cached {cached:.2f} s"
    print(f"device {loaded.device}, dtype {loaded.dtype}, torch threads {torch.get_num_threads()}")
    print(f"{load_line}; peak RSS so far {peak_rss_mib():.0f} MiB")
    if loaded.dtype != torch.float32:
        print(f"{loaded.dtype}: greedy choices between near-tied tokens may legitimately flip between paths, so "
              "'outputs equal' is a count here, not a check (exactness is tested in fp32: tests/test_gpu_runner.py)")
    prompts = [loaded.tokenizer.apply_chat_template([{"role": "user", "content": q}], add_generation_prompt=True,
                                                    tokenize=True, return_dict=False) for q in QUESTIONS]
    print(f"{len(prompts)} chat prompts of {min(map(len, prompts))}-{max(map(len, prompts))} tokens, "
          f"{NEW_TOKENS} new tokens each, EOS ignored, greedy")

    for run in range(1, args.runs + 1):
        print(f"-- run {run}/{args.runs}")
        rates, equal = measure(loaded, prompts, args.batches)
        for batch in args.batches:
            label = f"(c){batch}"
            print(f"run {run}, max_num_seqs={batch}: (c)/(a) {rates[label] / rates['(a)']:.2f}x, (c)/(b) "
                  f"{rates[label] / rates['(b)']:.2f}x, outputs equal {equal[label]}/{max(batch, len(prompts))}")
    step_times(loaded, prompts)
    print(f"peak RSS {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
