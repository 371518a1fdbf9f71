"""A run as JSON: the config it started with and the changes made mid-run, every frame, and a summary of each
request. Traces load back into a FrameStore, so the UI can open a recorded run without re-running it.

`config` is the first step's config (frame 0's); `config_changes` lists each mid-run change as
{"after_step": k, "changes": {field: value}} (a cost model or adaptive controller as its fields, or null):
it applies from step k + 1, as each frame's own `config` shows. `scheduler` names the kind that decided the run
when it is not the factory's default (a trace without it was decided by the default, as every older one was);
`decided_by` records that scheduler's kind and the system and version it mirrored (scheduler/contract.py), read
back onto every frame (an older trace without it is taken as decided by its kind as declared now). `ended` says why
the run stopped ("finished", "stalled", "max_steps" or "steps") and each request summary's `sampling` what decides
its tokens on the fake model and its end (ignore_eos, stop_token_ids, min_tokens): the referee replays a run by
them (engine/check/referee.py); an older trace without them is taken as finished, each request at the defaults.

Version 4 writes a frame's scheduler panels in one slot, `panels`, by their declared ids, and a scheduler's declared
queues beyond waiting and running, side pools and block copies where it has them (engine/traces/panels.py reads the
panels of older traces, written as `output` and `view`). Version 3 wrote the frame store's own records
(engine/traces/records.py): per step the requests and blocks that changed (a request that only advanced as its batch
entry says is left out), the queues as diffs, the config only when it changed; reading one hands the records back to
a store. A trace then grows with what happens per step, not with the pool. Version 2 traces (each frame a delta of
every changed request, the queues whole) and version 1 (every block and request of every frame) still load. Either
is checked against the schema (engine/traces/schema.py) before anything is built: a file that does not fit raises
`TraceError`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, is_dataclass
from pathlib import Path

from engine.run.engine import Engine
from engine.run.frame import Frame, TokenHistory, config_to_dict
from engine.run.frame_store import FrameStore
from engine.run.metrics import request_metrics
from engine.run.recipe import RunSpec
from engine.traces.records import READERS, store_data
from engine.traces.schema import TraceError, UnknownScheduler, checked_trace
from i18n import Message
from scheduler import SamplingParams
from scheduler.contract import DecidedBy
from scheduler.factory import DEFAULT_KIND

TRACE_VERSION = 5

__all__ = ["TRACE_VERSION", "TraceError", "UnknownScheduler", "load_trace", "read_trace", "request_summaries",
           "trace_dict", "trace_json", "trace_store", "write_trace"]


def request_summaries(engine: Engine, frames: Sequence[Frame] | None = None) -> list[dict]:
    """Each request's prompt, output and ending; its first-token and finish steps as the metrics read them off
    the frames (`frames`: the engine's, already rebuilt, to reuse)."""
    steps = {m.id: m for m in request_metrics(engine.frames if frames is None else frames)}
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
            "sampling": stopping(seq.sampling_params),
            "arrival": seq.arrival,
            "first_token_step": steps[rid].first_token_step if rid in steps else None,
            "finish_step": steps[rid].finish_step if rid in steps else None,
        })
    return summaries


def stopping(params: SamplingParams) -> dict:
    """What of a request's sampling decides its tokens on the fake model and when it ends, beside the max_tokens
    its frames carry: the referee replays a run by it (engine/check/referee.py)."""
    return {"ignore_eos": params.ignore_eos, "stop_token_ids": list(params.stop_token_ids),
            "min_tokens": params.min_tokens}


def ended(engine: Engine) -> str:
    """Why the run stopped where it did, as `Engine.run` says it: "finished" (every request ended), "stalled",
    "max_steps", or "steps" (its caller stopped stepping)."""
    if engine.is_finished:
        return "finished"
    if engine.stalled:
        return "stalled"
    return "max_steps" if engine.step_count >= engine.spec.max_steps else "steps"


def _plain(value):
    return asdict(value) if is_dataclass(value) else value


def config_changes(spec: RunSpec) -> list[dict]:
    """The mid-run changes of a run's recipe as JSON data, in the order they were made (the referee holds a trace's to
    the recipe the server sent)."""
    return [{"after_step": c.step, "changes": {k: _plain(v) for k, v in c.settings.items()}}
            for c in spec.changes if c.kind == "config"]


def trace_dict(engine: Engine, title: str | None = None, frames: Sequence[Frame] | None = None) -> dict:
    """The run as a trace; `frames`: the engine's frames already rebuilt (a comparison keeps them), to reuse for
    the request summaries (the frames themselves are written as the engine's store holds them)."""
    # the kind is written only when it is not the default, as older traces (all of the default's) were written
    kind = {"scheduler": engine.spec.scheduler} if engine.spec.scheduler != DEFAULT_KIND else {}
    decided_by = engine.frames.decided_by
    assert decided_by is not None  # an engine's store is made knowing its scheduler
    return {
        "version": TRACE_VERSION,
        "title": title,
        "runner": engine.runner_kind,
        "seed": engine.spec.seed,
        "overlap": engine.overlap,
        "ended": ended(engine),
        **kind,
        "decided_by": decided_by.to_dict(),
        "config": config_to_dict(engine.frames[0].config),  # the first config; the frames carry the rest
        "config_changes": config_changes(engine.spec),
        "requests": request_summaries(engine, frames),
        "frames": store_data(engine.frames),
    }


def trace_json(engine: Engine, title: str | None = None) -> str:
    return json.dumps(trace_dict(engine, title), separators=(",", ":"))


def write_trace(engine: Engine, path: str | Path, title: str | None = None):
    Path(path).write_text(trace_json(engine, title))


def read_trace(data: bytes | str) -> tuple[FrameStore, dict]:
    """The frames of a trace's JSON text, and the trace's other fields (title, requests...); raises TraceError
    (a ValueError) naming what does not fit the schema."""
    trace = checked_trace(data)
    return trace_store(trace), trace


def trace_store(trace: dict) -> FrameStore:
    """The frames of a trace `checked_trace` gave; raises TraceError naming a frame that does not read."""
    histories = [TokenHistory(r["prompt_token_ids"] + r["output_token_ids"], pieces=r["pieces"])
                 for r in trace["requests"]]
    store = FrameStore(decided_by=DecidedBy(**trace["decided_by"]))
    try:
        READERS[trace["version"]](store, trace["frames"], histories)
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as e:
        raise TraceError(f"frames[{len(store)}]", Message("trace.unreadable_frame", detail=repr(e))) from None
    return store


def load_trace(path: str | Path) -> tuple[FrameStore, list[dict]]:
    """The frames of a trace file, and its request summaries."""
    store, trace = read_trace(Path(path).read_bytes())
    return store, trace["requests"]
