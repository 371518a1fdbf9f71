"""A run as JSON: the config it started with and the changes made mid-run, every frame, and a summary of each
request. Traces load back into a FrameStore, so the UI can open a recorded run without re-running it.

`config` is the first step's config (frame 0's); `config_changes` lists each mid-run change as
{"after_step": k, "changes": {field: value}} (a cost model or adaptive controller as its fields, or null):
it applies from step k + 1, as each frame's own `config` shows."""

from __future__ import annotations

import json
from dataclasses import asdict, is_dataclass
from pathlib import Path

from engine.engine import Engine
from engine.frame import Frame, TokenHistory, config_to_dict
from engine.frame_store import FrameStore

TRACE_VERSION = 1


def request_summaries(engine: Engine) -> list[dict]:
    summaries = []
    for rid, record in enumerate(engine.requests):
        seq, history = record.seq, record.history
        pieces = history.pieces(len(seq.token_ids))
        summaries.append({
            "id": rid,
            "prompt": record.request.prompt,
            "prompt_token_ids": seq.token_ids[:seq.num_prompt_tokens],
            "output_token_ids": seq.completion_token_ids,
            "output_text": None if pieces is None else "".join(pieces[seq.num_prompt_tokens:]),
            "pieces": None if pieces is None else list(pieces),
            "finish_reason": seq.finish_reason,
            "arrival": seq.arrival,
            "first_token_step": record.first_token_step,
            "finish_step": record.finish_step,
        })
    return summaries


def _plain(value):
    return asdict(value) if is_dataclass(value) else value


def config_changes(engine: Engine) -> list[dict]:
    """The run's mid-run changes as JSON data, in the order they were made."""
    return [{"after_step": step, "changes": {k: _plain(v) for k, v in changes.items()}}
            for step, changes in engine.config_changes]


def trace_dict(engine: Engine, title: str | None = None) -> dict:
    return {
        "version": TRACE_VERSION,
        "title": title,
        "runner": engine.runner_kind,
        "seed": engine.seed,
        "overlap": engine.overlap,
        "config": config_to_dict(engine.frames[0].config),  # the first config; the frames carry the rest
        "config_changes": config_changes(engine),
        "requests": request_summaries(engine),
        "frames": [frame.to_dict(tokens=False) for frame in engine.frames],
    }


def write_trace(engine: Engine, path: str | Path, title: str | None = None):
    Path(path).write_text(json.dumps(trace_dict(engine, title)))


def load_trace(path: str | Path) -> tuple[FrameStore, list[dict]]:
    """The frames of a trace file, and its request summaries."""
    data = json.loads(Path(path).read_text())
    histories = [TokenHistory(r["prompt_token_ids"] + r["output_token_ids"], pieces=r["pieces"])
                 for r in data["requests"]]
    store = FrameStore()
    for frame in data["frames"]:
        store.append_frame(Frame.from_dict(frame, histories))
    return store, data["requests"]
