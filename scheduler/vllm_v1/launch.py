"""How a run starts on vLLM: the `vllm serve` arguments of a config, its start-up check, and the notes that say why
the arguments read as they do. The vLLM twin declares them (`SchedulerInfo.launch`, `start_warning`); the article's
scheduler, whose closest system is vLLM, writes the same command with its own notes (scheduler/article/launch.py).

    vllm_args(Config(max_num_seqs=8))  ->  ["--max-num-seqs", "8", "--max-num-batched-tokens", "512", ...]
    vllm_command(config, "HuggingFaceTB/SmolLM2-135M-Instruct", False)  ->  ["vllm", "serve", ..., "8", ...]

vLLM (V1) always runs decodes first and fills the rest of the token budget with prefills (the article's
`mixed_batches`), preempts the most recently scheduled request when blocks run out (`tail`, or lowest priority under
`--scheduling-policy priority`), and takes the EOS token from the model. Its KV pool keeps block 0 as a "null
block" that no request ever gets, so N usable blocks take `--num-gpu-blocks-override N+1`. Current vLLM turns async
scheduling (overlapped scheduling) on by default, so both choices are spelled out.
"""

from __future__ import annotations

import json

from i18n import Message
from scheduler.config import Config
from scheduler.contract import Launch
from scheduler.settings import declared
from scheduler.vllm_v1.settings import VllmSettings

NULL_BLOCKS = 1  # vLLM V1 reserves block 0 of the pool as the null block


def _flag(name: str, on: bool) -> str:
    return f"--{name}" if on else f"--no-{name}"


def vllm_args(config: Config, overlap: bool = False) -> list[str]:
    """`vllm serve` arguments for `config` (and overlapped scheduling or not), one list item per shell word: the
    shared settings under vLLM's names, then the twin's own (each under the flag its declaration names)."""
    own, flag = config.of(VllmSettings), {spec.key: spec.flag for spec in declared(VllmSettings)}
    args = ["--max-num-seqs", str(config.max_num_seqs),
            "--max-num-batched-tokens", str(config.max_num_batched_tokens),
            "--max-model-len", str(config.max_model_len),
            "--block-size", str(config.kvcache_block_size),
            "--num-gpu-blocks-override", str(config.num_kvcache_blocks + NULL_BLOCKS),
            _flag("enable-chunked-prefill", config.chunked_prefill),
            _flag("enable-prefix-caching", config.enable_prefix_caching),
            _flag("async-scheduling", overlap),
            "--scheduling-policy", config.queue_policy,
            _flag(flag["scheduler_reserve_full_isl"][2:], own.scheduler_reserve_full_isl),
            flag["watermark"], f"{own.watermark:g}"]
    if own.long_prefill_token_threshold:
        args += [flag["long_prefill_token_threshold"], str(own.long_prefill_token_threshold)]
    if own.long_prefill_token_threshold_adaptive:
        args.append(flag["long_prefill_token_threshold_adaptive"])
    for name in ("max_num_scheduled_tokens", "max_num_active_seqs"):  # 0 is vLLM's default (None)
        if getattr(own, name):
            args += [flag[name], str(getattr(own, name))]
    if config.num_speculative_tokens > 0:
        args += ["--speculative-config", json.dumps({
            "method": "ngram", "num_speculative_tokens": config.num_speculative_tokens,
            "prompt_lookup_max": config.prompt_lookup_max, "prompt_lookup_min": config.prompt_lookup_min})]
    return args


def vllm_command(config: Config, model: str, overlap: bool) -> list[str]:
    return ["vllm", "serve", model, *vllm_args(config, overlap)]


def vllm_would_start(config: Config) -> bool:
    """Whether vLLM's engine starts with `config`'s pool: at start-up (get_kv_cache_configs in vLLM 0.32) it
    checks that its usable blocks hold one request of max_model_len tokens, and refuses to start otherwise. Its
    scheduler has no such check: the twin, like it, keeps a request that outgrew the pool waiting for good."""
    return config.max_model_len <= config.kv_capacity_tokens


def vllm_start_warning(config: Config) -> Message | None:
    """What the sidebar says of a config vLLM would refuse to start with (None: it would start)."""
    if vllm_would_start(config):
        return None
    return Message("sidebar.beyond_pool", max_model_len=config.max_model_len, capacity=config.kv_capacity_tokens,
                   what=Message("vllm.beyond_pool"))


def pool_notes(config: Config) -> list[Message]:
    """What any `vllm serve` line of `config` says of its pool: the null block, a refusal to start."""
    notes = [Message("vllm.null_block", blocks=config.num_kvcache_blocks + NULL_BLOCKS,
                     usable=config.num_kvcache_blocks)]
    if not vllm_would_start(config):
        notes.append(Message("vllm.refuses_to_start", max_model_len=config.max_model_len,
                             capacity=config.kv_capacity_tokens))
    return notes


def model_notes(config: Config) -> list[Message]:
    """Where vLLM would take a setting from elsewhere or refuse it: the block size, the EOS token."""
    notes = []
    if config.kvcache_block_size % 16:
        notes.append(Message("vllm.block_size", size=config.kvcache_block_size))
    if config.eos != -1:
        notes.append(Message("vllm.eos"))
    return notes


def twin_notes(config: Config) -> list[Message]:
    """The twin's run: its decisions are vLLM's own, at the release it mirrored."""
    return [*pool_notes(config), Message("vllm.twin", version=config.of(VllmSettings).vllm_version),
            *model_notes(config)]


vllm_launch = Launch("vLLM", vllm_command, twin_notes)
