"""The SGLang twin: SGLang 0.5.23's scheduler (radix tree over token slots, lpm / dfs-weight / fcfs / lof order,
PrefillAdder budgets with the new_token_ratio reserve, chunked prefill, retraction), pure Python."""

from scheduler.sglang.scheduler import NewTokenRatioTracker, ScheduleBatch, Scheduler, ServerArgs

__all__ = ["NewTokenRatioTracker", "ScheduleBatch", "Scheduler", "ServerArgs"]
