"""The vLLM twin: a scheduler that makes vLLM V1's decisions (its Scheduler class, vLLM 0.32), step for step and
block for block, for the same engine; `make vllm-check` compares it with vLLM's own Scheduler. Its package:
`scheduler.py` (vLLM's Scheduler), `request.py` (vLLM's Request), `kv_cache.py` (its block pool and KV cache
manager). `SCHEDULER` is what scheduler/factory.py makes of it."""

from scheduler.vllm_v1.kv_cache import NULL_BLOCK_ID, KVCache
from scheduler.vllm_v1.request import Request
from scheduler.vllm_v1.scheduler import VllmScheduler

SCHEDULER = VllmScheduler

__all__ = ["SCHEDULER", "NULL_BLOCK_ID", "KVCache", "Request", "VllmScheduler"]
