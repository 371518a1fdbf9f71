"""The running and waiting queues, drawn the article's way: one row of token boxes per request.

A row is coloured by request id in three shades: tokens whose K/V was cached before this step, tokens
computed in this step (full colour, outlined), and tokens with no K/V yet (a prompt still to prefill, the
token just sampled, or everything after a preemption). Long rows keep their ends and this step's tokens;
long queues keep their head and count the rest. A bar on the right shows output so far against max_tokens.
"""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.frame import Frame, RequestView
from viz.colors import GAP_COLOR, TEXT_DARK, Categories, blend, request_color
from viz.condense import GAP, condense_queue, condense_row
from viz.sizing import LAPTOP, Sizing
from viz.tokens import token_hover, token_label

SHADES = {"cached": 0.45, "now": 0.0, "pending": 0.82}  # how far each state is blended toward white
MIN_COLUMNS = 20
EMPTY_HEIGHT = 80  # px of a queue with nobody in it
STATE_WORDS = {"cached": "K/V cached before this step", "now": "computed this step", "pending": "no K/V yet"}


def request_label(request: RequestView) -> str:
    return f"ID:{request.id} (L:{request.num_tokens})"


def scheduled_tokens(frame: Frame) -> dict[int, int]:
    """Request id -> tokens computed for it in this frame's step."""
    return dict(zip(frame.batch.seq_ids, frame.batch.num_tokens, strict=True))


def token_state(request: RequestView, index: int, num_scheduled: int) -> str:
    if index >= request.num_computed_tokens:
        return "pending"
    return "now" if index >= request.num_computed_tokens - num_scheduled else "cached"


def queue_figure(frame: Frame, which: str, sizing: Sizing = LAPTOP) -> go.Figure:
    """`which` is "running" or "waiting". layout.meta lists the drawn ids, so tests and the browser can read them."""
    ids = frame.running if which == "running" else frame.waiting
    width = min(sizing.max_boxes, frame.config.max_model_len)  # rows never outgrow max_model_len
    rows = condense_queue(ids, sizing.max_rows)
    scheduled = scheduled_tokens(frame)
    categories = Categories()
    z, text, hover, outlines = [], [], [], []
    for row, rid in enumerate(rows.shown):
        request = frame.requests[rid]
        n_now = scheduled.get(rid, 0)
        focus = range(request.num_computed_tokens - n_now, request.num_computed_tokens)
        cells = condense_row(request.num_tokens, width, focus)
        z_row, text_row, hover_row, now_columns = [], [], [], []
        for col, index in enumerate(cells.shown):
            if index is GAP:
                z_row.append(categories.z(GAP_COLOR))
                text_row.append("…")
                hover_row.append(f"request {rid}: {cells.hidden} tokens not drawn")
                continue
            state = token_state(request, index, n_now)
            if state == "now":
                now_columns.append(col)
            z_row.append(categories.z(blend(request_color(rid), amount=SHADES[state])))
            text_row.append(token_label(request, index, sizing.piece_chars))
            hover_row.append(f"request {rid} · {token_hover(request, index)} · {STATE_WORDS[state]}")
        pad = width - len(z_row)
        z.append(z_row + [None] * pad)
        text.append(text_row + [""] * pad)
        hover.append(hover_row + [""] * pad)
        if now_columns:
            outlines.append((row, min(now_columns), max(now_columns)))

    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, column_widths=[0.88, 0.12], horizontal_spacing=0.015)
    if rows.shown:
        fig.add_trace(go.Heatmap(z=z, text=text, hovertext=hover, texttemplate="%{text}", xgap=2, ygap=4,
                                 hovertemplate="%{hovertext}<extra></extra>",
                                 textfont={"size": max(8, sizing.font_size - 3)},
                                 **categories.heatmap_args()), row=1, col=1)
        _add_progress(fig, [frame.requests[rid] for rid in rows.shown], sizing)
    for row, first, last in outlines:
        fig.add_shape(type="rect", x0=first - 0.5, x1=last + 0.5, y0=row - 0.5, y1=row + 0.5,
                      line={"color": TEXT_DARK, "width": 2.5}, row=1, col=1)
    _layout(fig, frame, which, rows, sizing, width)
    return fig


def _add_progress(fig: go.Figure, requests: list[RequestView], sizing: Sizing):
    y = list(range(len(requests)))
    fig.add_trace(go.Bar(
        x=[min(1.0, r.num_output_tokens / r.max_tokens) for r in requests], y=y, orientation="h",
        marker_color=[request_color(r.id) for r in requests], showlegend=False, hoverinfo="skip"), row=1, col=2)
    fig.add_trace(go.Bar(  # the track, drawn over the bar with a clear fill so its label is never squeezed
        x=[1.0] * len(requests), y=y, orientation="h", marker={"color": "rgba(0,0,0,0)",
                                                              "line": {"color": "#9AA5B1", "width": 1}},
        text=[f"{r.num_output_tokens}/{r.max_tokens}" for r in requests], textposition="inside",
        insidetextanchor="end", textfont={"size": max(8, sizing.font_size - 2), "color": TEXT_DARK},
        showlegend=False, hovertemplate="%{text} tokens generated of max_tokens<extra></extra>"), row=1, col=2)


def _layout(fig: go.Figure, frame: Frame, which: str, rows, sizing: Sizing, width: int):
    n = max(1, len(rows.shown))
    title = f"{which.capitalize()} queue · {len(rows.shown) + rows.hidden} request(s)"
    fig.update_layout(
        title={"text": title, "font": {"size": sizing.font_size + 3}, "x": 0, "xanchor": "left"},
        height=(sizing.row_px * n + 70 if rows.shown else EMPTY_HEIGHT) + (24 if rows.hidden else 0),
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        plot_bgcolor="white", paper_bgcolor="white", barmode="overlay", bargap=0.25,
        font={"size": sizing.font_size}, dragmode=False,
        meta={"queue": which, "ids": list(rows.shown), "hidden_requests": rows.hidden, "step": frame.step})
    # at least MIN_COLUMNS wide, so that short rows keep box-shaped boxes
    fig.update_xaxes(visible=False, range=[-0.5, max(width, MIN_COLUMNS) - 0.5], fixedrange=True, row=1, col=1)
    fig.update_xaxes(visible=False, range=[0, 1], fixedrange=True, row=1, col=2)
    fig.update_yaxes(autorange=False, range=[n - 0.5, -0.5], fixedrange=True, showgrid=False, zeroline=False,
                     tickfont={"size": sizing.font_size}, tickvals=list(range(len(rows.shown))),
                     ticktext=[f"<span style='color:{request_color(rid)}'><b>{request_label(frame.requests[rid])}"
                               f"</b></span>" for rid in rows.shown], row=1, col=1)
    if rows.hidden:
        fig.add_annotation(text=f"+{rows.hidden} more requests", xref="paper", yref="paper", x=0, y=0,
                           yshift=-18, showarrow=False, xanchor="left", font={"size": sizing.font_size})
    if not rows.shown:
        fig.add_annotation(text="empty", xref="paper", yref="paper", x=0.45, y=0.5, showarrow=False,
                           font={"size": sizing.font_size + 2, "color": "#7B8794"})
