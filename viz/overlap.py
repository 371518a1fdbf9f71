"""Timeline of scheduling work against model work, step by step (engine.run.overlap's StepTiming records, from
frames or from the standalone `run_loop()`)."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from engine.run.frame import Frame
from engine.run.overlap import StepTiming
from i18n import text
from viz.charts import LEGEND_BELOW

ROWS = (  # (StepTiming field, the row it is drawn in, colour); their words: chart.overlap_<field>, _row_<row>
    ("schedule", "scheduler", "#3E7CB1"),
    ("postprocess", "scheduler", "#81A4CD"),
    ("model", "model", "#F0B429"),
)
WINDOW = 12  # steps the app shows around the current one: a whole run's bars would be slivers


def frame_timings(frames: Sequence[Frame], current_step: int | None = None, window: int | None = None
                  ) -> list[StepTiming]:
    """The timings of the frames up to `current_step` (all by default), the last `window` of them."""
    timings = [f.timing for f in frames if f.timing is not None and (current_step is None or f.step <= current_step)]
    return timings[-window:] if window else timings


def overlap_timeline_figure(timings: Sequence[StepTiming], title: str = "Scheduling and model work per step",
                            height: int = 220, current_step: int | None = None, *, lang: str) -> go.Figure:
    """One bar per step and kind of work on a shared time axis (ms): synchronous runs alternate between the
    rows, overlapped runs show the next step's schedule bar under the current step's model bar. The bars of
    `current_step` are outlined."""
    fig = go.Figure()
    rows = {row: text(lang, f"chart.overlap_row_{row}") for row in ("scheduler", "model")}
    for attr, row, color in ROWS:
        intervals = [getattr(t, attr) for t in timings]
        fig.add_trace(go.Bar(
            name=text(lang, f"chart.overlap_{attr}"), orientation="h", y=[rows[row]] * len(timings),
            base=[start * 1000 for start, _ in intervals],
            x=[(end - start) * 1000 for start, end in intervals], marker_color=color,
            marker_line={"color": ["#1F2933" if t.step == current_step else color for t in timings], "width": 2},
            text=[str(t.step) for t in timings], textposition="inside", insidetextanchor="middle",
            customdata=[t.step for t in timings], hovertemplate=text(lang, "chart.overlap_hover") + "<extra></extra>"))
    fig.update_layout(title={"text": title, "x": 0, "xanchor": "left"}, height=height, barmode="overlay",
                      uniformtext={"minsize": 9, "mode": "hide"},  # no step number squeezed into a sliver
                      margin={"l": 10, "r": 10, "t": 40, "b": 10}, plot_bgcolor="white", legend=LEGEND_BELOW)
    fig.update_xaxes(title_text=text(lang, "chart.overlap_time"), showgrid=True, gridcolor="#EEF0F3")
    fig.update_yaxes(categoryorder="array", categoryarray=[rows["model"], rows["scheduler"]])
    return fig
