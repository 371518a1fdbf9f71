"""The one way a bench computes percentiles: linear interpolation between ranks (engine.run.metrics.percentile,
numpy's default, the app's own), so that a p95 means the same in every script's figures."""

from collections.abc import Iterable

from engine.run.metrics import percentile

__all__ = ["p50", "p95", "percentile", "percentiles", "spread"]


def percentiles(values: Iterable[float], *qs: float) -> tuple[float, ...]:
    """The `qs`-th percentiles (0..100; 100 is the max) of `values`; 0 each where there are none."""
    values = list(values)
    return tuple(percentile(values, q) if values else 0.0 for q in qs)


def p50(values: Iterable[float]) -> float:
    return percentiles(values, 50)[0]


def p95(values: Iterable[float]) -> float:
    return percentiles(values, 95)[0]


def spread(seconds: Iterable[float]) -> str:
    """'p50 X ms, p95 Y ms, max Z ms' of latencies in seconds."""
    p50, p95, worst = percentiles(seconds, 50, 95, 100)
    return f"p50 {p50 * 1e3:.0f} ms, p95 {p95 * 1e3:.0f} ms, max {worst * 1e3:.0f} ms"
