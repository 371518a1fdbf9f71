"""The article's learning path in one place (the article ends: understand the basic scheduler, read vLLM's V0
scheduler, then V1's optimisations, then build something yourself): stops along the path, each a preset workload
run under every scheduler kind the factory holds, stepped side by side (the lockstep stages), with the steps where
their decisions part (engine/analysis/partings.py) and what each scheduler recorded there.

The kinds are read from `scheduler.factory.SCHEDULERS` when a stop is run, never listed here: a kind given a
factory line joins every stop by itself. What a kind says of itself on the tour (a line on it, the source lines of
its system that decide each parting) is its declaration's `tour` (scheduler/contract.py `TourInfo`).

    runs = run_stop(STOPS[0], load_scenario(SCENARIOS_DIR / f"{STOPS[0].preset}.toml"))
    partings([run.frames for run in runs])
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.analysis.compare import ConfigRun, Variant, compare
from engine.inputs.scenario import Scenario
from scheduler.factory import SCHEDULERS


@dataclass(frozen=True)
class Stop:
    """A stop on the path: its words are `tour.stop.<id>.title` and `.intro`; its workload (config, requests,
    seed) is the preset `preset`'s, the same for every scheduler."""
    id: str
    preset: str


STOPS = (
    Stop("basic", "tour_1_basic"),  # prefill first against running first: who joins a full batch
    Stop("memory", "tour_2_memory"),  # a pool too small once requests grow: preempt, or keep room for them
    Stop("prefix", "prefix_caching_same_step"),  # one shared prompt prefix: what each prefix cache finds
)


def tour_kinds() -> tuple[str, ...]:
    """Every scheduler kind the factory holds now, in its order."""
    return tuple(SCHEDULERS)


def run_stop(stop: Stop, scenario: Scenario) -> list[ConfigRun]:
    """The stop's workload under every kind of the factory, one run each, labelled by its kind (the page names
    them in the reader's language); on the fake model, as the policy lab runs."""
    if scenario.name != stop.preset:
        raise ValueError(f"stop {stop.id!r} runs preset {stop.preset!r}, not {scenario.name!r}")
    spec = scenario.spec_for()
    return compare([Variant(kind, spec.config, scheduler=kind) for kind in tour_kinds()], spec.workload,
                   seed=spec.seed, cost=spec.cost)
