"""The V0 twin's settings, under vLLM 0.10.2's own names (`vllm serve` flags, SchedulerConfig and CacheConfig
fields) and at the defaults V0 declares them with (vllm/config/scheduler.py, vllm/config/cache.py).

What V0 derives rather than declares is derived here the same way: `max_num_batched_tokens` (None: 2048, or
max_model_len when that is larger and chunked prefill is off, capped at max_num_seqs x max_model_len),
`long_prefill_token_threshold` (0 with several partial prefills: 4% of max_model_len) and the CPU pool
(`num_cpu_blocks`: None sizes it from `swap_space` GiB over one block's bytes, V0's
CacheEngine.get_cache_block_size: K and V per attention layer, heads x head size x block size x dtype bytes).
V0 learns `num_gpu_blocks` by profiling the GPU (`--num-gpu-blocks-override` sets it); the twin takes it.

In the app a run's settings are the shared `Config` (the pool, the batch limits, chunking, prefix caching, the
queue policy, under V0's names in `serve_args`) and the twin's own section, `V0Settings` (a `KindSettings`: the
preemption mode, the CPU pool, partial prefills, V0's long-prefill threshold and its watermark); `V0Config.from_config`
joins them."""

from __future__ import annotations

from dataclasses import dataclass, replace

from i18n import Message
from scheduler.config import Config
from scheduler.settings import ConfigError, KindSettings, Sweep, setting

DEFAULT_MAX_NUM_BATCHED_TOKENS = 2048  # vllm.utils.DEFAULT_MAX_NUM_BATCHED_TOKENS
GiB = 1 << 30
# One block's bytes per token for the app's model (SmolLM2-135M: 30 layers, 3 KV heads of 64, float32): K and V.
APP_MODEL_KV_BYTES_PER_TOKEN = 2 * 30 * 3 * 64 * 4
PREEMPTION_MODES = (None, "recompute", "swap")
AUTO = "auto"  # the setting's word for V0's None: --preemption-mode not given
POLICIES = ("fcfs", "priority")


@dataclass(frozen=True)
class V0Settings(KindSettings):
    """The V0 twin's own settings in a run's `Config` (its section), at V0's defaults. The CPU pool is set in blocks
    (V0 sizes it from --swap-space GiB: `serve_args` writes the GiB that make as many blocks of the app's model)."""
    messages = "vllm_v0.setting"
    sweeps = (Sweep("swap vs recompute", "preemption_mode", tuple(
        (Message(f"vllm_v0.setting.preemption_mode.{mode}"), mode) for mode in ("swap", "recompute")),
        "vllm_v0.sweep.preemption_mode"),)

    # --preemption-mode: "auto" (V0's None) recomputes a one-sequence group, as every group is in 0.10.2.
    preemption_mode: str = setting(AUTO, choices=(AUTO, "recompute", "swap"), flag="--preemption-mode")
    # The CPU blocks swapped-out requests wait in (V0's --swap-space, 4 GiB by default, is 5825 of this model's
    # blocks of 16 tokens; a few suit the stage).
    num_cpu_blocks: int = setting(16, bounds=(0, 1024), flag="--swap-space")
    max_num_partial_prefills: int = setting(1, bounds=(1, 16), flag="--max-num-partial-prefills")
    max_long_partial_prefills: int = setting(1, bounds=(1, 16), flag="--max-long-partial-prefills")
    long_prefill_token_threshold: int = setting(0, bounds=(0, 8192), flag="--long-prefill-token-threshold",
                                                key="v0_long_prefill_token_threshold")
    # SelfAttnBlockSpaceManager's watermark (no flag: 0.01 in every V0 engine): the GPU blocks admission and
    # swap-in leave free, int(watermark x blocks).
    watermark: float = setting(0.01, bounds=(0.0, 0.5), step=0.01, key="v0_watermark")

    def check(self, config):
        """What V0's SchedulerConfig refuses of these with the shared settings."""
        if self.max_num_partial_prefills > 1 and not config.chunked_prefill:
            raise ConfigError("max_num_partial_prefills", self.max_num_partial_prefills, "config.v0_partial_prefills")
        if not 1 <= self.max_long_partial_prefills <= self.max_num_partial_prefills:
            raise ConfigError("max_long_partial_prefills", self.max_long_partial_prefills,
                              "config.v0_long_partial_prefills", most=self.max_num_partial_prefills)
        if self.long_prefill_token_threshold > config.max_model_len:
            raise ConfigError("v0_long_prefill_token_threshold", self.long_prefill_token_threshold,
                              "config.long_prefill", max_model_len=config.max_model_len)


