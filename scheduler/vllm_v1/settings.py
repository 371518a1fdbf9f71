"""The vLLM twin's own settings: vLLM's SchedulerConfig knobs the article's scheduler has no counterpart for, under
vLLM's names and at its defaults (vLLM's None is 0 here), and the vLLM release the twin mirrors."""

from __future__ import annotations

from dataclasses import dataclass

from i18n import Message
from scheduler.settings import ConfigError, KindSettings, Sweep, setting

VLLM_VERSIONS = ("0.32", "0.33")  # the vLLM releases whose decisions the twin makes


@dataclass(frozen=True)
class VllmSettings(KindSettings):
    messages = "vllm.setting"
    sweeps = (Sweep("whole sequence vs first chunk at admission (vLLM)", "scheduler_reserve_full_isl",
                    ((Message("compare.variant.reserve_on"), True), (Message("compare.variant.reserve_off"), False)),
                    "vllm.sweep.scheduler_reserve_full_isl"),
              Sweep("watermark 0 vs 0.1 (vLLM)", "watermark",
                    tuple((Message("compare.variant.watermark", watermark=w), float(w)) for w in (0, 0.1)),
                    "vllm.sweep.watermark"),
              Sweep("vLLM 0.32 vs 0.33", "vllm_version",
                    tuple((Message("vllm.sweep.version", version=v), v) for v in VLLM_VERSIONS),
                    "vllm.sweep.vllm_version"))

    # The vLLM release the twin mirrors (offered beside the scheduler: SchedulerInfo.version_setting).
    vllm_version: str = setting(VLLM_VERSIONS[0], choices=VLLM_VERSIONS)
    # On, a waiting request is admitted only if its whole sequence fits in the free blocks; off, once its first
    # chunk does.
    scheduler_reserve_full_isl: bool = setting(True, flag="--scheduler-reserve-full-isl")
    # The fraction of the pool's blocks (vLLM counts its null block) a waiting request must leave free to be admitted
    # while another request runs; 0 keeps none.
    watermark: float = setting(0.0, bounds=(0.0, 0.99), step=0.05, flag="--watermark")
    # The tokens one step may schedule (0: max_num_batched_tokens), and the requests admitted into RUNNING (0:
    # max_num_seqs).
    max_num_scheduled_tokens: int = setting(0, bounds=(0, 65536), flag="--max-num-scheduled-tokens")
    max_num_active_seqs: int = setting(0, bounds=(0, 256), flag="--max-num-active-seqs")
    # The cap on one request's prefill chunk per step (0: none).
    long_prefill_token_threshold: int = setting(0, bounds=(0, 8192), flag="--long-prefill-token-threshold",
                                                always_written=True)
    # Raise long_prefill_token_threshold to a fair share of the budget: max_num_batched_tokens / requests queued.
    long_prefill_token_threshold_adaptive: bool = setting(False, flag="--long-prefill-token-threshold-adaptive")

    def check(self, config):
        """vLLM's own ranges (watermark in [0, 1), the others 0 or within the shared limit they refine)."""
        if not 0 <= self.long_prefill_token_threshold <= config.max_model_len:
            raise ConfigError("long_prefill_token_threshold", self.long_prefill_token_threshold,
                              "config.long_prefill", max_model_len=config.max_model_len)
        if not 0.0 <= self.watermark < 1.0:
            raise ConfigError("watermark", self.watermark, "config.watermark")
        if not 0 <= self.max_num_scheduled_tokens <= config.max_num_batched_tokens:
            raise ConfigError("max_num_scheduled_tokens", self.max_num_scheduled_tokens, "config.scheduled_tokens",
                              max_num_batched_tokens=config.max_num_batched_tokens)
        if not 0 <= self.max_num_active_seqs <= config.max_num_seqs:
            raise ConfigError("max_num_active_seqs", self.max_num_active_seqs, "config.active_seqs",
                              max_num_seqs=config.max_num_seqs)

    def since(self, release: str) -> bool:
        """Whether the twin mirrors vLLM `release` or a later one: for a rule vLLM changed in `release`."""
        return VLLM_VERSIONS.index(self.vllm_version) >= VLLM_VERSIONS.index(release)

    def watermark_blocks(self, num_blocks: int) -> int:
        """The blocks vLLM keeps free when it admits a waiting request: `watermark` of its pool of `num_blocks`, the
        null block counted (vLLM's int(watermark * num_blocks))."""
        return int(self.watermark * (num_blocks + 1))
