"""The vLLM engine arguments closest to a scheduler config, and notes where our policy has no vLLM twin.

    vllm_args(Config(max_num_seqs=8))  ->  ["--max-num-seqs", "8", "--max-num-batched-tokens", "512", ...]
    vllm_command(config, "HuggingFaceTB/SmolLM2-135M-Instruct")  ->  "vllm serve ... --max-num-seqs 8 ..."

vLLM (V1) always runs decodes first and fills the rest of the token budget with prefills (our
`mixed_batches`), preempts the most recently scheduled request when blocks run out (our `tail`, or lowest
priority under `--scheduling-policy priority`), and takes the EOS token from the model. Its KV pool keeps
block 0 as a "null block" that no request ever gets, so N usable blocks take `--num-gpu-blocks-override N+1`.
Current vLLM turns async scheduling (our overlapped scheduling) on by default, so both choices are spelled out.
"""

from __future__ import annotations

import json
import shlex

from scheduler import Config

NULL_BLOCKS = 1  # vLLM V1 reserves block 0 of the pool as the null block


def _flag(name: str, on: bool) -> str:
    return f"--{name}" if on else f"--no-{name}"


def vllm_args(config: Config, overlap: bool = False) -> list[str]:
    """`vllm serve` arguments for `config` (and overlapped scheduling or not), one list item per shell word."""
    args = ["--max-num-seqs", str(config.max_num_seqs),
            "--max-num-batched-tokens", str(config.max_num_batched_tokens),
            "--max-model-len", str(config.max_model_len),
            "--block-size", str(config.kvcache_block_size),
            "--num-gpu-blocks-override", str(config.num_kvcache_blocks + NULL_BLOCKS),
            _flag("enable-chunked-prefill", config.chunked_prefill),
            _flag("enable-prefix-caching", config.enable_prefix_caching),
            _flag("async-scheduling", overlap),
            "--scheduling-policy", config.queue_policy]
    if config.long_prefill_token_threshold:
        args += ["--long-prefill-token-threshold", str(config.long_prefill_token_threshold)]
    if config.num_speculative_tokens > 0:
        args += ["--speculative-config", json.dumps({
            "method": "ngram", "num_speculative_tokens": config.num_speculative_tokens,
            "prompt_lookup_max": config.prompt_lookup_max, "prompt_lookup_min": config.prompt_lookup_min})]
    return args


def vllm_command(config: Config, model: str = "HuggingFaceTB/SmolLM2-135M-Instruct", overlap: bool = False) -> str:
    return shlex.join(["vllm", "serve", model, *vllm_args(config, overlap)])


TWIN_NOTE = ("The decisions shown are vLLM's own: this run used the vLLM twin (scheduler/vllm_v1/), which makes "
             "vLLM 0.32's V1 Scheduler decisions step for step, block ids included, as `make vllm-check` checks "
             "against vLLM's Scheduler; prefill_first, mixed_batches and the preemption policy do not apply to it.")


def vllm_notes(config: Config, scheduler: str = "article") -> list[str]:
    """Why the arguments read as they do, and, for a run of the article's scheduler (`scheduler`, a kind of
    scheduler.SCHEDULER_KINDS), where `config` asks for something vLLM does not do (or does differently); for a
    run of the vLLM twin, that its decisions are vLLM's. One sentence each."""
    notes = [f"--num-gpu-blocks-override {config.num_kvcache_blocks + NULL_BLOCKS}: vLLM keeps block 0 as a null "
             f"block no request uses, so {config.num_kvcache_blocks} usable blocks need one more."]
    if scheduler == "vllm":
        return [*notes, TWIN_NOTE, *_backend_notes(config)]
    return [*notes, *_policy_notes(config), *_backend_notes(config)]


def _policy_notes(config: Config) -> list[str]:
    """Where the article's scheduler under `config` decides otherwise than vLLM."""
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
    elif config.preemption_policy == "tail" and config.queue_policy == "priority":
        notes.append("With --scheduling-policy priority vLLM preempts the least important running request (the "
                     "latest arrival among equals), not the tail of the running queue: our `priority` preemption "
                     "policy is the closest.")
    if config.queue_policy == "priority":
        notes.append("Our priority queue lets an important waiting request preempt less important running ones to "
                     "get in; vLLM has no equivalent: it preempts only to make room for running requests, and a "
                     "waiting request that does not fit waits.")
    notes.append("Even in its closest setting this scheduler is not vLLM's (vLLM admits a waiting request only if its "
                 "whole sequence fits in the free blocks, reuses freed uncached blocks first, so its block ids "
                 "differ): the vLLM twin (scheduler \"vllm\") makes vLLM's own decisions.")
    return notes


def _backend_notes(config: Config) -> list[str]:
    """What vLLM's server takes otherwise than our config, whichever scheduler ran."""
    notes = []
    if config.kvcache_block_size % 16:
        notes.append(f"--block-size {config.kvcache_block_size}: current vLLM takes any block size its attention "
                     "backend supports (most GPU backends want a multiple of 16), so this one may be refused there.")
    if config.eos != -1:
        notes.append("eos: vLLM takes the end-of-sequence token from the model (or per request, stop_token_ids).")
    return notes