class V0SettingsError(ValueError):
    """A setting V0's own config validation refuses (the message says it as V0 does)."""


@dataclass(frozen=True)
class V0Config:
    """V0's settings. `preemption_mode` None lets V0 choose (recompute for a one-sequence group, which every
    group is in 0.10.2); `policy` "priority" orders by (priority, arrival time)."""
    num_gpu_blocks: int = 64  # --num-gpu-blocks-override (V0 profiles the GPU for it)
    block_size: int = 16  # --block-size
    swap_space: float = 4.0  # --swap-space, GiB of CPU memory per GPU for swapped-out blocks
    num_cpu_blocks: int | None = None  # the CPU pool; None: swap_space over one block's bytes
    kv_bytes_per_token: int = APP_MODEL_KV_BYTES_PER_TOKEN
    preemption_mode: str | None = None  # --preemption-mode
    max_num_seqs: int = 128  # --max-num-seqs
    max_num_batched_tokens: int | None = None  # --max-num-batched-tokens
    max_model_len: int = 8192  # --max-model-len
    enable_chunked_prefill: bool = False  # --enable-chunked-prefill
    max_num_partial_prefills: int = 1  # --max-num-partial-prefills
    max_long_partial_prefills: int = 1  # --max-long-partial-prefills
    long_prefill_token_threshold: int = 0  # --long-prefill-token-threshold
    enable_prefix_caching: bool = False  # --enable-prefix-caching (V0 leaves it off)
    policy: str = "fcfs"  # --scheduling-policy
    watermark: float = 0.01  # SelfAttnBlockSpaceManager's default (no flag)
    eos: int = -1  # the model's EOS token id (-1: none)

    def __post_init__(self):
        for name in ("num_gpu_blocks", "block_size", "max_num_seqs", "max_model_len", "max_num_partial_prefills"):
            if getattr(self, name) < 1:
                raise V0SettingsError(f"{name} ({getattr(self, name)}) must be at least 1")
        if self.preemption_mode not in PREEMPTION_MODES:
            raise V0SettingsError(f"preemption_mode {self.preemption_mode!r}: use one of {PREEMPTION_MODES}")
        if self.policy not in POLICIES:
            raise V0SettingsError(f"scheduling policy {self.policy!r}: use one of {POLICIES}")
        if self.num_cpu_blocks is not None and self.num_cpu_blocks < 0:
            raise V0SettingsError(f"num_cpu_blocks ({self.num_cpu_blocks}) must be at least 0")
        batched = self.batched_tokens
        if batched < self.max_model_len and not self.enable_chunked_prefill:
            raise V0SettingsError(
                f"max_num_batched_tokens ({batched}) is smaller than max_model_len ({self.max_model_len}). "
                "This effectively limits the maximum sequence length to max_num_batched_tokens and makes vLLM "
                "reject longer sequences. Please increase max_num_batched_tokens or decrease max_model_len.")
        if batched < self.max_num_seqs:
            raise V0SettingsError(f"max_num_batched_tokens ({batched}) must be greater than or equal to "
                                  f"max_num_seqs ({self.max_num_seqs}).")
        if self.max_num_partial_prefills > 1 and not self.enable_chunked_prefill:
            raise V0SettingsError("Chunked prefill must be enabled to set max_num_partial_prefills > 1.")
        if not 1 <= self.max_long_partial_prefills <= self.max_num_partial_prefills:
            raise V0SettingsError(
                f"max_long_partial_prefills ({self.max_long_partial_prefills}) must be greater than or equal to 1 "
                f"and less than or equal to max_num_partial_prefills ({self.max_num_partial_prefills}).")

    @property
    def batched_tokens(self) -> int:
        """max_num_batched_tokens as V0's SchedulerConfig settles it."""
        if self.max_num_batched_tokens is not None:
            return self.max_num_batched_tokens
        default = DEFAULT_MAX_NUM_BATCHED_TOKENS if self.enable_chunked_prefill else \
            max(self.max_model_len, DEFAULT_MAX_NUM_BATCHED_TOKENS)
        return min(self.max_num_seqs * self.max_model_len, default)

    @property
    def prefill_threshold(self) -> int:
        """long_prefill_token_threshold as V0 settles it: 4% of max_model_len with several partial prefills."""
        if self.max_num_partial_prefills > 1 and self.long_prefill_token_threshold == 0:
            return int(self.max_model_len * 0.04)
        return self.long_prefill_token_threshold

    @property
    def cpu_blocks(self) -> int:
        """The CPU pool's blocks: num_cpu_blocks, or swap_space GiB over one block's bytes."""
        if self.num_cpu_blocks is not None:
            return self.num_cpu_blocks
        return int(self.swap_space * GiB) // (self.kv_bytes_per_token * self.block_size)

    @property
    def watermark_blocks(self) -> int:
        """The GPU blocks admission and swap-in leave free: int(watermark x num_gpu_blocks)."""
        return int(self.watermark * self.num_gpu_blocks)

    @classmethod
    def from_config(cls, config: Config, **v0_only) -> V0Config:
        """The engine's Config under V0's names (its pool, budget, chunking, prefix caching and queue policy) and
        its V0 section (`V0Settings`), any of them overridden by `v0_only`."""
        own = config.of(V0Settings)
        block_bytes = APP_MODEL_KV_BYTES_PER_TOKEN * config.kvcache_block_size
        return replace(cls(
            num_gpu_blocks=config.num_kvcache_blocks, block_size=config.kvcache_block_size,
            max_num_seqs=config.max_num_seqs, max_num_batched_tokens=config.max_num_batched_tokens,
            max_model_len=config.max_model_len, enable_chunked_prefill=config.chunked_prefill,
            enable_prefix_caching=config.enable_prefix_caching, policy=config.queue_policy, eos=config.eos,
            preemption_mode=None if own.preemption_mode == AUTO else own.preemption_mode,
            num_cpu_blocks=own.num_cpu_blocks, swap_space=(own.num_cpu_blocks + 0.5) * block_bytes / GiB,
            max_num_partial_prefills=own.max_num_partial_prefills,
            max_long_partial_prefills=own.max_long_partial_prefills,
            long_prefill_token_threshold=own.long_prefill_token_threshold, watermark=own.watermark), **v0_only)

    def serve_command(self, model: str) -> list[str]:
        """The shell words that start vLLM 0.10.2 on its V0 engine (VLLM_USE_V1=0) with these settings."""
        return ["env", "VLLM_USE_V1=0", "vllm", "serve", model, *self.serve_args()]

    def serve_args(self) -> list[str]:
        """The `vllm serve` flags of vLLM 0.10.2 that set these settings on its V0 engine (VLLM_USE_V1=0)."""
        args = ["--num-gpu-blocks-override", str(self.num_gpu_blocks), "--block-size", str(self.block_size),
                "--max-num-seqs", str(self.max_num_seqs), "--max-num-batched-tokens", str(self.batched_tokens),
                "--max-model-len", str(self.max_model_len), "--scheduling-policy", self.policy,
                "--swap-space", f"{self.swap_space:.9g}"]
        if self.preemption_mode:
            args += ["--preemption-mode", self.preemption_mode]
        if self.enable_chunked_prefill:
            args += ["--enable-chunked-prefill", "--max-num-partial-prefills", str(self.max_num_partial_prefills),
                     "--max-long-partial-prefills", str(self.max_long_partial_prefills),
                     "--long-prefill-token-threshold", str(self.long_prefill_token_threshold)]
        else:
            args += ["--no-enable-chunked-prefill"]
        args += ["--enable-prefix-caching" if self.enable_prefix_caching else "--no-enable-prefix-caching"]
        return args
