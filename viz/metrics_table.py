"""The metrics table: engine.metrics' per-request and run-level numbers as rows and labelled values."""

from __future__ import annotations

from engine.metrics import RequestMetrics, RunMetrics, Span, SpeculationMetrics

UNKNOWN = "–"  # a latency not known yet (no first token, not finished): never a "None" cell


def _steps(span: Span | None) -> float | str:
    return UNKNOWN if span is None else round(span.steps, 2)


def _ms(span: Span | None) -> float | str:
    return UNKNOWN if span is None else round(span.s * 1000, 1)


def request_rows(requests: list[RequestMetrics]) -> list[dict]:
    """One row per request; UNKNOWN where a latency is not known yet (e.g. no first token)."""
    return [{
        "request": f"ID:{r.id}", "status": r.status, "arrival step": r.arrival, "output tokens": r.num_output_tokens,
        "preemptions": r.num_preemptions, "TTFT (steps)": _steps(r.ttft), "TTFT (ms)": _ms(r.ttft),
        "TPOT (steps)": _steps(r.tpot), "TPOT (ms)": _ms(r.tpot), "latency (steps)": _steps(r.e2e),
        "latency (ms)": _ms(r.e2e),
    } for r in requests]


def _pair(span: Span | None) -> tuple[str, str]:
    return (UNKNOWN, UNKNOWN) if span is None else (f"{span.steps:.1f} steps", f"{span.s * 1000:.0f} ms")


def run_summary(run: RunMetrics) -> list[dict]:
    """Rows of the run-so-far summary, in steps and in (simulated, cost-model) seconds where both exist."""
    rows = [("throughput", f"{run.throughput_tokens_per_step:.2f} tokens/step",
             f"{run.throughput_tokens_per_s:.0f} tokens/s"),
            ("mean TTFT", *_pair(run.mean_ttft)), ("mean TPOT", *_pair(run.mean_tpot)),
            ("mean latency", *_pair(run.mean_e2e)),
            ("finished / aborted", f"{run.num_finished} / {run.num_aborted}", ""),
            ("preemptions", str(run.num_preemptions), ""), ("prefix hit rate", f"{run.prefix_hit_rate:.0%}", ""),
            ("mean KV usage", f"{run.mean_kv_usage:.0%}", "")]
    return [{"": label, "in steps": steps, "in seconds": seconds} for label, steps, seconds in rows]


def speculation_sentence(speculation: SpeculationMetrics) -> str | None:
    """How speculative decoding did, or None when no draft token was checked."""
    if not speculation.num_drafted:
        return None
    return (f"Speculative decoding: {speculation.num_accepted} of {speculation.num_drafted} draft tokens accepted "
            f"({speculation.acceptance_rate:.0%}), {speculation.tokens_per_pass:.2f} output tokens per request per "
            "forward pass.")
