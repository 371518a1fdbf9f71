"""SmolLM2 through the runner on CUDA (`make gpu-check`); skipped, with the reason, where torch sees no CUDA device.

How exactness is judged on CUDA. The runner and `generate()` reach each logit through different kernels, batch
shapes and summation orders. In fp32 the rounding that leaves is far below the gaps between the top logits,
so greedy output must be token-for-token `generate()`'s, as on the CPU: asserted here for SmolLM2 and, through
the device-parametrized tests in test_runner_exactness.py, for the tiny models. In bf16, the dtype the app runs
on CUDA, the rounding is about 1e-2 of a logit, enough to flip a choice between two near-tied tokens, after
which the two texts diverge legitimately; so bf16 is checked for sense (the answer names Paris, every request
runs to its length), its agreement with `generate()` in bf16 is printed rather than asserted, and its speed
is measured by `python -m bench.bench_runner --device cuda`.
"""

import pytest
import torch

from runner.model_loading import load_model
from tests.helpers.tiny_model import chat_run, needs_cuda, reference_completion

pytestmark = [pytest.mark.model, *needs_cuda]


def completions_against_generate(loaded, max_tokens: int = 16):
    """(runner's completion, generate()'s completion) per chat question, and the runner."""
    runner, seqs, _ = chat_run(loaded, max_tokens)
    pairs = [(seq.completion_token_ids, reference_completion(loaded, seq.token_ids[:seq.num_prompt_tokens],
                                                              max_tokens)) for seq in seqs]
    return pairs, runner


def test_fp32_on_cuda_is_token_exact():
    loaded = load_model(device="cuda", dtype=torch.float32)
    pairs, runner = completions_against_generate(loaded)
    cache = runner.kv_cache.keys[0]
    assert cache.is_cuda and cache.dtype == torch.float32 and cache.abs().sum() > 0  # the K/V really live there
    for ours, reference in pairs:
        assert ours == reference


def agreeing_prefix(ours: list[int], reference: list[int]) -> int:
    """How many tokens the two completions share before their first difference."""
    return next((i for i, (a, b) in enumerate(zip(ours, reference, strict=False)) if a != b),
                min(len(ours), len(reference)))


def test_bf16_on_cuda_makes_sense_and_reports_agreement():
    loaded = load_model(device="cuda")
    assert loaded.dtype == torch.bfloat16
    pairs, runner = completions_against_generate(loaded, max_tokens=24)
    assert all(ours for ours, _ in pairs)
    assert "Paris" in runner.decode(pairs[0][0])
    equal = sum(ours == reference for ours, reference in pairs)
    agreeing = sum(agreeing_prefix(ours, reference) for ours, reference in pairs)
    print(f"\nbf16 on CUDA: {equal}/{len(pairs)} completions equal to generate() in bf16; {agreeing}/"
          f"{sum(len(reference) for _, reference in pairs)} of its tokens before the first difference "
          "(printed, not asserted)")
