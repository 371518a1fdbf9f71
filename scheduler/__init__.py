"""A pure-Python continuous-batching scheduler in the style of nano-vllm (no torch, no UI)."""

from scheduler.block_manager import Block, BlockManager
from scheduler.config import Config, ConfigError
from scheduler.events import Event
from scheduler.factory import SCHEDULER_KINDS, ignored_settings, make_scheduler
from scheduler.interface import Batch, RequestRejected
from scheduler.scheduler import Scheduler
from scheduler.sequence import SamplingParams, Sequence, SequenceStatus

__all__ = ["SCHEDULER_KINDS", "Batch", "Block", "BlockManager", "Config", "ConfigError", "Event", "RequestRejected",
           "SamplingParams", "Scheduler", "Sequence", "SequenceStatus", "ignored_settings", "make_scheduler"]
