"""One colour per request, the same in every view and every frame (the stage player gets them too), plus the
pool's neutral colours."""

from __future__ import annotations

# Dark24 without its near-black and near-white entries: saturated enough for white text on a projector.
REQUEST_PALETTE = (
    "#2E91E5", "#E15F99", "#1CA71C", "#FB0D0D", "#DA16FF", "#B68100", "#750D86", "#EB663B",
    "#511CFB", "#00A08B", "#FB00D1", "#B2828D", "#6C7C32", "#778AAE", "#862A16", "#A777F1",
    "#620042", "#1616A7", "#DA60CA", "#6C4516", "#0D2A63", "#AF0038",
)
FREE_COLOR = "#EEF0F3"         # a free, empty block
CACHED_FREE_COLOR = "#FFE9A8"  # free, but its content is still in the prefix cache
RESERVED_COLOR = "#5F6B7A"     # held by no request: a reserved unit (vLLM's null block, SGLang's padding page)


def request_color(request_id: int) -> str:
    return REQUEST_PALETTE[request_id % len(REQUEST_PALETTE)]
