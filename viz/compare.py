"""Figures of a comparison (engine.analysis.compare): one colour per config, every chart over the same step axis."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.analysis.compare import ConfigRun, batch_limits, mean_step_ms, metric_values
from i18n import text
from viz.charts import LEGEND_BELOW
from viz.timeline import timeline_figure

# One per config, in the comparison's order: as many as a comparison holds (engine/run/recipe.py RUN_BOUNDS["variants"])
CONFIG_COLORS = ("#2E91E5", "#E15F99", "#1CA71C", "#B68100", "#7E57C2", "#00897B")
# The bars of the key-metrics figure: (panel, metric names from engine.analysis.compare.metric_values); a panel's
# title is compare.panel.<panel> in i18n/.
KEY_METRICS = (("throughput", ("throughput (tokens/step)",)),
               ("ttft", ("TTFT mean steps", "TTFT p50 steps", "TTFT p99 steps")),
               ("tpot", ("TPOT mean steps", "TPOT p50 steps", "TPOT p99 steps")),
               ("e2e", ("end-to-end latency mean steps", "end-to-end latency p99 steps")),
               ("preemptions", ("preemptions",)))


def config_color(index: int) -> str:
    return CONFIG_COLORS[index % len(CONFIG_COLORS)]


def step_range(runs: Sequence[ConfigRun]) -> list[float]:
    """The one step axis every chart of the comparison shares: from step 0 to the longest run's last step."""
    return [-0.5, max(run.run.num_steps for run in runs) + 0.5]


def _style(fig: go.Figure, title: str, runs: Sequence[ConfigRun], y_title: str, height: int,
           lang: str) -> go.Figure:
    fig.update_layout(title={"text": title, "x": 0, "xanchor": "left"}, height=height, hovermode="x unified",
                      margin={"l": 10, "r": 10, "t": 40, "b": 10}, plot_bgcolor="white", legend=LEGEND_BELOW)
    fig.update_xaxes(title_text=text(lang, "chart.step"), range=step_range(runs), showgrid=True, gridcolor="#EEF0F3")
    fig.update_yaxes(title_text=y_title, rangemode="tozero", showgrid=True, gridcolor="#EEF0F3")
    return fig


def kv_usage_figure(runs: Sequence[ConfigRun], height: int = 300, *, lang: str) -> go.Figure:
    fig = go.Figure()
    for i, run in enumerate(runs):
        fig.add_trace(go.Scatter(x=[f.step for f in run.frames], y=[f.metrics.kv_usage * 100 for f in run.frames],
                                 name=run.label, line={"color": config_color(i), "shape": "hv", "width": 2}))
    _style(fig, text(lang, "compare.chart.kv"), runs, text(lang, "compare.chart.kv_axis"), height, lang)
    fig.update_yaxes(range=[0, 105])
    return fig


def fragmentation_figure(runs: Sequence[ConfigRun], height: int = 300, *, lang: str) -> go.Figure:
    """Reserved KV slots holding no token, after each step: what larger blocks waste."""
    fig = go.Figure()
    for i, run in enumerate(runs):
        fig.add_trace(go.Scatter(x=list(range(1, len(run.fragmentation) + 1)),
                                 y=[share * 100 for share in run.fragmentation], name=run.label,
                                 line={"color": config_color(i), "shape": "hv", "width": 2}))
    _style(fig, text(lang, "compare.chart.fragmentation"), runs, text(lang, "compare.chart.fragmentation_axis"),
           height, lang)
    return fig


def clock_figure(runs: Sequence[ConfigRun], height: int = 300, *, lang: str) -> go.Figure:
    """The simulated clock at each step: the steeper line took longer per step (what overlapped scheduling
    shortens and an adaptive batch size steers), with the mean step time in the hover."""
    fig = go.Figure()
    for i, run in enumerate(runs):
        fig.add_trace(go.Scatter(x=[f.step for f in run.frames], y=[f.sim_time_s for f in run.frames],
                                 name=text(lang, "compare.chart.clock_trace", label=run.label,
                                           ms=f"{mean_step_ms(run):.1f}"),
                                 line={"color": config_color(i), "width": 2}))
    return _style(fig, text(lang, "compare.chart.clock"), runs, text(lang, "compare.chart.clock_axis"), height,
                  lang)


def batch_limits_figure(runs: Sequence[ConfigRun], height: int = 300, *, lang: str) -> go.Figure:
    """max_num_seqs each step ran under: flat for a fixed limit, moving with an adaptive controller."""
    fig = go.Figure()
    for i, run in enumerate(runs):
        fig.add_trace(go.Scatter(x=[f.step for f in run.frames[1:]], y=batch_limits(run), name=run.label,
                                 line={"color": config_color(i), "shape": "hv", "width": 2}))
    return _style(fig, text(lang, "compare.chart.limits"), runs, "max_num_seqs", height, lang)


