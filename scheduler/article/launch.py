"""The article's scheduler's export: nano-vllm has no server of its own, so a run's closest system is vLLM. The
`vllm serve` line of its shared settings, and where the article's own choices (scheduler/article/settings.py) decide
otherwise than vLLM would."""

from __future__ import annotations

from i18n import Message
from scheduler.article.settings import ArticleSettings
from scheduler.config import Config
from scheduler.contract import Launch
from scheduler.vllm_v1.launch import model_notes, pool_notes, vllm_command


def policy_notes(config: Config) -> list[Message]:
    """Where the article's scheduler under `config` decides otherwise than vLLM."""
    own, notes = config.of(ArticleSettings), []
    if not own.mixed_batches:
        notes.append(Message("vllm.batches", order=Message("vllm.order.prefill_first" if own.prefill_first
                                                           else "vllm.order.decode_first")))
    elif own.prefill_first:
        notes.append(Message("vllm.prefill_first_mixed"))
    if own.preemption_policy == "smart":
        notes.append(Message("vllm.smart"))
    elif own.preemption_policy == "priority" and config.queue_policy != "priority":
        notes.append(Message("vllm.priority_preemption"))
    elif own.preemption_policy == "tail" and config.queue_policy == "priority":
        notes.append(Message("vllm.tail_with_priority"))
    if config.queue_policy == "priority":
        notes.append(Message("vllm.priority_queue"))
    return notes


def closest_notes(config: Config) -> list[Message]:
    return [*pool_notes(config), *policy_notes(config), Message("vllm.not_the_twin"), *model_notes(config)]


closest_vllm = Launch("vLLM", vllm_command, closest_notes)
