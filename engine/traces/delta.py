"""Frames as deltas for trace files: each frame holds its scalars, batch, queues, events and metrics, and only
the blocks and requests that differ from the frame before (all of them on the first frame and after the pool
was resized, with `num_blocks`), and its config only when it changed. Reading applies them in order."""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Sequence
from itertools import compress
from operator import ne

from engine.run.frame import (
    BlockView,
    Frame,
    RequestView,
    StepHeader,
    StepMetrics,
    TokenHistory,
    config_to_dict,
    output_dict,
)
from scheduler import Config


def _changed(new: Sequence, old: Sequence) -> list:
    """The items of `new` that differ from `old`'s at the same index (or that `old` does not have); compared in
    C (`map`), as this runs over the whole pool once per frame."""
    return [*compress(new, map(ne, new, old)), *new[len(old):]]


def _event_data(event) -> dict:
    """`event.to_dict()` for JSON, without dataclasses.asdict's deep copy (a quarter of an export's time)."""
    return {"kind": event.kind, **vars(event)}


def frame_delta(frame: Frame, previous: Frame | None) -> dict:
    delta = {"step": frame.step, "sim_time_s": frame.sim_time_s, "wall_schedule_s": frame.wall_schedule_s,
             "wall_model_s": frame.wall_model_s, "batch": frame.batch.to_dict(), "waiting": list(frame.waiting),
             "running": list(frame.running), "events": [_event_data(e) for e in frame.events],
             "metrics": frame.metrics.to_dict(), "timing": frame.timing and frame.timing.to_dict(),
             **output_dict(frame.output)}
    if previous is None or frame.config != previous.config:
        delta["config"] = config_to_dict(frame.config)
    if previous is None or len(previous.blocks) != len(frame.blocks):
        delta["num_blocks"], blocks = len(frame.blocks), frame.blocks
    else:
        blocks = _changed(frame.blocks, previous.blocks)
    delta["blocks"] = [b.to_dict() for b in blocks]
    delta["requests"] = [r.to_dict(tokens=False) for r in _changed(frame.requests, previous.requests if previous
                                                                   else ())]
    return delta


def frame_deltas(frames: Iterable[Frame]) -> list[dict]:
    """Every frame as a delta against the one before (a FrameStore rebuilds each frame once). The cyclic garbage
    collector is paused meanwhile: rebuilt frames make no cycles, and its full passes over a session's many
    objects took a third of the time."""
    deltas, previous = [], None
    enabled = gc.isenabled()
    gc.disable()
    try:
        for frame in frames:
            deltas.append(frame_delta(frame, previous))
            previous = frame
    finally:
        if enabled:
            gc.enable()
    return deltas


def _frame(data: dict, config: Config, requests: tuple[RequestView, ...], blocks: tuple[BlockView, ...]) -> Frame:
    return Frame(StepHeader.from_dict(data, config), tuple(data["waiting"]), tuple(data["running"]), requests,
                 blocks, StepMetrics.from_dict(data["metrics"]))


def frames_from_deltas(frames: Iterable[dict], histories: Sequence[TokenHistory], full: bool = False
                       ) -> Iterator[Frame]:
    """The frames of a trace, rebuilt in order; `full`: a version 1 trace, whose frames hold everything."""
    config, blocks, requests = None, [], []
    for data in frames:
        if full:
            yield Frame.from_dict(data, histories)
            continue
        if "config" in data:
            config = Config(**data["config"])
        if "num_blocks" in data:
            blocks = [None] * data["num_blocks"]
        for b in data["blocks"]:
            blocks[b["id"]] = BlockView.from_dict(b)
        for r in data["requests"]:
            if r["id"] == len(requests):
                requests.append(None)
            requests[r["id"]] = RequestView.from_dict(r, histories[r["id"]])
        yield _frame(data, config, tuple(requests), tuple(blocks))
