"""Comparison exports: the JSON reloads as engine traces, the CSV holds every request's metrics."""

import csv
import io
import json

import pytest

from engine.analysis.compare import GENERATED_CONFIG, compare, generated_workload, variants_for
from engine.analysis.export import comparison_json, request_columns, requests_csv, split_comparison
from engine.run.recipe import Request
from engine.traces.trace import load_trace


@pytest.fixture(scope="module")
def runs():
    return compare(variants_for("prefill-first vs decode-first", GENERATED_CONFIG, "en"),
                   generated_workload(12, seed=2))


def test_the_comparison_json_splits_into_traces_that_reload(runs, tmp_path):
    path = tmp_path / "comparison.json"
    path.write_text(comparison_json(runs, "twelve requests"))
    data = json.loads(path.read_text())
    assert [r["label"] for r in data["runs"]] == ["prefill-first", "decode-first"]
    assert data["runs"][1]["metrics"]["steps to finish"] == runs[1].run.num_steps
    paths = split_comparison(path, tmp_path / "traces")
    assert [p.name for p in paths] == ["1_prefill_first.json", "2_decode_first.json"]
    for run, trace_path in zip(runs, paths, strict=True):
        frames, requests = load_trace(trace_path)
        assert len(frames) == len(run.frames) and len(requests) == 12
        assert frames[-1].to_dict() == run.frames[-1].to_dict()
        assert frames[-1].config.value("prefill_first") == run.config.value("prefill_first")


def test_the_csv_has_a_row_per_request_and_config(runs):
    rows = list(csv.DictReader(io.StringIO(requests_csv(runs))))
    assert len(rows) == 24 and list(rows[0]) == request_columns()
    decode_first = [r for r in rows if r["config"] == "decode-first"]
    metrics = runs[1].requests[5]
    row = decode_first[5]
    assert int(row["id"]) == 5 and int(row["finish_step"]) == metrics.finish_step
    assert float(row["ttft_steps"]) == metrics.ttft.steps and float(row["tpot_s"]) == pytest.approx(metrics.tpot.s)
    assert row["status"] == "finished"


def test_an_unknown_latency_is_an_empty_cell():
    one_token = compare(variants_for("tail vs smart preemption", GENERATED_CONFIG, "en"),
                        [Request(prompt_token_ids=(1, 2), max_tokens=1, ignore_eos=True)])
    row = next(csv.DictReader(io.StringIO(requests_csv(one_token))))
    assert row["tpot_steps"] == "" and row["ttft_steps"] == "1.0"
