"""The vLLM engine arguments closest to a scheduler config, and notes where our policy has no vLLM twin.

    vllm_args(Config(max_num_seqs=8))  ->  ["--max-num-seqs", "8", "--max-num-batched-tokens", "512", ...]
    vllm_command(config, "HuggingFaceTB/SmolLM2-135M-Instruct")  ->  "vllm serve ... --max-num-seqs 8 ..."
    system_command(config, kind)  ->  the command of the system a scheduler mirrors, beside vLLM's, as the
                                      scheduler declares it (SchedulerInfo.command; None where it declares none)

vLLM (V1) always runs decodes first and fills the rest of the token budget with prefills (our
`mixed_batches`), preempts the most recently scheduled request when blocks run out (our `tail`, or lowest
priority under `--scheduling-policy priority`), and takes the EOS token from the model. Its KV pool keeps
block 0 as a "null block" that no request ever gets, so N usable blocks take `--num-gpu-blocks-override N+1`.
Current vLLM turns async scheduling (our overlapped scheduling) on by default, so both choices are spelled out.
"""

from __future__ import annotations

import json
import shlex
from functools import partial

from i18n import text
from scheduler import Config
from scheduler.factory import DEFAULT_KIND, scheduler_info

VLLM = "vLLM"  # the system a scheduler that makes vLLM's decisions declares it mirrors (SchedulerInfo.system)

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
            "--scheduling-policy", config.queue_policy,
            _flag("scheduler-reserve-full-isl", config.scheduler_reserve_full_isl),
            "--watermark", f"{config.watermark:g}"]
    if config.long_prefill_token_threshold:
        args += ["--long-prefill-token-threshold", str(config.long_prefill_token_threshold)]
    if config.long_prefill_token_threshold_adaptive:
        args.append("--long-prefill-token-threshold-adaptive")
    for name in ("max_num_scheduled_tokens", "max_num_active_seqs"):  # 0 is vLLM's default (None)
        if getattr(config, name):
            args += ["--" + name.replace("_", "-"), str(getattr(config, name))]
    if config.num_speculative_tokens > 0:
        args += ["--speculative-config", json.dumps({
            "method": "ngram", "num_speculative_tokens": config.num_speculative_tokens,
            "prompt_lookup_max": config.prompt_lookup_max, "prompt_lookup_min": config.prompt_lookup_min})]
    return args


def vllm_would_start(config: Config) -> bool:
    """Whether vLLM's engine starts with `config`'s pool: at start-up (get_kv_cache_configs in vLLM 0.32) it
    checks that its usable blocks hold one request of max_model_len tokens, and refuses to start otherwise. Its
    scheduler has no such check: the twin, like it, keeps a request that outgrew the pool waiting for good."""
    return config.max_model_len <= config.kv_capacity_tokens


DEFAULT_MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"


def vllm_command(config: Config, model: str = DEFAULT_MODEL, overlap: bool = False) -> str:
    return shlex.join(["vllm", "serve", model, *vllm_args(config, overlap)])


def system_command(config: Config, scheduler: str, model: str = DEFAULT_MODEL, overlap: bool = False) -> str | None:
    """The command that starts the system `scheduler` mirrors with `config`'s settings, where the scheduler
    declares one (`SchedulerInfo.command`: SGLang's `python -m sglang.launch_server ...`)."""
    words = scheduler_info(scheduler).command
    return shlex.join(words(config, model, overlap)) if words is not None else None


def vllm_notes(config: Config, lang: str, scheduler: str = DEFAULT_KIND) -> list[str]:
    """Why the arguments read as they do, in one sentence each, in `lang`; for a run of a scheduler (`scheduler`,
    one of scheduler.SCHEDULER_KINDS) that does not mirror vLLM, where `config` asks for something vLLM does not do
    (or does differently); for a run of one that does (the vLLM twin), that its decisions are vLLM's own."""
    say = partial(text, lang)
    notes = [say("vllm.null_block", blocks=config.num_kvcache_blocks + NULL_BLOCKS, usable=config.num_kvcache_blocks)]
    if not vllm_would_start(config):
        notes.append(say("vllm.refuses_to_start", max_model_len=config.max_model_len,
                         capacity=config.kv_capacity_tokens))
    info = scheduler_info(scheduler)
    if info.system == VLLM:
        notes.append(say("vllm.twin", version=config.vllm_version))
    elif info.command is not None:  # it mirrors another system: its own command says what ran
        notes.append(say("vllm.other_system", system=info.system, version=info.version))
    else:
        notes += [*_policy_notes(config, say), say("vllm.not_the_twin")]
    if config.kvcache_block_size % 16:
        notes.append(say("vllm.block_size", size=config.kvcache_block_size))
    if config.eos != -1:
        notes.append(say("vllm.eos"))
    return notes


def _policy_notes(config: Config, say) -> list[str]:
    """Where the article's scheduler under `config` decides otherwise than vLLM."""
    notes = []
    if not config.mixed_batches:
        notes.append(say("vllm.batches", order=say("vllm.order.prefill_first" if config.prefill_first
                                                   else "vllm.order.decode_first")))
    elif config.prefill_first:
        notes.append(say("vllm.prefill_first_mixed"))
    if config.preemption_policy == "smart":
        notes.append(say("vllm.smart"))
    elif config.preemption_policy == "priority" and config.queue_policy != "priority":
        notes.append(say("vllm.priority_preemption"))
    elif config.preemption_policy == "tail" and config.queue_policy == "priority":
        notes.append(say("vllm.tail_with_priority"))
    if config.queue_policy == "priority":
        notes.append(say("vllm.priority_queue"))
    return notes
