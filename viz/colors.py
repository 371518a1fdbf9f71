"""One colour per request, the same in every view and every frame, plus the pool's neutral colours.

Heatmaps take categories, not colours: `discrete_colorscale` turns a list of colours into a stepwise
colorscale in which the integer z value i is drawn exactly in colours[i] (with zmin=-0.5, zmax=len-0.5).
"""

from __future__ import annotations

# Dark24 without its near-black and near-white entries: saturated enough for white text on a projector.
REQUEST_PALETTE = (
    "#2E91E5", "#E15F99", "#1CA71C", "#FB0D0D", "#DA16FF", "#B68100", "#750D86", "#EB663B",
    "#511CFB", "#00A08B", "#FB00D1", "#B2828D", "#6C7C32", "#778AAE", "#862A16", "#A777F1",
    "#620042", "#1616A7", "#DA60CA", "#6C4516", "#0D2A63", "#AF0038",
)
FREE_COLOR = "#EEF0F3"         # a free, empty block
CACHED_FREE_COLOR = "#FFE9A8"  # free, but its content is still in the prefix cache
GAP_COLOR = "#FFFFFF"          # the ellipsis of a condensed row, and empty grid cells
TEXT_DARK = "#1F2933"


def request_color(request_id: int) -> str:
    return REQUEST_PALETTE[request_id % len(REQUEST_PALETTE)]


def blend(color: str, toward: str = "#FFFFFF", amount: float = 0.6) -> str:
    """`color` moved `amount` of the way toward `toward` (both #RRGGBB)."""
    a = [int(color[i:i + 2], 16) for i in (1, 3, 5)]
    b = [int(toward[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * amount):02X}" for x, y in zip(a, b, strict=True))


def discrete_colorscale(colors: list[str]) -> list[tuple[float, str]]:
    n = len(colors)
    scale = []
    for i, color in enumerate(colors):
        scale += [(i / n, color), ((i + 1) / n, color)]
    return scale


class Categories:
    """Assigns each distinct colour an integer z value, in order of first use."""

    def __init__(self):
        self._index: dict[str, int] = {}

    def z(self, color: str) -> int:
        return self._index.setdefault(color, len(self._index))

    @property
    def colors(self) -> list[str]:
        return list(self._index)

    def heatmap_args(self) -> dict:
        """zmin/zmax/colorscale for a heatmap whose z values came from `z()`."""
        colors = self.colors or [GAP_COLOR]
        return {"colorscale": discrete_colorscale(colors), "zmin": -0.5, "zmax": len(colors) - 0.5,
                "showscale": False}
