"""Pure-Python continuous-batching schedulers (no torch, no UI): the article's, in the style of nano-vllm, the vLLM
twin and the SGLang twin, behind one contract (scheduler/contract.py), each with its own settings
(scheduler/settings.py)."""

from scheduler.article.block_manager import BlockManager
from scheduler.article.scheduler import Scheduler
from scheduler.block_pool_view import Block
from scheduler.config import Config, ConfigError
from scheduler.contract import KVPoolView, SchedulerInfo, SchedulerProtocol
from scheduler.events import Event
from scheduler.factory import SCHEDULER_KINDS, make_scheduler
from scheduler.interface import Batch, RequestRejected
from scheduler.sequence import SamplingParams, Sequence, SequenceStatus

__all__ = ["SCHEDULER_KINDS", "Batch", "Block", "BlockManager", "Config", "ConfigError", "Event", "KVPoolView",
           "RequestRejected", "SamplingParams", "Scheduler", "SchedulerInfo", "SchedulerProtocol", "Sequence",
           "SequenceStatus", "make_scheduler"]
