"""The article's scheduler's own settings (scheduler/article/scheduler.py): the policy choices no system it mirrors has,
the lessons of the article. nano-vllm has no command line for them."""

from __future__ import annotations

from dataclasses import dataclass

from i18n import Message
from scheduler.settings import ConfigError, KindSettings, Sweep, setting

PREEMPTION_POLICIES = ("tail", "smart", "priority")


@dataclass(frozen=True)
class ArticleSettings(KindSettings):
    messages = "article.setting"
    sweeps = (Sweep("prefill-first vs decode-first", "prefill_first",
                    ((Message("compare.variant.prefill_first"), True),
                     (Message("compare.variant.decode_first"), False)), "article.sweep.prefill_first"),
              Sweep("tail vs smart preemption", "preemption_policy",
                    ((Message("compare.variant.tail"), "tail"), (Message("compare.variant.smart"), "smart")),
                    "article.sweep.preemption_policy"))

    # Prefill first: a step that can admit waiting requests prefills only them (nano-vllm's order); off, decodes first.
    prefill_first: bool = setting(True, choices=(True, False), always_written=True)
    mixed_batches: bool = setting(False, always_written=True)  # running requests first, waiting ones in the same step
    preemption_policy: str = setting("tail", choices=PREEMPTION_POLICIES, always_written=True)
    # The InfraTech notebook's bug, as a lesson: its Sequence.block_size stays 256 while its pool uses
    # kvcache_block_size, so every prefill (recomputes included) gets exactly one block (block_manager.py).
    notebook_block_bug: bool = setting(False, sidebar=False, always_written=True,
                                       real_model_fix="config.notebook_bug_model")  # a KV slot per token, or none
    # vLLM's rule: a block full of known (prompt) tokens enters the prefix cache when it is allocated, so a
    # request admitted later in the same step already shares it; off, a block enters once computed.
    cache_blocks_at_allocation: bool = setting(False, sidebar=False, always_written=True)

    def check(self, config):
        """The notebook's one-block-per-prefill rule exists only in its basic scheduler; allocation-time caching is a
        prefix-caching rule."""
        if self.notebook_block_bug:
            for name, value in (("enable_prefix_caching", config.enable_prefix_caching),
                                ("chunked_prefill", config.chunked_prefill), ("mixed_batches", self.mixed_batches),
                                ("num_speculative_tokens", config.num_speculative_tokens)):
                if value:
                    raise ConfigError("notebook_block_bug", True, "config.notebook_bug", name=name)
        if self.cache_blocks_at_allocation and not config.enable_prefix_caching:
            raise ConfigError("cache_blocks_at_allocation", True, "config.cache_at_allocation")
