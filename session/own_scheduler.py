"""The learner's current scheduler as the session keeps it: the source written on the Workbench page and the class
in it that is the scheduler. Plain data, no Streamlit: the Workbench writes it (ui/workbench_state.py), the policy
lab reads it through `ui.workbench_state.own_scheduler()` to run it in the sandbox beside the built-in kinds. It is
never executed here: only `sandbox.run_learner` runs it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OwnScheduler:
    source: str  # the whole file, as in the editor
    class_name: str  # the class in it that is the scheduler, e.g. "SmartVictim"
    starter: str | None = None  # the starter it began from (starters.STARTERS' id), None for an uploaded file
