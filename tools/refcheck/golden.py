"""Golden traces: workloads with the step records a system's own scheduler made on them, recorded once in the
system's oracle environment (`python -m tools.refcheck SYSTEM --release R --record`) and replayed against the
twin in `make test`, where the system is not installed.

One gzipped JSON file per system and release, `tests/data/refcheck/<system>-<release>.json.gz`:
    {"format": 1, "system": "vllm", "release": "0.33", "fields": [...], "traces": [{"workload": {...},
     "steps": [[...], ...]}, ...]}
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

from tools.refcheck.adapter import Adapter
from tools.refcheck.record import first_difference

FORMAT = 1
GOLDEN_DIR = Path(__file__).resolve().parents[2] / "tests" / "data" / "refcheck"


@dataclass(frozen=True)
class Golden:
    system: str
    release: str
    fields: tuple[str, ...]
    traces: list[dict]  # each {"workload": ..., "steps": [record, ...]}


def golden_path(system: str, release: str) -> Path:
    return GOLDEN_DIR / f"{system}-{release}.json.gz"


def write_golden(path: Path, golden: Golden) -> None:
    document = {"format": FORMAT, "system": golden.system, "release": golden.release,
                "fields": list(golden.fields), "traces": golden.traces}
    with gzip.open(path, "wt") as f:
        json.dump(document, f, separators=(",", ":"))


def read_golden(path: Path) -> Golden:
    with gzip.open(path, "rt") as f:
        document = json.load(f)
    if document.get("format") != FORMAT:
        raise ValueError(f"{path}: golden-trace format {document.get('format')!r}, this reader reads {FORMAT}")
    return Golden(document["system"], document["release"], tuple(document["fields"]), document["traces"])


def replay(adapter: Adapter, golden: Golden) -> list[tuple[int, str, int, str]]:
    """The traces the twin (set to the golden's release) no longer reproduces: (trace index, mode, step, field)."""
    if tuple(adapter.fields) != golden.fields:
        raise ValueError(f"golden fields {golden.fields} differ from the adapter's {adapter.fields}: re-record")
    differing = []
    for n, trace in enumerate(golden.traces):
        difference = first_difference(trace["steps"], adapter.run_twin(trace["workload"], golden.release),
                                      golden.fields)
        if difference:
            differing.append((n, trace["workload"]["mode"], *difference))
    return differing
