"""The article's scheduler (the InfraTech notebook's, in the style of nano-vllm): its scheduler, its block pool, its
own settings and the closest vLLM command to its runs."""

from scheduler.article.scheduler import Scheduler

__all__ = ["Scheduler"]
