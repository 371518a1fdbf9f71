"""The article's scheduler (the InfraTech notebook's, in the style of nano-vllm): its scheduler, its block pool, its
own settings and the closest vLLM command to its runs. `SCHEDULER` is what scheduler/factory.py makes of it."""

from scheduler.article.scheduler import Scheduler

SCHEDULER = Scheduler

__all__ = ["SCHEDULER", "Scheduler"]
