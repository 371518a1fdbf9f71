"""What one run may ask of the server: the one table of ranges every input path (the sidebar, the policy lab, a
link, a scenario file, a trace, the add-request form) accepts, so no input costs more than its share of time or
memory and every value a widget shows fits it; and the sizes of what a session may record or open.
"""

from __future__ import annotations

import math

from engine.run.recipe import RUN_BOUNDS
from scheduler.factory import CONFIG_BOUNDS

# Every range an input is checked against, by name: the config's settings, the run's own numbers, and the most
# names a class's lecturer may expect (session/class_names.py).
BOUNDS = {**CONFIG_BOUNDS, **RUN_BOUNDS, "class_names": (1, 500)}
# A trace file the app opens: its bytes (also the server's upload limit, .streamlit/config.toml) and frames.
MAX_TRACE_BYTES = 20 * 2**20
MAX_TRACE_FRAMES = 100_000
# Steps one app session may record: past this, Run N and Play stop with a message (memory stays bounded).
MAX_APP_STEPS = 100_000


def within(key: str, value) -> bool:
    """Whether `value` is a finite number (not a bool) within BOUNDS[key]."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    low, high = BOUNDS[key]
    return math.isfinite(value) and low <= value <= high

