"""What one run may ask of the server: the ranges every input path (sidebar, link, scenario file, trace)
accepts, so no input costs more than its share of time or memory, and every value the sidebar shows fits it.
"""

from __future__ import annotations

import math

# Scheduler settings: the sidebar's number inputs, a link's values, scenario files and traces.
CONFIG_BOUNDS = {"max_num_seqs": (1, 256), "num_kvcache_blocks": (1, 4096), "kvcache_block_size": (1, 256),
                 "max_num_batched_tokens": (1, 65536), "max_model_len": (2, 8192),
                 "num_speculative_tokens": (0, 16), "prompt_lookup_min": (1, 16), "prompt_lookup_max": (1, 16),
                 "long_prefill_token_threshold": (0, 8192)}
# A run's size: requests, their tokens, arrival steps and the steps one run may take (`DEFAULT_MAX_STEPS`).
RUN_BOUNDS = {"workload_requests": (1, 2000), "max_tokens": (1, 2048), "arrival": (0, 100_000),
              "max_steps": (1, 100_000), "token_id": (0, 2**31 - 1), "prompt_tokens": (1, 8192),
              "priority": (-1_000_000, 1_000_000), "temperature": (0.0, 2.0), "scenario_seed": (0, 2**31 - 1),
              "cost_s": (0.0, 3600.0), "rate": (0.0, 1000.0), "scale": (0.0, 1000.0)}
BOUNDS = {**CONFIG_BOUNDS, **RUN_BOUNDS}
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

