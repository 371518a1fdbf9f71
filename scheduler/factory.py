"""The schedulers an engine can run, by kind: the one place that names them. Each kind is a package of scheduler/
whose `SCHEDULER` is its class: it fits `SchedulerProtocol` and declares itself (`info`, scheduler/contract.py), its
own settings included (`info.settings`, scheduler/settings.py); everything outside scheduler/ reads those
declarations. Adding a scheduler: its package, one line in `PACKAGES` here, its words in the catalogues, and its
reference check (tools/refcheck/); docs/schedulers.md walks through it."""

from importlib import import_module

from scheduler.config import SHARED_SETTINGS, Config
from scheduler.contract import PanelKind, SchedulerInfo, SchedulerProtocol
from scheduler.settings import SettingSpec

# The kinds' packages, in the order the app offers them (the first decides what names no scheduler): one line each
PACKAGES = (
    "scheduler.article",
    "scheduler.vllm_v1",
    "scheduler.sglang",
    "scheduler.vllm_v0",
)


def _scheduler_of(package: str) -> type[SchedulerProtocol]:
    cls = import_module(package).SCHEDULER
    if not isinstance(getattr(cls, "info", None), SchedulerInfo):
        raise TypeError(f"{package}.SCHEDULER: {cls!r} declares no SchedulerInfo (its `info`)")
    return cls


SCHEDULERS: dict[str, type[SchedulerProtocol]] = {cls.info.kind: cls for cls in map(_scheduler_of, PACKAGES)}
SCHEDULER_KINDS = tuple(SCHEDULERS)
DEFAULT_KIND = SCHEDULER_KINDS[0]  # what a trace, a link or a scenario without one was decided by


# Kinds known by their id only, never listed with SCHEDULERS: a learner's kind the sandbox declared on the server
# (sandbox/kinds.py), whose traces open as any kind's, while no choice of kinds offers it
DECLARED: dict[str, type[SchedulerProtocol]] = {}


def is_kind(kind) -> bool:
    """Whether `kind` names a kind this process knows: listed (SCHEDULERS) or declared only (DECLARED)."""
    return kind in SCHEDULERS or kind in DECLARED


def scheduler_info(kind: str) -> SchedulerInfo:
    """The declaration of the scheduler of `kind`."""
    if not is_kind(kind):
        raise ValueError(f"scheduler={kind!r}: use one of {SCHEDULER_KINDS}")
    return (SCHEDULERS.get(kind) or DECLARED[kind]).info


def make_scheduler(kind: str, config: Config) -> SchedulerProtocol:
    """A new scheduler of `kind` for `config` (a declared kind's class refuses)."""
    return (SCHEDULERS.get(kind) or DECLARED[scheduler_info(kind).kind])(config)


def runner_pools(kind: str, config: Config) -> dict[str, int]:
    """The side pools a runner holds for `kind` under `config` (name -> blocks): those it declares (SidePool)."""
    return {pool.name: pool.units(config) for pool in scheduler_info(kind).side_pools}


def runner_config(kind: str, config: Config) -> Config:
    """The config a runner's KV cache is sized from (the reserved units of `kind`'s pool included)."""
    return scheduler_info(kind).runner_config(config)


PANEL_KINDS = {panel.id: panel for cls in SCHEDULERS.values() for panel in cls.info.panels}
# The message ids the kinds' words on the stage are said by (SchedulerInfo.words), which the player is sent
STAGE_WORDS = tuple(dict.fromkeys(key for cls in SCHEDULERS.values() for _, key in cls.info.words))


# The workload generators the kinds declare their own (`SchedulerInfo.workload`), by the kind's id
OWN_WORKLOADS = {kind: cls.info.workload for kind, cls in SCHEDULERS.items() if cls.info.workload}


def panel_kind(panel_id: str) -> PanelKind:
    """The panel of `panel_id` as a kind declares it; one no kind here declares is plain JSON data (read as it is)."""
    return PANEL_KINDS.get(panel_id) or PanelKind(panel_id)


def settings_of(kind: str) -> tuple[SettingSpec, ...]:
    """The settings a run of `kind` is made with, in the sidebar's order: the shared ones, then its own."""
    return (*SHARED_SETTINGS, *scheduler_info(kind).own_settings)


def _every_setting() -> dict[str, SettingSpec]:
    table: dict[str, SettingSpec] = {}
    for spec in (spec for kind in SCHEDULER_KINDS for spec in settings_of(kind)):
        if table.setdefault(spec.key, spec) is not spec and table[spec.key].owner is not spec.owner:
            raise TypeError(f"{spec.owner.__qualname__}.{spec.key}: {table[spec.key].owner.__qualname__} declares "
                            f"it already (a setting's key is one across kinds)")
    return table


# Every setting any kind declares, by key: what a trace, a link or a scenario file may name (each key once, so
# they stay flat), and the one table of their ranges.
SETTINGS = _every_setting()
CONFIG_BOUNDS = {key: spec.bounds for key, spec in SETTINGS.items() if spec.bounds is not None}
