"""The vLLM V0 twin: a scheduler that makes vLLM 0.10.2's V0 decisions (vllm/core/scheduler.py and its block space
manager), step for step and block for block, for the same engine; `make v0-check` compares it with V0's own
Scheduler. Its package: `scheduler.py` (V0's Scheduler), `sequence_group.py` (its SequenceGroup), `budget.py`
(SchedulingBudget, PartialPrefillMetadata), `block_manager.py` (the block space manager and its allocators),
`evictor.py` (the LRU evictor), `pool.py` (the pools' read-only views), `events.py` (its decisions as data),
`panels.py` (its step's phase and budget card and its watermark, in the generic panel shapes), `settings.py` (its
settings under V0's names). `SCHEDULER` is what scheduler/factory.py makes of it."""

from scheduler.vllm_v0.scheduler import CpuSwapSpaceError, SchedulerOutputs, VllmV0Scheduler
from scheduler.vllm_v0.sequence_group import SequenceGroup, V0Status
from scheduler.vllm_v0.settings import V0Config

SCHEDULER = VllmV0Scheduler

__all__ = ["SCHEDULER", "CpuSwapSpaceError", "SchedulerOutputs", "SequenceGroup", "V0Config", "V0Status",
           "VllmV0Scheduler"]
