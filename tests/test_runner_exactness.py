"""The runner behind the real scheduler writes, token for token, what `generate()` writes for each request
alone: batching, arrivals, preemption, chunking and prefix hits change nothing. Every test runs on the CPU
and, marked `gpu` (skipped without CUDA), on CUDA, in fp32 on both: see tests/test_gpu_runner.py for why."""

import pytest
import torch
from transformers import MistralConfig, Qwen2Config, Qwen3Config

from runner.model_runner import EMPTY_SLOT, ModelRunner
from scheduler import SamplingParams, Sequence
from scheduler.article import Scheduler
from scheduler.events import ChunkScheduled, Preempted, PrefixHit, Speculated
from tests.helpers.tiny_model import (
    DEVICES,
    make_requests,
    random_prompts,
    reference_completion,
    run_and_compare,
    run_with_arrivals,
    tiny_config,
    tiny_model,
)


@pytest.fixture(scope="module", params=DEVICES)
def tiny(request):
    return tiny_model(device=request.param)


@pytest.mark.parametrize("block_size", [1, 10, 16])
def test_continuous_batching_with_arrivals_and_prefix_hits(tiny, block_size):
    system = random_prompts([23], seed=7)[0]
    prompts = random_prompts([5, 17, 30, 9, 12, 3], seed=block_size, prefix=system)
    log = run_and_compare(tiny, tiny_config(kvcache_block_size=block_size, num_kvcache_blocks=1200 // block_size),
                          prompts, arrival_steps=[0, 0, 1, 4, 4, 9])
    hits = [e for e in log.events if isinstance(e, PrefixHit)]
    assert hits and log.scheduler.block_manager.num_prefix_hits > 0
    assert {"prefill", "decode"} <= set(log.kinds)


@pytest.mark.parametrize("block_size", [1, 10, 16])
def test_preemption_and_recompute(tiny, block_size):
    prompts = random_prompts([20, 25, 18, 22, 15], seed=3)
    log = run_and_compare(tiny, tiny_config(kvcache_block_size=block_size, num_kvcache_blocks=80 // block_size,
                                       max_model_len=60, max_num_batched_tokens=64),
                          prompts, arrival_steps=[0, 0, 0, 2, 5], max_tokens=20)
    assert any(isinstance(e, Preempted) for e in log.events)
    assert any(seq.num_preemptions for seq in log.seqs)


@pytest.mark.parametrize("block_size", [1, 10, 16])
def test_chunked_prefill_and_mixed_batches(tiny, block_size):
    system = random_prompts([21], seed=11)[0]
    prompts = random_prompts([40, 7, 33, 26, 50], seed=5, prefix=system)
    log = run_and_compare(tiny, tiny_config(kvcache_block_size=block_size, num_kvcache_blocks=1000 // block_size,
                                       max_num_batched_tokens=24, chunked_prefill=True, mixed_batches=True),
                          prompts, arrival_steps=[0, 1, 3, 3, 8])
    assert any(isinstance(e, ChunkScheduled) for e in log.events)
    assert "mixed" in log.kinds
    assert any(isinstance(e, PrefixHit) for e in log.events)


@pytest.mark.parametrize("block_size", [1, 10, 16])
def test_speculative_drafts_change_nothing(tiny, block_size):
    """Prompt-lookup drafts are verified in the same forward pass; accepted or not, the text is greedy's."""
    pattern = random_prompts([6], seed=13)[0]
    loops = random_prompts([8], seed=2)[0]  # the tiny model answers this with "... 62 69 62 69 62 ...": drafts hit
    prompts = [loops, random_prompts([15], seed=14)[0] + pattern * 2, pattern * 3]
    log = run_and_compare(tiny, tiny_config(kvcache_block_size=block_size, num_kvcache_blocks=600 // block_size,
                                       num_speculative_tokens=4, mixed_batches=block_size == 10),
                          prompts, arrival_steps=[0, 1, 3], max_tokens=24)
    speculated = [e for e in log.events if isinstance(e, Speculated)]
    assert any(e.num_accepted > 0 for e in speculated)
    assert any(e.num_accepted < len(e.draft_token_ids) for e in speculated)


def test_block_token_ids_show_what_each_slot_holds(tiny):
    """After every step, each block of a running request holds exactly its computed tokens, in order."""
    cfg = tiny_config(kvcache_block_size=10, num_kvcache_blocks=30, chunked_prefill=True, max_num_batched_tokens=16)
    scheduler, runner = Scheduler(cfg), ModelRunner(tiny, cfg)
    for seq in make_requests(random_prompts([14, 31], seed=2), max_tokens=6):
        scheduler.add(seq)
    used, checked = set(), 0
    while not scheduler.is_finished():
        batch = scheduler.schedule()
        scheduler.postprocess(batch.seqs, runner.run(batch.seqs))
        for seq in scheduler.running:
            for i, block_id in enumerate(seq.block_table):
                expected = seq.token_ids[i * 10:min(seq.num_computed_tokens, (i + 1) * 10)]
                assert runner.block_token_ids(block_id)[:len(expected)] == expected
                used.add(block_id)
                checked += len(expected)
    assert checked > 50
    assert all(runner.block_token_ids(b) == [EMPTY_SLOT] * 10 for b in set(range(30)) - used)


def test_seeded_sampling_is_reproducible_however_scheduled(tiny):
    prompts = random_prompts([12, 20, 9], seed=4)

    def sample_run(cfg, arrival_steps, runner_seed=0):
        seqs = [Sequence(p, SamplingParams(temperature=1.0, max_tokens=15), seq_id=i) for i, p in enumerate(prompts)]
        seqs[0].sampling_params = SamplingParams(temperature=0.8, max_tokens=15, seed=1234)
        arrivals = {}
        for seq, step in zip(seqs, arrival_steps, strict=True):
            arrivals.setdefault(step, []).append(seq)
        run_with_arrivals(Scheduler(cfg), ModelRunner(tiny, cfg, seed=runner_seed), arrivals)
        return [s.completion_token_ids for s in seqs], [s.num_preemptions for s in seqs]

    roomy, _ = sample_run(tiny_config(), [0, 0, 0])
    cramped, preemptions = sample_run(tiny_config(kvcache_block_size=4, num_kvcache_blocks=14, max_model_len=56,
                                             max_num_batched_tokens=8, chunked_prefill=True, mixed_batches=True),
                                      [0, 2, 5])
    assert any(preemptions)
    assert cramped == roomy
    speculating, _ = sample_run(tiny_config(num_speculative_tokens=3), [0, 1, 1])
    assert speculating == roomy
    other_seed, _ = sample_run(tiny_config(), [0, 0, 0], runner_seed=99)
    assert other_seed[0] == roomy[0]  # its own seed wins over the runner's
    assert other_seed[1:] != roomy[1:]


def test_two_runners_do_not_share_kv(tiny):
    """Two runners step in lockstep over the same block ids with different prompts; each stays exact."""
    cfg = tiny_config(kvcache_block_size=8, num_kvcache_blocks=20)
    prompt_a, prompt_b = random_prompts([19, 27], seed=9)
    (seq_a,), (seq_b,) = make_requests([prompt_a]), make_requests([prompt_b])
    runner_a, runner_b = ModelRunner(tiny, cfg), ModelRunner(tiny, cfg)
    sched_a, sched_b = Scheduler(cfg), Scheduler(cfg)
    sched_a.add(seq_a)
    sched_b.add(seq_b)
    while not (sched_a.is_finished() and sched_b.is_finished()):
        for sched, runner in ((sched_a, runner_a), (sched_b, runner_b)):
            batch = sched.schedule()
            sched.postprocess(batch.seqs, runner.run(batch.seqs))
    assert seq_a.completion_token_ids == reference_completion(tiny, prompt_a, 12)
    assert seq_b.completion_token_ids == reference_completion(tiny, prompt_b, 12)
    assert runner_a.block_token_ids(0) != runner_b.block_token_ids(0)
    assert not torch.equal(runner_a.kv_cache.keys[0][:, 0], runner_b.kv_cache.keys[0][:, 0])  # block 0, layer 0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("config_class", [Qwen2Config, Qwen3Config, MistralConfig])
def test_other_supported_families_are_exact(config_class, device):
    """Qwen2 (q/k/v biases), Qwen3 (q/k norms) and Mistral run through the same attention path."""
    extra = {"sliding_window": None} if config_class is MistralConfig else {}
    family = tiny_model(config_class, seed=3, device=device, **extra)
    system = random_prompts([12], seed=8)[0]
    log = run_and_compare(family, tiny_config(kvcache_block_size=5, num_kvcache_blocks=60, max_num_batched_tokens=16,
                                         chunked_prefill=True, mixed_batches=True),
                          random_prompts([9, 20, 14], seed=6, prefix=system), arrival_steps=[0, 1, 2])
    assert any(isinstance(e, PrefixHit) for e in log.events) and "mixed" in log.kinds


def test_bf16_takes_the_path_the_app_takes_on_cuda():
    """bf16, the dtype the app runs in on CUDA, through the code it runs there (transformers' forward, the paged
    attention over a bf16 cache, plain products), run on the CPU: its dtype handling is tested without a GPU."""
    tiny = tiny_model(dtype=torch.bfloat16)
    system = random_prompts([12], seed=8)[0]
    log = run_and_compare(tiny, tiny_config(kvcache_block_size=5, num_kvcache_blocks=60, max_num_batched_tokens=16,
                                       chunked_prefill=True, mixed_batches=True),
                          random_prompts([9, 20, 14], seed=6, prefix=system), arrival_steps=[0, 1, 2])
    assert not log.runner.direct_forward and log.runner.kv_cache.dtype == torch.bfloat16
    assert any(isinstance(e, PrefixHit) for e in log.events) and "mixed" in log.kinds
    assert not any("_packed" in module.__dict__ for module in tiny.model.modules())
