"""Timeline of scheduling work against model work, step by step (engine.overlap's StepTiming records)."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from engine.overlap import StepTiming
from viz.charts import LEGEND_BELOW

ROWS = (  # (legend name, row, StepTiming field, colour)
    ("schedule", "scheduler", "schedule", "#3E7CB1"),
    ("postprocess", "scheduler", "postprocess", "#81A4CD"),
    ("model", "model", "model", "#F0B429"),
)


def overlap_timeline_figure(timings: Sequence[StepTiming], title: str = "Scheduling and model work per step",
                            height: int = 220) -> go.Figure:
    """One bar per step and kind of work on a shared time axis (ms): synchronous runs alternate between the
    rows, overlapped runs show the next step's schedule bar under the current step's model bar."""
    fig = go.Figure()
    for name, row, attr, color in ROWS:
        intervals = [getattr(t, attr) for t in timings]
        fig.add_trace(go.Bar(
            name=name, orientation="h", y=[row] * len(timings), base=[start * 1000 for start, _ in intervals],
            x=[(end - start) * 1000 for start, end in intervals], marker_color=color,
            customdata=[t.step for t in timings], hovertemplate="step %{customdata}: %{x:.2f} ms<extra></extra>"))
    fig.update_layout(title={"text": title, "x": 0, "xanchor": "left"}, height=height, barmode="overlay",
                      margin={"l": 10, "r": 10, "t": 40, "b": 10}, plot_bgcolor="white", legend=LEGEND_BELOW)
    fig.update_xaxes(title_text="time since the run began (ms)", showgrid=True, gridcolor="#EEF0F3")
    fig.update_yaxes(categoryorder="array", categoryarray=["model", "scheduler"])
    return fig
