"""Adaptive batch size over a run: the max_num_seqs limit and the step latency against the controller's band."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.run.adaptive import AdaptiveBatch, step_latencies
from engine.run.frame import Frame
from i18n import text
from viz.charts import _style

BAND_COLOR = "rgba(62,124,177,0.12)"


def adaptive_batch_figure(frames: Sequence[Frame], controller: AdaptiveBatch, wall: bool = False,
                          current_step: int | None = None, height: int = 300, *, lang: str) -> go.Figure:
    """Per step: the limit each step ran under and the requests it batched (left axis), and its latency in ms
    (right axis; simulated, or measured with `wall`) over the shaded band where the limit stays put."""
    latencies_ms = [s * 1000 for s in step_latencies(frames, wall)]
    frames = list(frames)[1:]
    steps = [f.step for f in frames]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Bar(x=steps, y=[len(f.batch.seq_ids) for f in frames], name=text(lang, "chart.requests_in_batch"),
                         marker_color="#CBD2D9"))
    fig.add_trace(go.Scatter(x=steps, y=[f.config.max_num_seqs for f in frames], name="max_num_seqs",
                             line={"color": "#2E91E5", "shape": "hv", "width": 2.5}))
    fig.add_trace(go.Scatter(x=steps, y=latencies_ms, name=text(lang, "chart.step_latency"), mode="lines+markers",
                             line={"color": "#D64545", "width": 1.5}, marker={"size": 4}), secondary_y=True)
    fig.add_hrect(y0=controller.low_s * 1000, y1=controller.high_s * 1000, fillcolor=BAND_COLOR, line_width=0,
                  layer="below", secondary_y=True)
    _style(fig, text(lang, "chart.adaptive_title"), current_step, height, lang)
    fig.update_layout(bargap=0.1)
    fig.update_yaxes(title_text=text(lang, "chart.requests"), rangemode="tozero", secondary_y=False)
    fig.update_yaxes(title_text=text(lang, "chart.latency"), rangemode="tozero", showgrid=False, secondary_y=True)
    return fig
