"""The V0 twin's swaps are real: driven through the runner's block-copy primitive (`Batch.block_copies`), a request
swapped out to the CPU pool and back continues token for token as greedy `generate()` writes it alone, beside the
same workload preempted by recompute. On the tiny model (every run of the suite) and, marked `model`, on SmolLM2."""

import pytest

from runner import text
from runner.model_loading import load_model
from runner.model_runner import ModelRunner
from scheduler import Config, SamplingParams, Sequence
from scheduler.factory import make_scheduler, runner_pools
from tests.helpers.real_model import NEEDS_MODEL
from tests.helpers.tiny_model import reference_completion, tiny_model

KIND = "vllm_v0"


def swap_or_recompute(loaded, mode: str, prompts: list[list[int]], max_tokens: int) -> tuple[list[Sequence], list]:
    """Run the prompts (all arriving at once) on a pool too small for them all, V0 preempting by `mode`; each
    step's block copies go through the runner before its forward pass, as the engine does."""
    config = Config(max_num_seqs=4, max_num_batched_tokens=128, max_model_len=128, num_kvcache_blocks=9,
                    kvcache_block_size=4, eos=loaded.eos_token_id, enable_prefix_caching=False,
                    preemption_mode=mode, num_cpu_blocks=12)
    scheduler = make_scheduler(KIND, config)
    runner = ModelRunner(loaded, config, side_pools=runner_pools(KIND, config))
    seqs = [Sequence(p, SamplingParams(temperature=0.0, max_tokens=max_tokens), seq_id=i)
            for i, p in enumerate(prompts)]
    for seq in seqs:
        scheduler.add(seq)
    events = []
    for _ in range(200):
        if scheduler.is_finished():
            break
        batch = scheduler.schedule()
        runner.copy_blocks(batch.block_copies)
        events += [*batch.events, *scheduler.postprocess(batch.seqs, runner.run(batch.seqs) if batch.seqs else [])]
    assert scheduler.is_finished(), "the run did not end"
    return seqs, events


def check_exact(loaded, prompts, max_tokens):
    for mode in ("swap", "recompute"):
        seqs, events = swap_or_recompute(loaded, mode, prompts, max_tokens)
        kinds = [e.kind for e in events]
        if mode == "swap":
            assert "swapped_out" in kinds and "swapped_in" in kinds, kinds
        else:
            assert any(e.kind == "admitted" and e.recompute for e in events) and "swapped_out" not in kinds
        for seq, prompt in zip(seqs, prompts, strict=True):
            assert seq.finish_reason in ("eos", "max_tokens"), seq.finish_reason
            assert seq.completion_token_ids == reference_completion(loaded, prompt, max_tokens), \
                f"{mode}: request {seq.seq_id}"


def test_a_request_swapped_out_and_in_continues_token_exact_on_the_tiny_model():
    tiny = tiny_model()
    check_exact(tiny, [[(7 * i + 3 * j) % 90 + 1 for j in range(9 + i)] for i in range(3)], 14)


@pytest.mark.parametrize("device", [pytest.param("cpu", marks=NEEDS_MODEL)])
def test_a_request_swapped_out_and_in_continues_token_exact_on_smollm2(device):
    smollm2 = load_model(device=device)  # the one the app loads: SmolLM2-135M
    prompts = [text.encode_prompt(smollm2.tokenizer, prompt, chat=False) for prompt in (
        "The capital of France is", "Once upon a time, in a small village,", "def fibonacci(n):")]
    check_exact(smollm2, prompts, 14)