def key_metrics_figure(runs: Sequence[ConfigRun], height: int = 320, *, lang: str) -> go.Figure:
    """Small multiples: one panel per key metric, one bar per config (per statistic where there are several);
    a metric that is zero in every config gets no panel (`zero_metrics` names them)."""
    zero = zero_metrics(runs, lang)
    panels = [(title, names) for title, names in panel_titles(lang) if title not in zero]
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=[title for title, _ in panels])
    values = [metric_values(run) for run in runs]
    for col, (_, names) in enumerate(panels, start=1):
        for i, run in enumerate(runs):
            fig.add_trace(go.Bar(x=[name.split()[-2] if len(names) > 1 else run.label for name in names],
                                 y=[values[i][name] for name in names], name=run.label, legendgroup=run.label,
                                 showlegend=col == 1, marker_color=config_color(i),
                                 hovertemplate=f"{run.label}: %{{y:.2f}}<extra></extra>"),
                          row=1, col=col)
    fig.update_layout(height=height, barmode="group", margin={"l": 10, "r": 10, "t": 50, "b": 10},
                      plot_bgcolor="white", legend=LEGEND_BELOW)
    fig.update_xaxes(showticklabels=True)
    fig.update_yaxes(rangemode="tozero", showgrid=True, gridcolor="#EEF0F3")
    return fig


def timelines_figure(runs: Sequence[ConfigRun], row_height: int = 300, *, lang: str) -> go.Figure:
    """Each config's per-request timeline (viz.timeline) stacked on one shared step axis, one legend for all."""
    fig = make_subplots(rows=len(runs), cols=1, shared_xaxes=True, vertical_spacing=0.06,
                        subplot_titles=[text(lang, "compare.chart.timeline", label=run.label) for run in runs])
    shown = set()
    for row, run in enumerate(runs, start=1):
        for trace in timeline_figure(run.frames, lang=lang).data:
            trace.update(legendgroup=trace.name, showlegend=trace.name not in shown)
            shown.add(trace.name)
            fig.add_trace(trace, row=row, col=1)
        fig.update_yaxes(autorange="reversed", title_text=text(lang, "compare.chart.request_id"), row=row, col=1)
    height = row_height * len(runs) + 150
    fig.update_layout(barmode="overlay", bargap=0.3, height=height, plot_bgcolor="white",
                      margin={"l": 10, "r": 10, "t": 40, "b": 70},
                      legend=LEGEND_BELOW | {"y": -55 / (height - 110)})  # below the step title, in pixels
    fig.update_xaxes(range=step_range(runs), showgrid=True, gridcolor="#EEF0F3")
    fig.update_xaxes(title_text=text(lang, "chart.step"), row=len(runs), col=1)
    return fig


def _flat(series: dict[str, list[float]]) -> dict[str, float] | None:
    """Each config's one value when no line moves, else None."""
    levels = {}
    for label, values in series.items():
        if len(set(values)) > 1:
            return None
        levels[label] = values[0] if values else 0.0
    return levels


def flat_sentence(what: str, series: dict[str, list[float]], fmt: Callable[[float], str],
                  lang: str) -> str | None:
    """One line that replaces a chart whose every line is flat (a flat or all-zero chart looks broken), or None
    when some line moves and the chart is worth drawing."""
    levels = _flat(series)
    if levels is None:
        return None
    if len(set(levels.values())) == 1:
        return text(lang, "compare.flat.same", what=what, value=fmt(next(iter(levels.values()))))
    return text(lang, "compare.flat.each", what=what, levels=text(lang, "list.sep").join(
        text(lang, "compare.flat.level", value=fmt(v), label=label) for label, v in levels.items()))


def flat_charts(runs: Sequence[ConfigRun], lang: str) -> dict[str, str | None]:
    """Chart name -> the sentence that replaces it when it would draw only flat lines (else None)."""
    def percent(v):
        return f"{v:.0%}"
    return {
        "kv_usage": flat_sentence(text(lang, "compare.flat.kv"),
                                  {r.label: [f.metrics.kv_usage for f in r.frames[1:]] for r in runs}, percent, lang),
        "fragmentation": flat_sentence(text(lang, "compare.flat.fragmentation"),
                                       {r.label: r.fragmentation for r in runs}, percent, lang),
        "batch_limits": flat_sentence(text(lang, "compare.flat.limits"), {r.label: batch_limits(r) for r in runs},
                                      lambda v: f"{v:g}", lang),
    }


def panel_titles(lang: str) -> list[tuple[str, tuple[str, ...]]]:
    """KEY_METRICS with each panel's title in `lang`."""
    return [(text(lang, f"compare.panel.{panel}"), names) for panel, names in KEY_METRICS]


def zero_metrics(runs: Sequence[ConfigRun], lang: str) -> list[str]:
    """Key-metric panels that would hold only zero bars (not drawn; the page names them)."""
    values = [metric_values(run) for run in runs]
    return [title for title, names in panel_titles(lang) if all(not v[name] for v in values for name in names)]
