"""The schedulers an engine can run, by kind: the one place that names them. Each class fits `SchedulerProtocol`
and declares itself (`info`, scheduler/contract.py); everything outside scheduler/ reads those declarations.
Adding a scheduler: its package, one line here, and its reference check (tools/)."""

from scheduler.config import Config
from scheduler.contract import PanelKind, SchedulerInfo, SchedulerProtocol
from scheduler.scheduler import Scheduler
from scheduler.sglang.engine_adapter import SglangScheduler
from scheduler.vllm_v1 import VllmScheduler

SCHEDULERS: dict[str, type[SchedulerProtocol]] = {cls.info.kind: cls for cls in (Scheduler, VllmScheduler,
                                                                                 SglangScheduler)}
SCHEDULER_KINDS = tuple(SCHEDULERS)
DEFAULT_KIND = SCHEDULER_KINDS[0]  # what a trace, a link or a scenario without one was decided by


def scheduler_info(kind: str) -> SchedulerInfo:
    """The declaration of the scheduler of `kind`."""
    if kind not in SCHEDULERS:
        raise ValueError(f"scheduler={kind!r}: use one of {SCHEDULER_KINDS}")
    return SCHEDULERS[kind].info


def make_scheduler(kind: str, config: Config) -> SchedulerProtocol:
    """A new scheduler of `kind` for `config`."""
    return SCHEDULERS[scheduler_info(kind).kind](config)


def runner_pools(kind: str, config: Config) -> dict[str, int]:
    """The side pools a runner holds for `kind` under `config` (name -> blocks): those it declares (SidePool)."""
    return {pool.name: pool.units(config) for pool in scheduler_info(kind).side_pools}


def runner_config(kind: str, config: Config) -> Config:
    """The config a runner's KV cache is sized from (the reserved units of `kind`'s pool included)."""
    return scheduler_info(kind).runner_config(config)


PANEL_KINDS = {panel.id: panel for cls in SCHEDULERS.values() for panel in cls.info.panels}


def panel_kind(panel_id: str) -> PanelKind:
    """The panel of `panel_id` as a kind declares it; one no kind here declares is plain JSON data (read as it is)."""
    return PANEL_KINDS.get(panel_id) or PanelKind(panel_id)
