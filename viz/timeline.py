"""The per-request timeline drawn: each request's runs of phases (engine/analysis/timeline.py) as Gantt-like bars."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from engine.analysis.timeline import Segment, segments
from engine.run.frame import Frame
from i18n import text
from viz.charts import LEGEND_BELOW
from viz.colors import request_color

PHASE_COLORS = {"waiting": "#CBD2D9", "prefill": "#3E7CB1", "decode": "#3EBD93", "preempted": "#E12D39",
                "stalled": "#F0B429"}


def timeline_figure(frames: Sequence[Frame], current_step: int | None = None, row_px: int = 22,
                    *, lang: str) -> go.Figure:
    return segments_figure(segments(frames), current_step, row_px, lang=lang)


def segments_figure(runs: Sequence[Segment], current_step: int | None = None, row_px: int = 22,
                    *, lang: str) -> go.Figure:
    """The request timeline drawn from its runs of phases (`Segments`)."""
    ids = sorted({s.request_id for s in runs})
    fig = go.Figure()
    for phase, color in PHASE_COLORS.items():
        of_phase = [s for s in runs if s.phase == phase]
        if not of_phase:
            continue
        words = text(lang, f"phase.{phase}")
        fig.add_trace(go.Bar(
            base=[s.start - 0.5 for s in of_phase], x=[s.stop - s.start + 1 for s in of_phase],
            y=[s.request_id for s in of_phase], orientation="h", name=words, marker_color=color,
            customdata=[[s.start, s.stop] for s in of_phase],
            hovertemplate=text(lang, "chart.phase_hover", phase=words) + "<extra></extra>"))
    if current_step is not None:
        fig.add_vline(x=current_step, line={"color": "#1F2933", "width": 1.5, "dash": "dot"})
    fig.update_layout(title={"text": text(lang, "chart.timeline_title"), "x": 0, "xanchor": "left"}, barmode="overlay",
                      height=max(220, row_px * len(ids) + 150), margin={"l": 10, "r": 10, "t": 40, "b": 10},
                      plot_bgcolor="white", bargap=0.3, legend=LEGEND_BELOW)
    fig.update_xaxes(title_text=text(lang, "chart.step"), showgrid=True, gridcolor="#EEF0F3")
    fig.update_yaxes(autorange="reversed", tickvals=ids,
                     ticktext=[f"<span style='color:{request_color(i)}'><b>ID:{i}</b></span>" for i in ids])
    return fig
