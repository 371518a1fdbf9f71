"""The vLLM twin driving a real (tiny) model: its block ids index the runner's KV cache (one block more, for vLLM's
null block), and with n-gram drafts, padded resumed decodes included, every request writes generate()'s tokens."""

from runner.model_runner import ModelRunner
from scheduler import Config, SamplingParams, Sequence
from scheduler.factory import runner_config
from scheduler.vllm_v1 import VllmScheduler
from tests.helpers.tiny_model import TINY_EOS, reference_completion, run_with_arrivals, tiny_model

PROMPTS = [[5, 6, 7, 5, 6, 7, 5, 6], [9, 10, 11, 12, 9, 10, 11], [3], [20, 21, 22, 20, 21, 22, 20, 21, 22, 20]]


def test_the_twin_with_drafts_and_preemptions_writes_generates_tokens():
    tiny = tiny_model()
    cfg = Config(max_num_seqs=3, max_num_batched_tokens=32, max_model_len=64, num_kvcache_blocks=9,
                 kvcache_block_size=4, chunked_prefill=True, enable_prefix_caching=True, eos=TINY_EOS,
                 num_speculative_tokens=3, prompt_lookup_min=1, prompt_lookup_max=2)
    seqs = [Sequence(p, SamplingParams(temperature=0.0, max_tokens=14), seq_id=i, arrival=i)
            for i, p in enumerate(PROMPTS)]
    runner = ModelRunner(tiny, runner_config("vllm", cfg))
    log = run_with_arrivals(VllmScheduler(cfg), runner, {i: [s] for i, s in enumerate(seqs)})
    kinds = {e.kind for e in log.events}
    assert {"preempted", "speculated"} <= kinds
    assert any(e.kind == "speculated" and -1 in e.draft_token_ids for e in log.events)  # a padded decode
    for prompt, seq in zip(PROMPTS, seqs, strict=True):
        assert seq.completion_token_ids == reference_completion(tiny, prompt, 14), f"request {seq.seq_id}"
