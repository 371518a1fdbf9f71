"""A self-contained HTML animation of runs: the KV block pool and the two queues, step by step, with a play
button and a slider (Plotly frames, plotly.js embedded), that opens offline without the app.

Every animation frame has the same three traces (one marker row per queue, one marker grid for the pool,
coloured as in the app: viz.colors, viz.block_grid), so Plotly can animate between them.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.frame import Frame
from viz.block_grid import block_color, grid_shape
from viz.colors import request_color
from viz.sizing import LAPTOP

MAX_FRAMES = 300  # longer runs are sampled evenly (the last step always included)
MAX_QUEUE = 40  # queue entries drawn per queue; the rest are counted in the title
QUEUES = ("running", "waiting")
FRAME_MS = 250


def sampled(frames: Sequence[Frame], max_frames: int = MAX_FRAMES) -> list[Frame]:
    every = max(1, -(-len(frames) // max_frames))
    picked = list(frames[::every])
    return picked if picked[-1] is frames[-1] else [*picked, frames[-1]]


def _pool_trace(frame: Frame) -> go.Scatter:
    """The pool as square markers on a grid (SVG, so it animates; a heatmap image flickers away mid-play)."""
    rows, columns = grid_shape(len(frame.blocks), LAPTOP)
    return go.Scatter(x=[b.id % columns for b in frame.blocks], y=[b.id // columns for b in frame.blocks],
                      mode="markers", showlegend=False, hoverinfo="skip", xaxis="x2", yaxis="y2",
                      marker={"symbol": "square", "size": max(4, min(26, 900 // columns - 4, 380 // rows - 3)),
                              "color": [block_color(frame, b) for b in frame.blocks]})


def _queue_trace(frame: Frame, queue: str) -> go.Scatter:
    ids = getattr(frame, queue)[:MAX_QUEUE]
    return go.Scatter(x=list(range(len(ids))), y=[queue] * len(ids), mode="markers+text", name=queue,
                      text=[str(i) for i in ids], textfont={"color": "white", "size": 10}, showlegend=False,
                      marker={"symbol": "square", "size": 22, "color": [request_color(i) for i in ids]},
                      hoverinfo="skip", xaxis="x", yaxis="y")


def _title(label: str, frame: Frame) -> str:
    counts = ", ".join(f"{len(getattr(frame, q))} {q}" for q in QUEUES)
    return (f"{html.escape(label)} · step {frame.step} · {frame.batch.kind} batch of {len(frame.batch.seq_ids)}"
            f" · {counts} · KV {frame.metrics.kv_usage:.0%}")


def animation_figure(frames: Sequence[Frame], label: str = "run", max_frames: int = MAX_FRAMES) -> go.Figure:
    shown = sampled(frames, max_frames)
    fig = make_subplots(rows=2, cols=1, row_heights=[0.3, 0.7], vertical_spacing=0.08,
                        subplot_titles=["queues (request ids, head first)", "KV block pool (colour = owner)"])

    def traces(frame):
        return [*(_queue_trace(frame, q) for q in QUEUES), _pool_trace(frame)]

    fig.add_traces(traces(shown[0]))  # each trace names its own axes, in the frames too
    fig.frames = [go.Frame(name=str(f.step), data=traces(f), traces=[0, 1, 2],
                           layout={"title": {"text": _title(label, f)}}) for f in shown]
    play = {"frame": {"duration": FRAME_MS, "redraw": True}, "fromcurrent": True, "transition": {"duration": 0}}
    pause = {"frame": {"duration": 0, "redraw": False}, "mode": "immediate", "transition": {"duration": 0}}
    fig.update_layout(
        title={"text": _title(label, shown[0]), "x": 0, "xanchor": "left"}, height=620, plot_bgcolor="white",
        margin={"l": 70, "r": 20, "t": 70, "b": 20},
        updatemenus=[{"type": "buttons", "direction": "left", "x": 0, "y": -0.02, "xanchor": "left",
                      "yanchor": "top", "showactive": False,
                      "buttons": [{"label": "▶ play", "method": "animate", "args": [None, play]},
                                  {"label": "❚❚ pause", "method": "animate", "args": [[None], pause]}]}],
        sliders=[{"x": 0.18, "len": 0.82, "y": -0.02, "yanchor": "top", "currentvalue": {"prefix": "step "},
                  "steps": [{"label": str(f.step), "method": "animate",
                             "args": [[str(f.step)], {**pause, "frame": {"duration": 0, "redraw": True}}]}
                            for f in shown]}])
    fig.update_xaxes(visible=False)
    fig.update_xaxes(range=[-0.6, MAX_QUEUE - 0.4], row=1, col=1)
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=list(QUEUES), range=[-0.6, 1.6],
                     row=1, col=1)
    fig.update_yaxes(visible=False, autorange="reversed", row=2, col=1)
    return fig


def animation_html(runs: Sequence[tuple[str, Sequence[Frame]]], title: str = "schedlab run") -> str:
    """One offline HTML page with an animation per (label, frames): plotly.js is embedded once, in the first."""
    parts = [animation_figure(frames, label).to_html(full_html=False, include_plotlyjs=i == 0, auto_play=False)
             for i, (label, frames) in enumerate(runs)]
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head>"
            f"<body style='font-family:sans-serif'><h2>{html.escape(title)}</h2>{''.join(parts)}</body></html>")


# -- images for slides: rendered by Plotly itself in headless Chromium (no Kaleido) --------------------------

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
GIF_FRAMES = 80  # each costs a render in the browser (~0.3 s)
_IMAGES_JS = """async ([width, height, animate]) => {
  const gd = document.querySelector('.js-plotly-plot');
  const shot = () => Plotly.toImage(gd, {format: 'png', width: width, height: height});
  if (!animate) return [await shot()];
  const images = [];
  for (const frame of gd._transitionData._frames) {
    await Plotly.animate(gd, [frame.name], {mode: 'immediate', frame: {duration: 0, redraw: true},
                                            transition: {duration: 0}});
    images.push(await shot());
  }
  return images;
}"""


def _render_pngs(fig: go.Figure, width: int, height: int, animate: bool) -> list[bytes]:
    """PNG bytes of `fig` (or of each of its animation frames), drawn by plotly.js in headless Chromium."""
    import base64
    import tempfile
    from pathlib import Path

    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).is_file():  # said as the page shows it (OSError), not a traceback
        raise OSError(f"no browser to draw it: Chromium is not installed at {CHROMIUM} (apt install chromium)")
    with tempfile.TemporaryDirectory() as folder:
        page_path = Path(folder) / "figure.html"
        page_path.write_text(fig.to_html(include_plotlyjs=True, full_html=True, auto_play=False))
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    page = browser.new_page()
                    page.goto(page_path.as_uri())
                    page.wait_for_selector(".js-plotly-plot .main-svg")
                    urls = page.evaluate(_IMAGES_JS, [width, height, animate])
                finally:
                    browser.close()
        except PlaywrightError as e:
            raise RuntimeError(f"the browser at {CHROMIUM} could not draw it ({str(e).splitlines()[0]})") from None
    return [base64.b64decode(url.split(",", 1)[1]) for url in urls]


def figure_png(fig: go.Figure, width: int = 1200, height: int = 600) -> bytes:
    return _render_pngs(fig, width, height, animate=False)[0]


def run_gif(frames: Sequence[Frame], label: str = "run", width: int = 960, height: int = 540,
            max_frames: int = GIF_FRAMES, frame_ms: int = FRAME_MS) -> bytes:
    """An animated GIF of a run's queues and KV pool (the HTML animation's frames), looping."""
    import io

    from PIL import Image

    fig = animation_figure(frames, label, max_frames)
    fig.layout.updatemenus, fig.layout.sliders = (), ()  # a GIF plays by itself
    images = [Image.open(io.BytesIO(png)).convert("RGB") for png in _render_pngs(fig, width, height, animate=True)]
    out = io.BytesIO()
    images[0].save(out, format="GIF", save_all=True, append_images=images[1:], duration=frame_ms, loop=0)
    return out.getvalue()
