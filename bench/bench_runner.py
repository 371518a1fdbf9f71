"""Throughput of the paged ModelRunner behind the scheduler against transformers' own generation paths.

Same 16 chat prompts, 64 new tokens each, EOS ignored, greedy, in one process:
  (a) generate() one prompt at a time   (b) transformers' continuous batching, generate_batch()
  (c) this runner behind the scheduler at max_num_seqs 4 and 16
plus model load times, per-step times, the share of decode steps spent gathering K/V from the paged cache,
and peak RSS. Every path must write the same tokens. Run: python bench/bench_runner.py [--device cpu|cuda]
"""

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
from transformers import GenerationConfig, logging  # noqa: E402
from transformers.generation.configuration_utils import ContinuousBatchingConfig  # noqa: E402

from runner import default_model  # noqa: E402
from runner.model_loading import load_model, stock_attention  # noqa: E402
from runner.model_runner import ModelRunner  # noqa: E402
from runner.paged_attention import GATHER_LABEL  # noqa: E402
from scheduler import Config, SamplingParams, Scheduler, Sequence  # noqa: E402

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
    start = time.perf_counter()
    result = fn()
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


def runner_config(loaded, max_num_seqs: int) -> Config:
    """KV room for 16 requests of up to 256 tokens, whatever max_num_seqs."""
    return Config(max_num_seqs=max_num_seqs, max_num_batched_tokens=MAX_BATCHED_TOKENS, max_model_len=256,
                  num_kvcache_blocks=16 * 256 // 16, kvcache_block_size=16, eos=loaded.eos_token_id)


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def scheduled_runner(loaded, prompts, max_num_seqs: int):
    config = runner_config(loaded, max_num_seqs)
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


def gather_share(runner, seqs, repeats: int = 5) -> tuple[float, float]:
    """(gather ms, step ms) per step, the gather read from the profiler's label around the cache reads."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        step = step_time(runner, seqs, repeats)
    gather_us = sum(e.cpu_time_total for e in profile.key_averages() if e.key == GATHER_LABEL)
    return gather_us / 1000 / (repeats + 1), step * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default=None, help="default: CUDA when available")
    device = parser.parse_args().device
    logging.set_verbosity_error()  # e.g. the warning that eos_token_id=-1 never stops generation: intended
    logging.disable_progress_bar()

    loaded, cold, cached = load_times(device)
    print(f"device {loaded.device}, dtype {loaded.dtype}, torch threads {torch.get_num_threads()}")
    print(f"model load: cold (GGUF -> safetensors cache) {cold:.1f} s, cached {cached:.2f} s; "
          f"peak RSS so far {peak_rss_mib():.0f} MiB (the GGUF conversion's)")
    prompts = [loaded.tokenizer.apply_chat_template([{"role": "user", "content": q}], add_generation_prompt=True,
                                                    tokenize=True, return_dict=False) for q in QUESTIONS]
    total = len(prompts) * NEW_TOKENS
    print(f"{len(prompts)} chat prompts of {min(map(len, prompts))}-{max(map(len, prompts))} tokens, "
          f"{NEW_TOKENS} new tokens each, EOS ignored, greedy")

    rates, reference = [], None
    for name, fn in [("(a) generate(), one prompt at a time", generate_one_at_a_time),
                     ("(b) transformers generate_batch()", generate_batch),
                     ("(c) runner + scheduler, max_num_seqs=4", lambda m, p: scheduled_runner(m, p, 4)),
                     ("(c) runner + scheduler, max_num_seqs=16", lambda m, p: scheduled_runner(m, p, 16))]:
        outputs, seconds = timed(lambda fn=fn: fn(loaded, prompts))
        reference = reference or outputs
        rates.append(total / seconds)
        agree = sum(o == r for o, r in zip(outputs, reference, strict=True))
        versus_b = f"{rates[-1] / rates[1]:5.2f}x (b)" if len(rates) > 1 else " " * 10
        print(f"{name:42s} {rates[-1]:7.1f} tok/s  {rates[-1] / rates[0]:5.2f}x (a)  {versus_b}  "
              f"outputs equal to (a): {agree}/{len(prompts)}  (peak RSS {peak_rss_mib():.0f} MiB)")

    runner = ModelRunner(loaded, runner_config(loaded, 16))
    prefill = step_time(runner, staged_step(runner, prompts[:1], context=128, computed=0))
    print(f"step: prefill of 128 tokens {prefill * 1000:.1f} ms")
    for batch in (1, 4, 16):
        gather_ms, step_ms = gather_share(runner, staged_step(runner, prompts[:batch], context=160, computed=159))
        print(f"step: decode batch {batch:2d} at context 160: {step_ms:6.1f} ms, "
              f"K/V gather {gather_ms:5.2f} ms ({gather_ms / step_ms:.0%} of the step)")
    print(f"peak RSS {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
