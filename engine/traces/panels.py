"""The version step of the scheduler's panels: traces before version 4 wrote a frame's two kinds of panel under keys
of their own, `output` (vLLM's SchedulerOutput) and `view` (a scheduler's view as plain data, its `kind` naming it:
SGLang's radix tree); version 4 writes every declared panel in one slot, `panels`, by its id (scheduler/contract.py
`PanelKind`). `panels_from_legacy` reads an older frame's into that slot; `panels_as_legacy` writes a frame's back
into the older keys, for digests pinned before the slot existed (tools/golden_runs.py). Version 5 adds panels of a
generic shape (scheduler/panel_shapes.py): `panels_before_shapes` drops what an older trace held under their ids."""

from __future__ import annotations

from scheduler.factory import panel_kind
from scheduler.output import OUTPUT_PANEL

LEGACY_OUTPUT, LEGACY_VIEW = "output", "view"  # the keys of a frame's panels before version 4


def panels_from_legacy(frame: dict) -> dict:
    """A version 1-3 frame's JSON data with its `output` and `view` moved into `panels` (a view under its `kind`, which
    the schema checked it has)."""
    output, view = frame.get(LEGACY_OUTPUT), frame.get(LEGACY_VIEW)
    if output is None and view is None:
        return frame
    moved = {key: value for key, value in frame.items() if key not in (LEGACY_OUTPUT, LEGACY_VIEW)}
    panels = {}
    if output is not None:
        panels[OUTPUT_PANEL.id] = output
    if view is not None:
        panels[view["kind"]] = view
    return {**moved, "panels": panels}


def panels_before_shapes(frame: dict) -> dict:
    """A version 1-4 frame's JSON data without the panels that now have a generic shape (scheduler/panel_shapes.py):
    what such a panel held then (V0's `v0_step`, before its card) was plain data no player drew."""
    panels = frame.get("panels") if isinstance(frame, dict) else None
    if not isinstance(panels, dict):
        return frame
    return {**frame, "panels": {key: data for key, data in panels.items() if panel_kind(key).shape is None}}


def panels_as_legacy(frame: dict) -> dict:
    """A frame's JSON data (`Frame.to_dict`) with its panels under the keys of a version 3 trace."""
    if "panels" not in frame:
        return frame
    legacy = {key: value for key, value in frame.items() if key != "panels"}
    for panel_id, data in frame["panels"].items():
        legacy[LEGACY_OUTPUT if panel_id == OUTPUT_PANEL.id else LEGACY_VIEW] = data
    return legacy
