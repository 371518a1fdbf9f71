"""The SGLang twin: SGLang 0.5.23's scheduler (radix tree over token slots, lpm / dfs-weight / fcfs / lof order,
PrefillAdder budgets with the new_token_ratio reserve, chunked prefill, retraction), pure Python. `SCHEDULER` is what
scheduler/factory.py makes of it: the twin behind the scheduler contract (engine_adapter.py)."""

from scheduler.sglang.engine_adapter import SglangScheduler
from scheduler.sglang.scheduler import NewTokenRatioTracker, ScheduleBatch, Scheduler, ServerArgs

SCHEDULER = SglangScheduler

__all__ = ["SCHEDULER", "NewTokenRatioTracker", "ScheduleBatch", "Scheduler", "ServerArgs", "SglangScheduler"]
