"""What one learner's run in the sandbox may use: CPU seconds, memory, wall seconds, output and steps, each with
its default and bounds from the one table of bounds (engine/run/limits.py SANDBOX_BOUNDS, SANDBOX_DEFAULTS)."""

from __future__ import annotations

from dataclasses import dataclass, fields

from engine.run.limits import SANDBOX_DEFAULTS, within
from i18n import MessageError

PRINTS_KEPT = 64 * 1024  # characters of a learner's prints handed back (more is counted, not kept)
MAX_SOURCE = 256 * 1024  # characters of a learner's file


@dataclass(frozen=True)
class Limits:
    cpu_s: int = SANDBOX_DEFAULTS["sandbox_cpu_s"]
    memory_mb: int = SANDBOX_DEFAULTS["sandbox_memory_mb"]
    wall_s: int = SANDBOX_DEFAULTS["sandbox_wall_s"]
    output_mb: int = SANDBOX_DEFAULTS["sandbox_output_mb"]
    steps: int = SANDBOX_DEFAULTS["sandbox_steps"]

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if type(value) is not int or not within(f"sandbox_{f.name}", value):
                raise MessageError("sandbox.limit", name=f.name, value=repr(value))

    @property
    def output_bytes(self) -> int:
        return self.output_mb * 2**20

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}
