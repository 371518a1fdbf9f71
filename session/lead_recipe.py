"""A lecturer's run as plain data, and back: how a lead reaches followers on another server process of a lecture
hall (session/classroom.py's `Recipes`). A run is a pure function of its recipe (engine/run/recipe.py), so a
process that has not computed the lecturer's run builds it from the recipe in the lead (found in its own run cache
when one of its sessions opened it already) and steps it to the lecturer's frame: at once on the fake model, on
the real model through this process's own model worker. Only the words shown about the run (title, narrative,
key frames: the scenario's) travel beside the recipe.
"""

from __future__ import annotations

import re
from dataclasses import asdict
from functools import lru_cache

from engine.inputs.scenario import SCENARIOS_DIR, Scenario, load_scenario
from engine.run.recipe import RunSpec
from session.lab import CUSTOM, CustomSetup, RunInputs
from session.run_cache import RunCache, shared_run_cache

SCENARIO_NAME = re.compile(r"[A-Za-z0-9_]{1,64}")


class LeadRecipes:
    """The recipes of this process's runs, and runs built from other processes' recipes, in its run cache (`cache`:
    the process's shared one by default)."""

    def __init__(self, cache: RunCache | None = None):
        self.cache = cache

    def of(self, run, inputs: RunInputs) -> dict:
        return {"spec": run.spec.to_dict(), "base": inputs.spec.to_dict(), "title": inputs.title,
                "narrative": inputs.narrative, "temperature": inputs.temperature, "scenario": inputs.scenario_name,
                "variant": inputs.variant, "custom": None if inputs.custom is None else asdict(inputs.custom)}

    def run(self, recipe: dict):
        """(the run, its inputs) of `recipe`, held by this process's cache; None for a recipe it cannot read."""
        try:
            inputs = self.inputs(recipe)
            spec = RunSpec.from_dict(recipe["spec"])
        except (KeyError, TypeError, ValueError, OSError):
            return None
        return self._cache().open_recipe(inputs, spec, self), inputs

    @staticmethod
    def inputs(recipe: dict) -> RunInputs:
        name = recipe["scenario"]
        key_frames = ()
        if name != CUSTOM:
            key_frames = tuple(k for k in _scenario(name).key_frames if k.variant == recipe["variant"])
        custom = recipe["custom"]
        return RunInputs(recipe["title"], recipe["narrative"], RunSpec.from_dict(recipe["base"]),
                         recipe["temperature"], key_frames, name, recipe["variant"],
                         None if custom is None else CustomSetup(**custom))

    def reach(self, run, frame: int):
        """Step a run built here to `frame` (where the lecturer's process has it), unless it ends before."""
        cache = self._cache()
        while len(run.engine.frames) <= min(frame, run.spec.max_steps) and not run.engine.is_finished and \
                not run.engine.stalled:
            cache.advance(run, len(run.engine.frames))

    def _cache(self) -> RunCache:
        return self.cache or shared_run_cache()


@lru_cache(maxsize=64)
def _scenario(name: str) -> Scenario:
    if not SCENARIO_NAME.fullmatch(name):
        raise ValueError(f"not a scenario's name: {name!r}")
    return load_scenario(SCENARIOS_DIR / f"{name}.toml")
