"""The command line of the system the SGLang twin mirrors: the engine's `Config` read as SGLang's `ServerArgs`
(which the adapter builds the twin with), and `python -m sglang.launch_server` with a run's settings, as the kind
declares it (`SchedulerInfo.launch`, which the exports read)."""

from __future__ import annotations

from dataclasses import asdict

from scheduler.config import Config
from scheduler.sglang.scheduler import ServerArgs
from scheduler.sglang.settings import SglangSettings


def server_args(config: Config) -> ServerArgs:
    """The `python -m sglang.launch_server` arguments `config` stands for: the shared settings under SGLang's names,
    and its own (scheduler/sglang/settings.py), each a ServerArgs field of its name."""
    return ServerArgs(max_total_tokens=config.num_kvcache_blocks * config.kvcache_block_size,
                      page_size=config.kvcache_block_size, max_running_requests=config.max_num_seqs,
                      context_length=config.max_model_len, eos=config.eos, **asdict(config.of(SglangSettings)))


def launch_server_args(config: Config, model: str, overlap: bool) -> list[str]:
    """`python -m sglang.launch_server` for `config`'s run, one list item per shell word: every ServerArgs the twin
    reads (SGLang's own flags), the radix cache on (its default), overlap scheduling as the run had it; priority
    scheduling's flags when it is on (a switch only when set)."""
    args = server_args(config)
    words = ["python", "-m", "sglang.launch_server", "--model-path", model]
    values = ["max_running_requests", "max_total_tokens", "page_size", "chunked_prefill_size", "max_prefill_tokens",
              "schedule_policy", "schedule_conservativeness", "context_length"]
    switches = ["disable_overlap_schedule"] if not overlap else []
    if args.enable_priority_scheduling:
        values += ["priority_scheduling_preemption_threshold", "retraction_policy"]
        switches += [name for name in ("enable_priority_scheduling", "schedule_low_priority_values_first",
                                       "disable_priority_preemption") if getattr(args, name)]
    for name in values:
        value = getattr(args, name)
        words += [_flag(name), f"{value:g}" if isinstance(value, float) else str(value)]
    return words + [_flag(name) for name in switches]


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")
