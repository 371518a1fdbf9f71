"""Charts over time, one point per recorded step: queue lengths and KV usage, batch size and batch tokens."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.run.frame import Frame
from i18n import text

LEGEND_BELOW = {"orientation": "h", "x": 0, "y": -0.28, "yanchor": "top"}
BATCH_KIND_COLORS = {"prefill": "#3E7CB1", "decode": "#81A4CD", "mixed": "#8E6CCF", "idle": "#CBD2D9"}


def _style(fig: go.Figure, title: str, current_step: int | None, height: int, lang: str):
    fig.update_layout(title={"text": title, "x": 0, "xanchor": "left"}, height=height, hovermode="x unified",
                      margin={"l": 10, "r": 10, "t": 40, "b": 10}, plot_bgcolor="white", legend=LEGEND_BELOW)
    fig.update_xaxes(title_text=text(lang, "chart.step"), showgrid=True, gridcolor="#EEF0F3")
    if current_step is not None:
        fig.add_vline(x=current_step, line={"color": "#1F2933", "width": 1.5, "dash": "dot"})


def queues_and_kv_figure(frames: Sequence[Frame], current_step: int | None = None, height: int = 300,
                         *, lang: str) -> go.Figure:
    steps = [f.step for f in frames]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Scatter(x=steps, y=[f.metrics.kv_usage * 100 for f in frames], name=text(lang, "chart.kv_in_use"),
                             fill="tozeroy", line={"color": "#F0B429", "shape": "hv"},
                             fillcolor="rgba(240,180,41,0.2)"),
                  secondary_y=True)
    for name, values, color in ((text(lang, "chart.waiting"), [f.metrics.num_waiting for f in frames], "#D64545"),
                                (text(lang, "chart.running"), [f.metrics.num_running for f in frames], "#2E91E5")):
        fig.add_trace(go.Scatter(x=steps, y=values, name=name, line={"color": color, "shape": "hv", "width": 2.5}))
    _style(fig, text(lang, "chart.queues_title"), current_step, height, lang)
    fig.update_yaxes(title_text=text(lang, "chart.requests"), rangemode="tozero", secondary_y=False)
    fig.update_yaxes(title_text=text(lang, "chart.kv_used"), range=[0, 105], tickmode="array",
                     tickvals=[0, 25, 50, 75, 100],
                     showgrid=False, secondary_y=True)
    return fig


def batch_figure(frames: Sequence[Frame], current_step: int | None = None, height: int = 300,
                 *, lang: str) -> go.Figure:
    """Requests per batch as bars coloured by batch kind; tokens per batch as a line on the right axis."""
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    for kind, color in BATCH_KIND_COLORS.items():
        of_kind = [f for f in frames if f.batch.kind == kind and f.step > 0]
        if of_kind:
            fig.add_trace(go.Bar(x=[f.step for f in of_kind], y=[len(f.batch.seq_ids) for f in of_kind],
                                 name=text(lang, "chart.kind_batch", kind=text(lang, f"batch.{kind}")),
                                 marker_color=color))
    fig.add_trace(go.Scatter(x=[f.step for f in frames], y=[f.batch.total_tokens for f in frames],
                             name=text(lang, "chart.tokens_in_batch"), line={"color": "#1F2933", "width": 2}),
                  secondary_y=True)
    _style(fig, text(lang, "chart.batch_title"), current_step, height, lang)
    fig.update_layout(barmode="stack", bargap=0.1)
    fig.update_yaxes(title_text=text(lang, "chart.requests"), rangemode="tozero", secondary_y=False)
    fig.update_yaxes(title_text=text(lang, "chart.tokens"), rangemode="tozero", tickmode="auto", nticks=5,
                     tickformat="d",
                     showgrid=False, secondary_y=True)
    return fig
