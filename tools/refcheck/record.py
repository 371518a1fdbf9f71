"""The per-step record both sides of a reference check produce, and where two runs part.

A run is a list of step records; a step record is a list of JSON-able values, one per field name the system's
adapter declares (tools/refcheck/adapter.py), so records compare with `==` and round-trip through JSON."""

from __future__ import annotations


def first_difference(expected: list[list], actual: list[list], fields: tuple[str, ...]) -> tuple[int, str] | None:
    """(step index, field name) of the first step where the two runs' records differ, else None; a run that
    stops early differs in "number of steps"."""
    for i, (a, b) in enumerate(zip(expected, actual, strict=False)):
        if a != b:
            return i, next(f for f, x, y in zip(fields, a, b, strict=True) if x != y)
    if len(expected) != len(actual):
        return min(len(expected), len(actual)), "number of steps"
    return None


def describe(records: list[list], step: int, fields: tuple[str, ...]) -> str:
    """Step `step` (0-based) of a run, its fields by name, for a report."""
    if step >= len(records):
        return f"(no step {step + 1}: {len(records)} steps)"
    return str(dict(zip(fields, records[step], strict=True)))
