"""The SGLang twin's own settings: SGLang's ServerArgs the article's scheduler has no counterpart for, under
`python -m sglang.launch_server`'s names and at the defaults the twin's ServerArgs declares (SGLang 0.5.23's; chunked
prefill off, where SGLang sizes its chunk from the GPU's memory)."""

from __future__ import annotations

from dataclasses import dataclass

from i18n import Message
from scheduler.settings import ConfigError, KindSettings, Sweep, setting
from scheduler.sglang.schedule_policy import SCHEDULE_POLICIES
from scheduler.sglang.scheduler import PRIORITY_SCHEDULE_POLICIES, RETRACTION_POLICIES, ServerArgs

VERSION = "0.5.23"  # the SGLang release the twin mirrors


@dataclass(frozen=True)
class SglangSettings(KindSettings):
    """The tokens of one prefill chunk (-1 or 0: no chunking), the input tokens of one prefill batch, the waiting
    queue's order (fcfs by default), the scale of the reserve kept for the running requests' future tokens
    (new_token_ratio starts at 0.7 x it); priority scheduling (fcfs and lof only): a request's `priority` orders the
    waiting queue, higher values first unless schedule_low_priority_values_first; a request the full batch cannot
    take preempts running ones whose priority is lower by more than the threshold (unless
    disable_priority_preemption); retraction_policy "priority" retracts the least important first ("length": the
    fewest output tokens first). Each field is the ServerArgs field of its name."""
    messages = "sglang.setting"
    sweeps = (Sweep("lpm vs dfs-weight vs fcfs vs lof (SGLang)", "schedule_policy",  # its waiting-queue orders
                    tuple((Message("compare.variant.schedule_policy", policy=p), p) for p in SCHEDULE_POLICIES),
                    "sglang.sweep.schedule_policy"),)

    chunked_prefill_size: int = setting(ServerArgs.chunked_prefill_size, bounds=(-1, 65536),
                                        flag="--chunked-prefill-size")
    max_prefill_tokens: int = setting(ServerArgs.max_prefill_tokens, bounds=(1, 65536), flag="--max-prefill-tokens")
    schedule_policy: str = setting(ServerArgs.schedule_policy, choices=SCHEDULE_POLICIES, flag="--schedule-policy")
    schedule_conservativeness: float = setting(ServerArgs.schedule_conservativeness, bounds=(0.0, 4.0), step=0.1,
                                               flag="--schedule-conservativeness")
    enable_priority_scheduling: bool = setting(ServerArgs.enable_priority_scheduling,
                                               flag="--enable-priority-scheduling")
    schedule_low_priority_values_first: bool = setting(ServerArgs.schedule_low_priority_values_first,
                                                       flag="--schedule-low-priority-values-first")
    priority_scheduling_preemption_threshold: int = setting(ServerArgs.priority_scheduling_preemption_threshold,
                                                            bounds=(0, 2_000_000),
                                                            flag="--priority-scheduling-preemption-threshold")
    disable_priority_preemption: bool = setting(ServerArgs.disable_priority_preemption,
                                                flag="--disable-priority-preemption")
    retraction_policy: str = setting(ServerArgs.retraction_policy, choices=RETRACTION_POLICIES,
                                     flag="--retraction-policy")

    def check(self, config):
        """SGLang's own ranges: chunked_prefill_size -1 or 0 (off) or at least a page (SGLang cuts a chunk to whole
        pages, and a chunk of none never prefills: the prompt would wait for good), max_prefill_tokens at least 1, a
        conservativeness that is not negative, priority scheduling under fcfs or lof only, a threshold not negative
        here, retraction_policy "priority" only under priority scheduling."""
        if self.chunked_prefill_size < -1 or 0 < self.chunked_prefill_size < config.kvcache_block_size:
            raise ConfigError("chunked_prefill_size", self.chunked_prefill_size, "config.chunked_prefill_size",
                              page=config.kvcache_block_size)
        if self.max_prefill_tokens < 1:
            raise ConfigError("max_prefill_tokens", self.max_prefill_tokens, "config.at_least_1")
        if self.schedule_conservativeness < 0:
            raise ConfigError("schedule_conservativeness", self.schedule_conservativeness, "config.not_negative")
        if self.enable_priority_scheduling and self.schedule_policy not in PRIORITY_SCHEDULE_POLICIES:
            raise ConfigError("enable_priority_scheduling", True, "config.priority_scheduling_policy",
                              policy=self.schedule_policy, choices=", ".join(PRIORITY_SCHEDULE_POLICIES))
        if self.priority_scheduling_preemption_threshold < 0:
            raise ConfigError("priority_scheduling_preemption_threshold", self.priority_scheduling_preemption_threshold,
                              "config.not_negative")
        if self.retraction_policy == "priority" and not self.enable_priority_scheduling:
            raise ConfigError("retraction_policy", self.retraction_policy, "config.retraction_priority")


def launch_notes(config) -> list[Message]:
    """Why the `launch_server` line reads as it does: the twin's decisions are SGLang's own, at its release."""
    return [Message("sglang.launch.twin", version=VERSION)]
