"""A trace's frames as the frame store holds them (engine/run/frame_store.py), written out: one record per step
with its scalars, batch, events and metrics, the requests it changed that the batch rule does not explain, the
blocks it changed (the whole pool, with `num_blocks`, on the first frame and after the pool was rebuilt), the
queues as QueueDiffs `[start, keep, middle, tail]` (absent when unchanged) and the config only when it changed.
Reading one appends those records to a store as they are: the store's encoding is the trace's, so there is no
second delta format. Older traces read into the same store: a version 2 trace (every request that changed, the
queues whole) through `append`, a version 1 trace (every frame whole) through `append_frame`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from engine.run.frame import (
    BlockView,
    Frame,
    RequestView,
    StepHeader,
    StepMetrics,
    TokenHistory,
    config_to_dict,
)
from engine.run.frame_store import NONE, FrameStore, QueueDiff, StepRecord
from scheduler import Config

QUEUES = ("waiting", "running")


def _event_data(event) -> dict:
    """`event.to_dict()` for JSON, without dataclasses.asdict's deep copy (a quarter of an export's time)."""
    return {"kind": event.kind, **vars(event)}


def record_data(record: StepRecord, previous: StepRecord | None) -> dict:
    """One step's record as JSON data (see the module's docstring); `previous`: the record before it."""
    header = record.header
    data = {"step": header.step, "sim_time_s": header.sim_time_s, "wall_schedule_s": header.wall_schedule_s,
            "wall_model_s": header.wall_model_s, "batch": header.batch.to_dict(),
            "events": [_event_data(e) for e in header.events], "metrics": record.metrics.to_dict(),
            "timing": header.timing and header.timing.to_dict(), **header.extras_dict()}
    if previous is None or header.config != previous.header.config:
        data["config"] = config_to_dict(header.config)
    blocks: Sequence[BlockView]
    if isinstance(record.blocks, tuple):
        data["num_blocks"], blocks = len(record.blocks), record.blocks
    else:
        blocks = [record.blocks[i] for i in sorted(record.blocks)]
    data["blocks"] = [b.to_dict() for b in blocks]
    data["requests"] = [record.requests[i].to_dict(tokens=False) for i in sorted(record.requests)]
    for name in QUEUES:
        if (diff := getattr(record, name)) is not None:
            data[name] = _diff_data(diff)
    if record.queues:
        data["queues"] = {name: _diff_data(diff) for name, diff in record.queues.items()}
    if record.side_pools:
        data["side_pools"] = {name: list(units) for name, units in record.side_pools.items()}
    return data


def _diff_data(diff: QueueDiff) -> list:
    return [diff.start, diff.keep, list(diff.middle), diff.tail]


def store_data(store: FrameStore) -> list[dict]:
    """Every record of `store` as JSON data, in step order."""
    records = store.records
    return [record_data(record, records[k - 1] if k else None) for k, record in enumerate(records)]


def _header(data: dict, config: Config | None) -> tuple[Config, StepHeader, StepMetrics]:
    if "config" in data:
        config = Config(**data["config"])
    assert config is not None  # the schema asks the first step for its config
    return config, StepHeader.from_dict(data, config), StepMetrics.from_dict(data["metrics"])


def _blocks(data: dict) -> dict[int, BlockView] | tuple[BlockView, ...]:
    blocks = [BlockView.from_dict(b) for b in data["blocks"]]
    return tuple(blocks) if "num_blocks" in data else {b.id: b for b in blocks}


def _requests(data: dict, histories: Sequence[TokenHistory]) -> dict[int, RequestView]:
    return {r["id"]: RequestView.from_dict(r, histories[r["id"]]) for r in data["requests"]}


def _queue(data: dict, name: str) -> QueueDiff | None:
    if name not in data:
        return None
    return _diff(data[name])


def _diff(data: list) -> QueueDiff:
    start, keep, middle, tail = data
    return QueueDiff(start, keep, tuple(middle), tail)


def read_records(store: FrameStore, frames: Iterable[dict], histories: Sequence[TokenHistory]):
    """Append a version 3 or 4 trace's records to `store`."""
    config = None
    for data in frames:
        config, header, metrics = _header(data, config)
        queues = {name: _diff(diff) for name, diff in data.get("queues", {}).items()}
        side_pools = {name: tuple(units) for name, units in data.get("side_pools", {}).items()}
        store.append_record(StepRecord(header, metrics, _requests(data, histories), _blocks(data),
                                       _queue(data, "waiting"), _queue(data, "running"), queues or NONE,
                                       side_pools or NONE))


def read_version_2(store: FrameStore, frames: Iterable[dict], histories: Sequence[TokenHistory]):
    """Append a version 2 trace's frames to `store`: each lists every request that changed, so the batch rule is
    not the store's to apply to a request of the batch it leaves out (one that did not change): that one is
    recorded as it was."""
    config, views = None, {}
    for data in frames:
        config, header, metrics = _header(data, config)
        requests = _requests(data, histories)
        views.update(requests)
        requests |= {rid: views[rid] for rid in header.batch.seq_ids if rid not in requests}
        store.append(header, metrics, requests, _blocks(data), tuple(data["waiting"]), tuple(data["running"]))


def read_version_1(store: FrameStore, frames: Iterable[dict], histories: Sequence[TokenHistory]):
    """Append a version 1 trace's whole frames to `store`."""
    for data in frames:
        store.append_frame(Frame.from_dict(data, histories))


READERS = {1: read_version_1, 2: read_version_2, **dict.fromkeys((3, 4, 5), read_records)}  # by a trace's version
