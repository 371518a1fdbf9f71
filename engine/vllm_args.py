"""The vLLM engine arguments closest to a scheduler config, and notes where our policy has no vLLM twin.

    vllm_args(Config(max_num_seqs=8))  ->  ["--max-num-seqs", "8", "--max-num-batched-tokens", "512", ...]
    vllm_command(config, "HuggingFaceTB/SmolLM2-135M-Instruct")  ->  "vllm serve ... --max-num-seqs 8 ..."

vLLM (V1) always runs decodes first and fills the rest of the token budget with prefills (our
`mixed_batches`), preempts the most recently scheduled request when blocks run out (our `tail`, or lowest
priority under `--scheduling-policy priority`), and takes the EOS token from the model.
"""

from __future__ import annotations

import json
import shlex

from scheduler import Config

VLLM_BLOCK_SIZES = (1, 8, 16, 32, 64, 128)  # what vLLM's --block-size accepts


def _flag(name: str, on: bool) -> str:
    return f"--{name}" if on else f"--no-{name}"


def vllm_args(config: Config) -> list[str]:
    """`vllm serve` arguments for `config`, one list item per shell word."""
    args = ["--max-num-seqs", str(config.max_num_seqs),
            "--max-num-batched-tokens", str(config.max_num_batched_tokens),
            "--max-model-len", str(config.max_model_len),
            "--block-size", str(config.kvcache_block_size),
            "--num-gpu-blocks-override", str(config.num_kvcache_blocks),
            _flag("enable-chunked-prefill", config.chunked_prefill),
            _flag("enable-prefix-caching", config.enable_prefix_caching),
            "--scheduling-policy", config.queue_policy]
    if config.num_speculative_tokens > 0:
        args += ["--speculative-config", json.dumps({
            "method": "ngram", "num_speculative_tokens": config.num_speculative_tokens,
            "prompt_lookup_max": config.prompt_lookup_max, "prompt_lookup_min": config.prompt_lookup_min})]
    return args


def vllm_command(config: Config, model: str = "HuggingFaceTB/SmolLM2-135M-Instruct") -> str:
    return shlex.join(["vllm", "serve", model, *vllm_args(config)])


def vllm_notes(config: Config) -> list[str]:
    """Where `config` asks for something vLLM does not do (or does differently), in one sentence each."""
    notes = []
    if not config.mixed_batches:
        order = "prefills before decodes" if config.prefill_first else "decodes, then prefills in a separate step"
        notes.append(f"Batches: ours run {order}; vLLM mixes decodes and prefill chunks in one step, running "
                     "requests first (mixed_batches=true is the closest).")
    elif config.prefill_first:
        notes.append("prefill_first has no effect in mixed batches, and vLLM has no such switch.")
    if config.preemption_policy == "smart":
        notes.append("Smart preemption (least progress first) has no vLLM equivalent: vLLM preempts the most "
                     "recently scheduled request (our `tail`).")
    elif config.preemption_policy == "priority" and config.queue_policy != "priority":
        notes.append("Priority preemption only exists in vLLM with --scheduling-policy priority.")
    if config.kvcache_block_size not in VLLM_BLOCK_SIZES:
        notes.append(f"vLLM accepts --block-size {', '.join(map(str, VLLM_BLOCK_SIZES))} only, not "
                     f"{config.kvcache_block_size}.")
    if config.eos != -1:
        notes.append("eos: vLLM takes the end-of-sequence token from the model (or per request, stop_token_ids).")
    return notes
