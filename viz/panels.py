"""The scheduler's own panels as the stage player's renderers draw them: for each panel id a kind may declare
(scheduler/contract.py `PanelKind`), what its renderer is sent of a frame, built from the panel the scheduler recorded
(`Frame.panels`) and the frame. The player draws each through the one renderer registered under the same id
(player/panels.js); a panel with no builder here is sent as the scheduler recorded it (plain JSON data)."""

from __future__ import annotations

from collections.abc import Callable

from engine.run.frame import Frame
from scheduler.output import OUTPUT_PANEL
from viz.sched_view import RADIX_TREE, sched_view
from viz.scheduler_output_view import scheduler_output_view

PanelBuilder = Callable[[Frame, "Frame | None", str], object]
BUILDERS: dict[str, PanelBuilder] = {OUTPUT_PANEL.id: scheduler_output_view, RADIX_TREE: sched_view}


def panel_views(frame: Frame, before: Frame | None, lang: str) -> list[list]:
    """[panel id, what its renderer draws] of each panel the frame's scheduler recorded, in the order it declares
    them; [] (a sparse scalar left out) for a frame without any."""
    return [[panel_id, BUILDERS[panel_id](frame, before, lang) if panel_id in BUILDERS else panel]
            for panel_id, panel in frame.panels.items()]
