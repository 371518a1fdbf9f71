"""The schedulers an engine can run: the article's (nano-vllm style, scheduler/scheduler.py) and the vLLM twin
(scheduler/vllm_v1/). Both take a Config and offer the same interface to the engine."""

from dataclasses import replace

from scheduler.config import Config
from scheduler.scheduler import Scheduler
from scheduler.vllm_v1 import VllmScheduler

SCHEDULER_KINDS = ("article", "vllm")
_CLASSES = {"article": Scheduler, "vllm": VllmScheduler}


def make_scheduler(kind: str, config: Config):
    """A new scheduler of `kind` for `config`."""
    if kind not in _CLASSES:
        raise ValueError(f"scheduler={kind!r}: use one of {SCHEDULER_KINDS}")
    return _CLASSES[kind](config)


def ignored_settings(kind: str) -> tuple[str, ...]:
    """The Config fields the scheduler of `kind` does not read: changing one mid-run would branch into the same run."""
    return _CLASSES[kind].ignored_settings


def runner_config(kind: str, config: Config) -> Config:
    """The config a runner's KV cache is sized from: vLLM's block ids run up to num_kvcache_blocks (its block 0
    is the null block), so the twin's runner holds one block more."""
    return replace(config, num_kvcache_blocks=config.num_kvcache_blocks + 1) if kind == "vllm" else config
