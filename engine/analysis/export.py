"""Exports of a comparison: JSON (each run a reloadable engine trace), and CSV of per-request metrics.

A comparison's JSON holds, per config, its label, its compared numbers and its run as the engine's own trace
(engine.traces.trace): `split_comparison` writes those traces out as files that `load_trace` (and the app's trace
uploader) open like any recorded run.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path

from engine.analysis.compare import ConfigRun, metric_values
from engine.run.metrics import RequestMetrics, Span
from i18n import MessageError

COMPARISON_VERSION = 1
MAX_EXPORT_BYTES = 100 * 2**20
SPAN_UNITS = tuple(f.name for f in fields(Span))  # steps, s, wall_s


def comparison_dict(runs: Sequence[ConfigRun], title: str | None = None) -> dict:
    return {"version": COMPARISON_VERSION, "title": title,
            "runs": [{"label": run.label, "stop_reason": run.stop_reason, "metrics": metric_values(run),
                      "trace": run.trace_dict(f"{title}: {run.label}" if title else run.label)}
                     for run in runs]}


def comparison_json(runs: Sequence[ConfigRun], title: str | None = None) -> str:
    """The comparison as compact JSON; ValueError when it would exceed MAX_EXPORT_BYTES (a session's share)."""
    text = json.dumps(comparison_dict(runs, title), separators=(",", ":"))
    if len(text) > MAX_EXPORT_BYTES:
        raise MessageError("export.too_big", mb=f"{len(text) / 2**20:.0f}", most=MAX_EXPORT_BYTES // 2**20)
    return text


def comparison_traces(data: bytes | str) -> list[tuple[str, str]] | None:
    """The runs of a policy-lab comparison file (`comparison_json`) as (label, trace JSON text), each a trace the
    app opens; None when `data` is not a comparison (a trace, or anything else, is opened, or refused, as it is)."""
    try:
        parsed = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    runs = parsed.get("runs") if isinstance(parsed, dict) else None
    if not isinstance(runs, list) or not runs or not all(isinstance(r, dict) and isinstance(r.get("trace"), dict)
                                                         for r in runs):
        return None
    return [(str(r.get("label") or i + 1), json.dumps(r["trace"])) for i, r in enumerate(runs)]


def split_comparison(path: str | Path, out_dir: str | Path) -> list[Path]:
    """Write each run of a comparison JSON file as its own trace file in `out_dir`; their paths, in order."""
    data = json.loads(Path(path).read_text())
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, run in enumerate(data["runs"]):
        target = out_dir / f"{i + 1}_{re.sub(r'[^A-Za-z0-9]+', '_', run['label']).strip('_')}.json"
        target.write_text(json.dumps(run["trace"]))
        paths.append(target)
    return paths


def request_columns() -> list[str]:
    """CSV columns: the config label, then RequestMetrics' fields, each latency as <name>_<unit>."""
    columns = ["config"]
    for f in fields(RequestMetrics):
        is_span = "Span" in str(f.type)
        columns += [f"{f.name}_{unit}" for unit in SPAN_UNITS] if is_span else [f.name]
    return columns


def _request_row(label: str, request: RequestMetrics) -> list:
    row: list = [label]
    for f in fields(RequestMetrics):
        value = getattr(request, f.name)
        if "Span" in str(f.type):
            row += [None if value is None else getattr(value, unit) for unit in SPAN_UNITS]
        else:
            row.append(value)
    return row


def requests_csv(runs: Sequence[ConfigRun]) -> str:
    """Per-request metrics of every run, one row per (config, request); empty cells where a latency is
    unknown (no first token, fewer than two output tokens)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(request_columns())
    for run in runs:
        writer.writerows(_request_row(run.label, request) for request in run.requests)
    return out.getvalue()
