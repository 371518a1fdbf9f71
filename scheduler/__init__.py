"""Pure-Python continuous-batching schedulers (no torch, no UI), each kind a package of its own: the article's
(scheduler/article/, in the style of nano-vllm), the vLLM V1 twin (scheduler/vllm_v1/), the SGLang twin
(scheduler/sglang/) and the vLLM V0 twin (scheduler/vllm_v0/), behind one contract (scheduler/contract.py), each
with its own settings (scheduler/settings.py) and made by kind in scheduler/factory.py, the one place naming them.
What this package exports is what every kind shares; a kind's own classes are imported from its package."""

from scheduler.block_pool_view import Block
from scheduler.config import Config, ConfigError
from scheduler.contract import KVPoolView, SchedulerInfo, SchedulerProtocol
from scheduler.events import Event
from scheduler.factory import SCHEDULER_KINDS, make_scheduler
from scheduler.interface import Batch, RequestRejected
from scheduler.sequence import SamplingParams, Sequence, SequenceStatus

__all__ = ["SCHEDULER_KINDS", "Batch", "Block", "Config", "ConfigError", "Event", "KVPoolView", "RequestRejected",
           "SamplingParams", "SchedulerInfo", "SchedulerProtocol", "Sequence", "SequenceStatus", "make_scheduler"]
