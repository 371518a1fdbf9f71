"""The vLLM twin: a scheduler that makes vLLM V1's decisions (its Scheduler class, vLLM 0.32), step for step and
block for block, for the same engine; `make vllm-check` compares it with vLLM's own Scheduler."""

from scheduler.vllm_v1.kv_cache import NULL_BLOCK_ID, KVCache
from scheduler.vllm_v1.scheduler import IGNORED_SETTINGS, VllmScheduler

__all__ = ["IGNORED_SETTINGS", "NULL_BLOCK_ID", "KVCache", "VllmScheduler"]
