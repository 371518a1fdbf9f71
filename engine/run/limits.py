"""What one run may ask of the server: the one table of ranges every input path (the sidebar, the policy lab, a
link, a scenario file, a trace, the add-request form) accepts, so no input costs more than its share of time or
memory and every value a widget shows fits it; and the sizes of what a session may record or open.
"""

from __future__ import annotations

import math
import os

from engine.run.recipe import RUN_BOUNDS
from scheduler.factory import CONFIG_BOUNDS

# Every range an input is checked against, by name: the config's settings, the run's own numbers, and the most
# names a class's lecturer may expect (session/class_names.py).
# A learner's scheduler run in the sandbox (sandbox/limits.py): the bounds of each of its limits, and its default.
SANDBOX_BOUNDS = {"sandbox_cpu_s": (1, 120), "sandbox_memory_mb": (256, 4096), "sandbox_wall_s": (2, 300),
                  "sandbox_output_mb": (1, 64), "sandbox_steps": (1, 100_000)}
SANDBOX_DEFAULTS = {"sandbox_cpu_s": 20, "sandbox_memory_mb": 1024, "sandbox_wall_s": 40, "sandbox_output_mb": 16,
                    "sandbox_steps": 2000}
# Sandboxes one server process runs at once (more: "busy, try again in a moment"): one per two cores, so learners'
# code never takes more than half the machine from a class's stepping
SANDBOXES = max(1, (os.cpu_count() or 2) // 2)
SANDBOX_KINDS = 500  # learners' kinds one server process registers (sandbox/kinds.py), until it restarts
BOUNDS = {**CONFIG_BOUNDS, **RUN_BOUNDS, **SANDBOX_BOUNDS, "class_names": (1, 500)}
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

