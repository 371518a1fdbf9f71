"""The metrics table: engine.run.metrics' per-request and run-level numbers as rows and labelled values."""

from __future__ import annotations

from engine.run.metrics import RequestMetrics, RunMetrics, Span, SpeculationMetrics
from i18n import text

UNKNOWN = "–"  # a latency not known yet (no first token, not finished): never a "None" cell


def _steps(span: Span | None) -> float | str:
    return UNKNOWN if span is None else round(span.steps, 2)


def _ms(span: Span | None) -> float | str:
    return UNKNOWN if span is None else round(span.s * 1000, 1)


def request_rows(requests: list[RequestMetrics], lang: str) -> list[dict]:
    """One row per request; UNKNOWN where a latency is not known yet (e.g. no first token)."""
    columns = [text(lang, f"table.{key}") for key in ("request", "status", "arrival", "output", "preemptions",
                                                      "ttft_steps", "ttft_ms", "tpot_steps", "tpot_ms",
                                                      "latency_steps", "latency_ms")]
    return [dict(zip(columns, (f"ID:{r.id}", text(lang, f"status.{r.status}"), r.arrival, r.num_output_tokens,
                               r.num_preemptions, _steps(r.ttft), _ms(r.ttft), _steps(r.tpot), _ms(r.tpot),
                               _steps(r.e2e), _ms(r.e2e)), strict=True)) for r in requests]


def _pair(span: Span | None, lang: str) -> tuple[str, str]:
    if span is None:
        return UNKNOWN, UNKNOWN
    return text(lang, "table.n_steps", n=f"{span.steps:.1f}"), f"{span.s * 1000:.0f} ms"


def run_summary(run: RunMetrics, lang: str) -> list[dict]:
    """Rows of the run-so-far summary, in steps and in (simulated, cost-model) seconds where both exist."""
    rows = [("throughput", text(lang, "table.tokens_per_step", n=f"{run.throughput_tokens_per_step:.2f}"),
             text(lang, "table.tokens_per_s", n=f"{run.throughput_tokens_per_s:.0f}")),
            ("mean_ttft", *_pair(run.mean_ttft, lang)), ("mean_tpot", *_pair(run.mean_tpot, lang)),
            ("mean_latency", *_pair(run.mean_e2e, lang)),
            ("finished_aborted", f"{run.num_finished} / {run.num_aborted}", ""),
            ("preemptions", str(run.num_preemptions), ""), ("prefix_hit_rate", f"{run.prefix_hit_rate:.0%}", ""),
            ("mean_kv_usage", f"{run.mean_kv_usage:.0%}", "")]
    steps_column, seconds_column = text(lang, "table.in_steps"), text(lang, "table.in_seconds")
    return [{"": text(lang, f"table.{label}"), steps_column: steps, seconds_column: seconds}
            for label, steps, seconds in rows]


def as_table(rows: list[dict]) -> list[dict]:
    """`rows` with every column of one type, as a dataframe (Arrow) needs: a column mixing numbers and words
    ("200 / 0", UNKNOWN) has its numbers written as words too, instead of failing to convert and logging it."""
    mixed = {key for key in (rows[0] if rows else {})
             if len({isinstance(row[key], str) for row in rows if row[key] is not None}) > 1}
    return [{key: str(value) if key in mixed and value is not None else value for key, value in row.items()}
            for row in rows]


def speculation_sentence(speculation: SpeculationMetrics, lang: str) -> str | None:
    """How speculative decoding did, or None when no draft token was checked."""
    if not speculation.num_drafted:
        return None
    return text(lang, "table.speculation", accepted=speculation.num_accepted, drafted=speculation.num_drafted,
                rate=f"{speculation.acceptance_rate:.0%}", per_pass=f"{speculation.tokens_per_pass:.2f}")
