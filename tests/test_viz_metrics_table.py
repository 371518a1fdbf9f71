from engine.run.metrics import SpeculationMetrics, run_metrics
from tests.helpers.engines import preemption_engine
from viz.metrics_table import as_table, request_rows, run_summary, speculation_sentence


def test_rows_and_summary_come_from_the_engine_metrics():
    run, requests = run_metrics(preemption_engine().frames)
    rows = request_rows(requests, lang="en")
    assert [r["request"] for r in rows] == ["ID:0", "ID:1", "ID:2"]
    assert rows[1]["preemptions"] == 1 and rows[0]["TTFT (steps)"] == 1.0
    assert rows[0]["latency (steps)"] == requests[0].e2e.steps
    summary = {row[""]: row for row in run_summary(run, lang="en")}
    assert summary["preemptions"]["in steps"] == "1" and summary["finished / aborted"]["in steps"] == "3 / 0"
    assert summary["mean TTFT"]["in steps"] == f"{run.mean_ttft.steps:.1f} steps"
    assert summary["mean TTFT"]["in seconds"] == f"{run.mean_ttft.s * 1000:.0f} ms"


def test_unknown_latencies_are_a_dash_never_none():
    engine = preemption_engine()
    _, requests = run_metrics(list(engine.frames)[:2])  # request 2 has waited, with no first token yet
    row = request_rows(requests, lang="en")[2]
    assert row["TTFT (steps)"] == "–" and row["latency (ms)"] == "–"
    assert None not in [value for r in request_rows(requests, lang="en") for value in r.values()]


def test_speculation_sentence_only_when_drafts_were_checked():
    assert speculation_sentence(SpeculationMetrics(0, 0, 0.0, 1.0), lang="en") is None
    sentence = speculation_sentence(SpeculationMetrics(8, 6, 0.75, 2.5), lang="en")
    assert "6 of 8 draft tokens accepted (75%)" in sentence and "2.50 output tokens" in sentence


def test_the_tables_the_pages_draw_convert_to_arrow_without_a_fallback():
    """st.dataframe converts through Arrow; a column mixing numbers and words ("20 / 0", "–") failed to convert and
    Streamlit logged the traceback ("Could not convert '200 / 0'") before fixing it up. as_table gives one type
    per column."""
    import pandas as pd
    import pyarrow as pa

    from engine.analysis.compare import GENERATED_CONFIG, compare, generated_workload, variants_for
    from viz.compare_words import metric_rows

    runs = compare(variants_for("tail vs smart preemption", GENERATED_CONFIG, "en"), generated_workload(12))
    _, waiting = run_metrics(list(preemption_engine().frames)[:2])
    for rows in (metric_rows(runs, lang="en"), request_rows(waiting, "en")):
        table = as_table(rows)
        pa.Table.from_pandas(pd.DataFrame(table))
        assert all(str(row[k]) == str(table[i][k]) for i, row in enumerate(rows) for k in row)  # same words
    rows = metric_rows(runs, lang="en")
    assert as_table(rows)[0]["tail preemption"] == str(rows[0]["tail preemption"])
