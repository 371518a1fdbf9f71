"""The KV-cache pool as one heatmap (a cell per block, coloured by its owner) and each request's block table.

Free blocks are pale grey; free blocks whose content is still in the prefix cache (a later request with the
same prefix revives them) are amber; a block shared by several requests shows its ref count. A block holding
more tokens than a block has room for (only the notebook's block-size bug makes one) is ringed in red.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go

from engine.frame import BlockView, Frame
from viz.colors import CACHED_FREE_COLOR, FREE_COLOR, GAP_COLOR, TEXT_DARK, Categories, request_color
from viz.condense import GAP, condense_row
from viz.sizing import LAPTOP, Sizing
from viz.tokens import blocks_text

OVERFULL_COLOR = "#D62728"
MAX_GRID_PX = 560
MIN_TABLE_COLUMNS = 12


def block_color(frame: Frame, block: BlockView) -> str:
    if block.is_cached_free:
        return CACHED_FREE_COLOR
    owners = frame.block_owners(block.id)
    return request_color(owners[0]) if owners else FREE_COLOR


def block_state(frame: Frame, block: BlockView) -> str:
    if block.is_cached_free:
        return "free, still in the prefix cache"
    if block.is_free:
        return "free"
    return "shared" if block.ref_count > 1 else "in use"


def _cached_texts(frame: Frame) -> dict[tuple[int, ...], str]:
    """Token tuple of every full block of every request -> its text, to describe cached-but-free blocks."""
    size, texts = frame.config.kvcache_block_size, {}
    for request in frame.requests:
        for i in range(request.num_tokens // size):
            key = tuple(request.history.token_ids[i * size:(i + 1) * size])
            texts.setdefault(key, blocks_text(request, i, size))
    return texts


def block_contents(frame: Frame, block: BlockView, cached_texts: dict) -> str:
    owners = frame.block_owners(block.id)
    if owners:
        owner = frame.requests[owners[0]]
        return blocks_text(owner, owner.block_table.index(block.id), frame.config.kvcache_block_size)
    if block.token_ids:
        return cached_texts.get(block.token_ids) or " ".join(map(str, block.token_ids))
    return "empty"


def overfull_blocks(frame: Frame) -> dict[int, int]:
    """{block id: tokens whose K/V it holds} for blocks holding more than a block's size: a request's last
    block when its table has fewer blocks than its computed tokens need (`notebook_block_bug`)."""
    size, overfull = frame.config.kvcache_block_size, {}
    for request in frame.requests:
        if request.block_table:
            last = len(request.block_table) - 1
            held = request.num_computed_tokens - last * size
            if held > size:
                overfull[request.block_table[last]] = held
    return overfull


def _overfull_trace(overfull: dict[int, int], columns: int, cell_px: int) -> go.Scatter:
    cells = [divmod(block_id, columns) for block_id in overfull]
    return go.Scatter(x=[c for _, c in cells], y=[r for r, _ in cells], mode="markers", hoverinfo="skip",
                      name="overfull block (the notebook's block-size bug)",
                      marker={"symbol": "square-open", "size": max(10, cell_px - 6), "color": OVERFULL_COLOR,
                              "line": {"width": 3}})


def block_hover(frame: Frame, block: BlockView, cached_texts: dict) -> str:
    owners = frame.block_owners(block.id)
    lines = [f"<b>block {block.id}</b> · {block_state(frame, block)}",
             "owners: " + (", ".join(f"request {o}" for o in owners) if owners else "none"),
             f"ref count: {block.ref_count}",
             f"hash: {block.hash:#018x}" if block.hash is not None else "hash: none (not a full cached block)",
             f"tokens: {block_contents(frame, block, cached_texts)}"]
    return "<br>".join(lines)


def grid_shape(num_blocks: int, sizing: Sizing) -> tuple[int, int]:
    """(rows, columns): `sizing.grid_columns` wide, wider for big pools so the grid stays roughly square."""
    columns = min(num_blocks, max(sizing.grid_columns, math.ceil(math.sqrt(num_blocks))))
    return math.ceil(num_blocks / columns), columns


def block_grid_figure(frame: Frame, sizing: Sizing = LAPTOP) -> go.Figure:
    blocks = frame.blocks
    rows, columns = grid_shape(len(blocks), sizing)
    categories, cached_texts, overfull = Categories(), _cached_texts(frame), overfull_blocks(frame)
    z = [[None] * columns for _ in range(rows)]
    text = [[""] * columns for _ in range(rows)]
    hover = [[""] * columns for _ in range(rows)]
    for block in blocks:
        r, c = divmod(block.id, columns)
        z[r][c] = categories.z(block_color(frame, block))
        text[r][c] = f"{block.id}" + (f" ×{block.ref_count}" if block.ref_count > 1 else "")
        hover[r][c] = block_hover(frame, block, cached_texts)
        if block.id in overfull:
            text[r][c] += "!"
            hover[r][c] += (f"<br><b>overfull</b>: {overfull[block.id]} tokens in a block of "
                            f"{frame.config.kvcache_block_size} (the notebook's one-block-per-prefill bug)")
    cell_px = max(14, min(sizing.row_px + 6, MAX_GRID_PX // rows))
    show_text = cell_px >= 18
    fig = go.Figure(go.Heatmap(z=z, text=text, hovertext=hover, texttemplate="%{text}" if show_text else None,
                               hovertemplate="%{hovertext}<extra></extra>", xgap=3, ygap=3,
                               textfont={"size": max(8, sizing.font_size - 2)}, **categories.heatmap_args()))
    for name, color in (("in use: colour of its request", "#7B8794"), ("free", FREE_COLOR),
                        ("free, cached prefix (reusable)", CACHED_FREE_COLOR)):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name, hoverinfo="skip",
                                 marker={"symbol": "square", "size": 14, "color": color,
                                         "line": {"color": "#9AA5B1", "width": 1}}))
    if overfull:
        fig.add_trace(_overfull_trace(overfull, columns, cell_px))
    m = frame.metrics
    fig.update_layout(
        title={"text": f"KV cache · {len(blocks)} blocks of {frame.config.kvcache_block_size} tokens · "
                       f"{len(blocks) - m.num_free_blocks} in use, {m.num_cached_free_blocks} cached-free, "
                       f"{m.num_free_blocks - m.num_cached_free_blocks} empty",
               "font": {"size": sizing.font_size + 3}, "x": 0, "xanchor": "left"},
        height=cell_px * rows + 110 + (24 if overfull else 0), margin={"l": 10, "r": 10, "t": 40, "b": 10},
        plot_bgcolor=GAP_COLOR, paper_bgcolor="white", font={"size": sizing.font_size}, dragmode=False,
        legend={"orientation": "h", "x": 0, "y": -0.02, "yanchor": "top", "font": {"size": sizing.font_size}},
        meta={"step": frame.step, "owners": [list(frame.block_owners(b.id)) for b in blocks],
              "ref_counts": [b.ref_count for b in blocks], "cached_free": [b.id for b in blocks if b.is_cached_free],
              "overfull": {str(b): n for b, n in overfull.items()}})
    fig.update_xaxes(visible=False, range=[-0.5, columns - 0.5], fixedrange=True)
    fig.update_yaxes(visible=False, range=[rows - 0.5, -0.5], fixedrange=True, scaleanchor="x")
    return fig


def block_tables_figure(frame: Frame, sizing: Sizing = LAPTOP) -> go.Figure:
    """One row per request holding blocks: its block table, block ids in order, shared blocks marked."""
    holders = [r for r in frame.requests if r.block_table]
    categories = Categories()
    longest = max((len(r.block_table) for r in holders), default=0)
    width = min(sizing.max_boxes, max(longest, MIN_TABLE_COLUMNS))  # cells wide enough for "12 ×3"
    z, text, hover = [], [], []
    for request in holders:
        cells = condense_row(len(request.block_table), width)
        z_row, text_row, hover_row = [], [], []
        for index in cells.shown:
            if index is GAP:
                z_row.append(categories.z(GAP_COLOR))
                text_row.append("…")
                hover_row.append(f"{cells.hidden} blocks not drawn")
                continue
            block = frame.blocks[request.block_table[index]]
            z_row.append(categories.z(request_color(request.id)))
            text_row.append(f"{block.id}" + (f" ×{block.ref_count}" if block.ref_count > 1 else ""))
            hover_row.append(f"request {request.id}, logical block {index} → physical block {block.id}"
                             f" (ref count {block.ref_count})")
        pad = width - len(z_row)
        z.append(z_row + [None] * pad)
        text.append(text_row + [""] * pad)
        hover.append(hover_row + [""] * pad)
    fig = go.Figure()
    if holders:
        fig.add_trace(go.Heatmap(z=z, text=text, hovertext=hover, texttemplate="%{text}", xgap=2, ygap=4,
                                 hovertemplate="%{hovertext}<extra></extra>",
                                 textfont={"size": max(8, sizing.font_size - 3)}, **categories.heatmap_args()))
    else:
        fig.add_annotation(text="no request holds blocks", xref="paper", yref="paper", x=0.5, y=0.5,
                           showarrow=False, font={"size": sizing.font_size + 2, "color": "#7B8794"})
    n = max(1, len(holders))
    fig.update_layout(
        title={"text": "Block tables (logical → physical block ids)", "font": {"size": sizing.font_size + 3},
               "x": 0, "xanchor": "left"},
        height=sizing.row_px * n + 60, margin={"l": 10, "r": 10, "t": 40, "b": 10}, plot_bgcolor="white",
        font={"size": sizing.font_size, "color": TEXT_DARK}, dragmode=False,
        meta={"tables": {str(r.id): list(r.block_table) for r in holders}})
    fig.update_xaxes(visible=False, range=[-0.5, width - 0.5], fixedrange=True)
    fig.update_yaxes(range=[n - 0.5, -0.5], fixedrange=True, showgrid=False, zeroline=False,
                     tickfont={"size": sizing.font_size}, tickvals=list(range(len(holders))),
                     ticktext=[f"<span style='color:{request_color(r.id)}'><b>ID:{r.id}</b></span>" for r in holders])
    return fig
