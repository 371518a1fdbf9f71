"""Sizes for a laptop screen and for a projector (presentation mode): bigger boxes and fonts, fewer of them."""

from typing import NamedTuple


class Sizing(NamedTuple):
    row_px: int          # height of one queue row / one block-grid row
    font_size: int
    max_boxes: int       # token boxes per queue row before condensing
    max_rows: int        # queue rows before "+N more requests"
    grid_columns: int    # blocks per row of the KV grid (at most)
    piece_chars: int     # characters of a token's text shown inside its box


LAPTOP = Sizing(row_px=30, font_size=12, max_boxes=28, max_rows=8, grid_columns=16, piece_chars=5)
PROJECTOR = Sizing(row_px=46, font_size=18, max_boxes=24, max_rows=6, grid_columns=12, piece_chars=6)


def sizing_for(presentation: bool) -> Sizing:
    return PROJECTOR if presentation else LAPTOP
