"""The metrics table: engine.metrics' per-request and run-level numbers as rows and labelled values."""

from __future__ import annotations

from engine.metrics import RequestMetrics, RunMetrics, Span


def _steps(span: Span | None) -> float | None:
    return None if span is None else round(span.steps, 2)


def _ms(span: Span | None) -> float | None:
    return None if span is None else round(span.s * 1000, 1)


def request_rows(requests: list[RequestMetrics]) -> list[dict]:
    """One row per request; None where a latency is not known yet (e.g. no first token)."""
    return [{
        "request": f"ID:{r.id}", "status": r.status, "arrival step": r.arrival, "output tokens": r.num_output_tokens,
        "preemptions": r.num_preemptions, "TTFT (steps)": _steps(r.ttft), "TTFT (ms)": _ms(r.ttft),
        "TPOT (steps)": _steps(r.tpot), "TPOT (ms)": _ms(r.tpot), "latency (steps)": _steps(r.e2e),
        "latency (ms)": _ms(r.e2e),
    } for r in requests]


def _both(span: Span | None) -> str:
    return "–" if span is None else f"{span.steps:.1f} steps · {span.s * 1000:.0f} ms"


def run_summary(run: RunMetrics) -> list[tuple[str, str]]:
    """(label, value) pairs for the run so far; seconds are simulated (the engine's cost model)."""
    return [
        ("throughput", f"{run.throughput_tokens_per_step:.2f} tok/step · {run.throughput_tokens_per_s:.0f} tok/s"),
        ("mean TTFT", _both(run.mean_ttft)),
        ("mean TPOT", _both(run.mean_tpot)),
        ("mean latency", _both(run.mean_e2e)),
        ("finished / aborted", f"{run.num_finished} / {run.num_aborted}"),
        ("preemptions", str(run.num_preemptions)),
        ("prefix hit rate", f"{run.prefix_hit_rate:.0%}"),
        ("mean KV usage", f"{run.mean_kv_usage:.0%}"),
    ]
