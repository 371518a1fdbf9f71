"""The scheduler's own panels as the stage player's renderers draw them: for each panel id a kind may declare
(scheduler/contract.py `PanelKind`), what its renderer is sent of a frame, built from the panel the scheduler recorded
(`Frame.panels`) and the frame. The player draws each through the one renderer registered under the same id
(player/panels.js), or, for a panel of a generic shape (scheduler/panel_shapes.py), through that shape's
(player/panel_shapes.js, player/pool.js); a panel with neither a builder here nor a shape is sent as the scheduler
recorded it (plain JSON data).

A generic shape's words are said here in the reader's language, filled with the numbers the scheduler recorded;
nothing is worked out again."""

from __future__ import annotations

from collections.abc import Callable

from engine.run.frame import Frame
from i18n import text
from scheduler.factory import panel_kind
from scheduler.output import OUTPUT_PANEL
from scheduler.panel_shapes import Card, Mark, PoolMarks, Said
from viz.sched_view import RADIX_TREE, sched_view
from viz.scheduler_output_view import scheduler_output_view

PanelBuilder = Callable[[Frame, "Frame | None", str], object]
BUILDERS: dict[str, PanelBuilder] = {OUTPUT_PANEL.id: scheduler_output_view, RADIX_TREE: sched_view}


def _said(lang: str, said: Said) -> str:
    return text(lang, said.key, **said.values)


def _marks(lang: str, marks: tuple[Mark, ...]) -> list[list]:
    return [[mark.at, _said(lang, mark.said)] for mark in marks]


def card_view(card: Card, lang: str) -> dict:
    """A card as player/panel_shapes.js draws it: its title, its lines, and per meter [label, used, limit, marks],
    each mark [at, label]."""
    return {"shape": Card.SHAPE, "title": _said(lang, card.title), "lines": [_said(lang, line) for line in card.lines],
            "meters": [[_said(lang, m.said), m.used, m.limit, _marks(lang, m.marks)] for m in card.meters]}


def pool_marks_view(marks: PoolMarks, lang: str) -> dict:
    """Marks on a pool as player/pool.js draws them: the pool's name and per mark [at, label]."""
    return {"shape": PoolMarks.SHAPE, "pool": marks.pool, "marks": _marks(lang, marks.marks)}


SHAPE_VIEWS: dict[str, Callable[..., dict]] = {Card.SHAPE: card_view, PoolMarks.SHAPE: pool_marks_view}


def _view(panel_id: str, panel, frame: Frame, before: Frame | None, lang: str):
    if panel_id in BUILDERS:
        return BUILDERS[panel_id](frame, before, lang)
    shape = panel_kind(panel_id).shape
    return SHAPE_VIEWS[shape.SHAPE](panel, lang) if shape is not None else panel


def panel_views(frame: Frame, before: Frame | None, lang: str) -> list[list]:
    """[panel id, what its renderer draws] of each panel the frame's scheduler recorded, in the order it declares
    them; [] (a sparse scalar left out) for a frame without any."""
    return [[panel_id, _view(panel_id, panel, frame, before, lang)] for panel_id, panel in frame.panels.items()]
