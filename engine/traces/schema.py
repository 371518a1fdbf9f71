"""The schema a trace file must fit before any frame is built from it: sizes, types, ids in range, steps in
order. Every problem raises `TraceError` naming where it is (`frames[12].batch.seq_ids`) and what fits, so an
uploaded file either opens and steps through without error or is refused with that sentence.
"""

from __future__ import annotations

import json
import math
from dataclasses import fields
from typing import NoReturn

from engine.run.frame import StepMetrics
from engine.run.frame_store import QueueDiff, advanced_by_batch
from engine.run.limits import CONFIG_BOUNDS, MAX_TRACE_BYTES, MAX_TRACE_FRAMES, within
from engine.run.recipe import RUN_BOUNDS
from engine.traces.panels import LEGACY_VIEW, panels_before_shapes, panels_from_legacy
from i18n import DEFAULT, Message, MessageError, text
from scheduler import Config, ConfigError
from scheduler.contract import QUEUES
from scheduler.events import EVENT_TYPES
from scheduler.factory import DEFAULT_KIND, SCHEDULERS, SETTINGS, is_kind, panel_kind, scheduler_info
from scheduler.output import OUTPUT_PANEL, SchedulerOutput
from scheduler.panel_shapes import Shape
from scheduler.sequence import PLACEHOLDER

DECIDED_BY = ("kind", "system", "version")
ENDINGS = ("finished", "stalled", "max_steps", "steps")  # why a run stopped (engine/traces/trace.py `ended`)
SAMPLING = ("ignore_eos", "stop_token_ids", "min_tokens")
BATCH_KINDS = ("prefill", "decode", "mixed", "idle")
STATUSES = ("waiting", "running", "finished", "aborted")
MAX_REQUESTS = 2000
MAX_TOKENS = 16_384  # prompt + output of one request
MAX_COUNT = 2**31 - 1  # any other count or step number


class TraceError(MessageError):
    """A trace file that does not fit the schema; the message says where and what would fit."""

    def __init__(self, where: str, problem: str):
        super().__init__("error.trace", where=where, problem=problem)


class UnknownScheduler(TraceError):
    """A trace decided by a scheduler this process does not have (one loaded from a file elsewhere)."""


def _fail(where: str, problem: str, **values) -> NoReturn:
    """Refuse the file at `where`: the message `problem` filled from `values`."""
    raise TraceError(where, Message(problem, **values))


def _is_int(value, low: int = 0, high: float = MAX_COUNT) -> bool:
    return type(value) is int and low <= value <= high


def _int(where: str, value, low: int = 0, high: float = MAX_COUNT) -> int:
    if not _is_int(value, low, high):
        _fail(where, "trace.whole_number", value=_shown(value), low=low, high=high)
    return value


def _number(where: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        _fail(where, "trace.number", value=_shown(value))
    return value


def _of(where: str, value, kind: type, optional: bool = False):
    if value is None and optional:
        return value
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        _fail(where, "trace.type_or_null" if optional else "trace.type", value=_shown(value), kind=kind.__name__)
    return value


def _ints(where: str, value, low: int, high: float, most: float) -> list:
    _of(where, value, list)
    if len(value) > most:
        _fail(where, "trace.too_many", n=len(value), most=most)
    if not all(_is_int(v, low, high) for v in value):
        _fail(where, "trace.whole_numbers", low=low, high=high)
    return value


def _is_pair(value) -> bool:
    """A pair of whole numbers (an event's block pairs: V0's swaps, GPU block and CPU block)."""
    return isinstance(value, list) and len(value) == 2 and all(_is_int(v) for v in value)


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _keys(where: str, value, required: tuple[str, ...]) -> dict:
    _of(where, value, dict)
    if missing := [k for k in required if k not in value]:
        _fail(where, "trace.misses", keys=", ".join(missing))
    return value


def _decided_by(value, kind: str) -> dict:
    """The trace's record of the scheduler that decided it; an older trace's: its kind as declared now."""
    if value is None:
        return scheduler_info(kind).decided_by.to_dict()
    _keys("decided_by", value, DECIDED_BY)
    for key in DECIDED_BY:
        if len(_of(f"decided_by.{key}", value[key], str)) > 40:
            _fail(f"decided_by.{key}", "trace.too_long", value=_shown(value[key]), most=40)
    if value["kind"] != kind:
        _fail("decided_by.kind", "trace.decided_by", value=_shown(value["kind"]), kind=kind)
    return {key: value[key] for key in DECIDED_BY}


def checked_trace(data: bytes | str) -> dict:
    """The trace's JSON, parsed and checked; raises TraceError."""
    if len(data) > MAX_TRACE_BYTES:
        _fail("file", "trace.too_big", mb=f"{len(data) / 2**20:.1f}", most=MAX_TRACE_BYTES // 2**20)
    try:
        trace = json.loads(data)
    except RecursionError:
        raise TraceError("file", Message("trace.too_deep")) from None
    except UnicodeDecodeError as e:
        raise TraceError("file", Message("trace.not_utf8", byte=e.start)) from None
    except json.JSONDecodeError as e:
        raise TraceError("file", Message("trace.not_json", line=e.lineno, column=e.colno)) from None
    _keys("trace", trace, ("requests", "frames"))
    version = trace.get("version", 1)
    if version not in (1, 2, 3, 4, 5):
        _fail("version", "trace.version", value=_shown(version))
    trace["version"] = version
    _of("title", trace.get("title"), str, optional=True)
    if trace.get("ended", ENDINGS[0]) not in ENDINGS:
        _fail("ended", "trace.one_of", value=_shown(trace["ended"]), choices=", ".join(ENDINGS))
    trace["scheduler"] = trace.get("scheduler", DEFAULT_KIND)  # older traces were all the default's
    if not is_kind(trace["scheduler"]):  # the registry as it is now: a kind loaded from a file or declared
        raise UnknownScheduler("scheduler", Message("trace.scheduler", value=_shown(trace["scheduler"]),
                                                    kinds=", ".join(SCHEDULERS)))
    trace["decided_by"] = _decided_by(trace.get("decided_by"), trace["scheduler"])
    histories = _check_requests(_of("requests", trace["requests"], list))
    frames = _of("frames", trace["frames"], list)
    if not 1 <= len(frames) <= MAX_TRACE_FRAMES:
        _fail("frames", "trace.frames", n=len(frames), most=MAX_TRACE_FRAMES)
    if version < 4:  # their panels under keys of their own
        frames = trace["frames"] = [_legacy_panels(f"frames[{k}]", f) for k, f in enumerate(frames)]
    if version < 5:  # no panel had a generic shape yet
        frames = trace["frames"] = [panels_before_shapes(f) for f in frames]
    _FrameChecker(histories, version).check_all(frames)
    return trace


def _legacy_panels(where: str, frame):
    """An older frame with its panels moved into their one slot (engine/traces/panels.py); a view must say its kind."""
    if not isinstance(frame, dict):
        return frame
    if frame.get(LEGACY_VIEW) is not None:
        _of(f"{where}.{LEGACY_VIEW}.kind", _keys(f"{where}.{LEGACY_VIEW}", frame[LEGACY_VIEW], ("kind",))["kind"], str)
    return panels_from_legacy(frame)


def _check_requests(requests: list) -> list[int]:
    """Each request summary's token count (its history's length)."""
    if len(requests) > MAX_REQUESTS:
        _fail("requests", "trace.requests", n=len(requests), most=MAX_REQUESTS)
    lengths = []
    for i, r in enumerate(requests):
        where = f"requests[{i}]"
        _keys(where, r, ("id", "prompt_token_ids", "output_token_ids", "pieces"))
        if r["id"] != i:
            _fail(f"{where}.id", "trace.request_ids", value=_shown(r["id"]))
        tokens = [*_ints(f"{where}.prompt_token_ids", r["prompt_token_ids"], PLACEHOLDER, MAX_COUNT, MAX_TOKENS),
                  *_ints(f"{where}.output_token_ids", r["output_token_ids"], PLACEHOLDER, MAX_COUNT, MAX_TOKENS)]
        pieces = _of(f"{where}.pieces", r["pieces"], list, optional=True)
        if pieces is not None and (len(pieces) > len(tokens) or not all(isinstance(p, str) for p in pieces)):
            _fail(f"{where}.pieces", "trace.pieces")
        for key in ("prompt", "output_text", "finish_reason"):
            _of(f"{where}.{key}", r.get(key), str, optional=True)
        if r.get("sampling") is not None:
            _check_sampling(f"{where}.sampling", r["sampling"])
        lengths.append(len(tokens))
    return lengths


def _check_sampling(where: str, sampling):
    """A request's sampling as a trace records it (engine/traces/trace.py `stopping`)."""
    _keys(where, sampling, SAMPLING)
    _of(f"{where}.ignore_eos", sampling["ignore_eos"], bool)
    _ints(f"{where}.stop_token_ids", sampling["stop_token_ids"], -MAX_COUNT, MAX_COUNT,
          RUN_BOUNDS["stop_token_ids"][1])
    _int(f"{where}.min_tokens", sampling["min_tokens"], 0, RUN_BOUNDS["min_tokens"][1])


class _FrameChecker:
    """Checks frames in order, tracking what is known so far: requests arrived, pool size, config; for a version 3
    trace (the frame store's records) also the queues and each request's token counts, which its frames give as
    changes."""

    def __init__(self, histories: list[int], version: int):
        self.histories, self.full, self.records = histories, version == 1, version >= 3
        self.num_requests = self.num_blocks = 0
        self.config: Config | None = None
        self.queues: dict[str, tuple] = {"waiting": (), "running": ()}
        self.counts: dict[int, tuple[int, int]] = {}  # request id -> (num_tokens, num_computed_tokens)

    def check_all(self, frames: list):
        for k, frame in enumerate(frames):
            self.check(f"frames[{k}]", k, frame)

    def check(self, where: str, k: int, frame):
        required = ("step", "sim_time_s", "wall_schedule_s", "wall_model_s", "batch", "events", "metrics",
                    "requests", "blocks", *(() if self.records else ("waiting", "running")))
        _keys(where, frame, (*required, "config") if self.full or k == 0 else required)
        if frame["step"] != k:
            _fail(f"{where}.step", "trace.steps", value=_shown(frame["step"]), k=k)
        for key in ("sim_time_s", "wall_schedule_s", "wall_model_s"):
            _number(f"{where}.{key}", frame[key])
        if "config" in frame:
            self.config = self.check_config(f"{where}.config", frame["config"])
        self.check_blocks(where, frame)
        recorded = self.check_requests(where, frame["requests"])
        self.check_batch(f"{where}.batch", frame["batch"], recorded)
        for queue in ("waiting", "running"):
            if not self.records:
                _ints(f"{where}.{queue}", frame[queue], 0, self.num_requests - 1, self.num_requests)
            elif queue in frame:
                self.check_queue_diff(f"{where}.{queue}", queue, frame[queue])
        self.check_events(f"{where}.events", frame["events"])
        metrics = _keys(f"{where}.metrics", frame["metrics"], StepMetrics._fields)
        for key in StepMetrics._fields:
            _number(f"{where}.metrics.{key}", metrics[key])
        if frame.get("timing") is not None:
            self.check_timing(f"{where}.timing", frame["timing"])
        self.check_panels(f"{where}.panels", frame.get("panels", {}))
        self.check_declared(where, frame)

    def check_panels(self, where: str, panels):
        """The scheduler's panels by id: vLLM's SchedulerOutput checked field by field, any other drawn as it is
        (an object)."""
        for panel_id, data in _of(where, panels, dict).items():
            if len(panel_id) > 40:
                _fail(where, "trace.too_long", value=_shown(panel_id), most=40)
            if panel_id == OUTPUT_PANEL.id:
                self.check_output(f"{where}.{panel_id}", data)
            elif (shape := panel_kind(panel_id).shape) is not None:
                self.check_shaped(f"{where}.{panel_id}", shape, data)
            else:
                _of(f"{where}.{panel_id}", data, dict)

    def check_shaped(self, where: str, shape: Shape, data):
        """A panel of a generic shape (scheduler/panel_shapes.py): its shape's fields, and words the catalogues
        hold, each filled by the values it carries."""
        try:
            panel = shape.from_dict(_of(where, data, dict))
        except (KeyError, TypeError, ValueError):
            _fail(where, "trace.panel_shape", shape=shape.SHAPE)
        for said in panel.words():
            try:
                text(DEFAULT, said.key, **said.values)
            except (KeyError, IndexError, ValueError, AttributeError):
                _fail(where, "trace.panel_words", key=_shown(said.key))

    def check_declared(self, where: str, frame: dict):
        """What a scheduler declares beyond the queues and the pool every one has: its other queues (a version 4
        record's changes, else whole), its side pools (a holder per unit) and the step's block copies."""
        for name, queue in _of(f"{where}.queues", frame.get("queues", {}), dict).items():
            at = f"{where}.queues.{name}"
            if name in QUEUES or len(name) > 40:
                _fail(at, "trace.queue_name", value=_shown(name))
            self.queues.setdefault(name, ())
            if self.records:
                self.check_queue_diff(at, name, queue)
            else:
                _ints(at, queue, 0, self.num_requests - 1, self.num_requests)
        for name, units in _of(f"{where}.side_pools", frame.get("side_pools", {}), dict).items():
            at = f"{where}.side_pools.{name}"
            if len(_of(at, units, list)) > CONFIG_BOUNDS["num_kvcache_blocks"][1] or len(name) > 40:
                _fail(at, "trace.too_many", n=len(units), most=CONFIG_BOUNDS["num_kvcache_blocks"][1])
            if not all(u is None or _is_int(u, 0, self.num_requests - 1) for u in units):
                _fail(at, "trace.whole_numbers", low=0, high=self.num_requests - 1)
        for i, copy in enumerate(_of(f"{where}.block_copies", frame.get("block_copies", []), list)):
            at = f"{where}.block_copies[{i}]"
            if not (isinstance(copy, list) and len(copy) == 4 and all(isinstance(copy[j], str) and len(copy[j]) <= 40
                                                                         for j in (0, 2))):
                _fail(at, "trace.block_copy")
            _int(f"{at}[1]", copy[1])
            _int(f"{at}[3]", copy[3])

    def check_output(self, where: str, output):
        """The vLLM twin's SchedulerOutput (scheduler/output.py): request ids, block ids and counters."""
        ids, most = self.num_requests - 1, self.num_requests
        _keys(where, output, tuple(f.name for f in fields(SchedulerOutput)))
        for name in ("new_req_ids", "resumed_req_ids", "running_req_ids", "preempted_req_ids", "finished_req_ids"):
            _ints(f"{where}.{name}", output[name], 0, ids, most)
        for i, entry in enumerate(_of(f"{where}.new_block_ids", output["new_block_ids"], list)):
            at = f"{where}.new_block_ids[{i}]"
            if not isinstance(entry, list) or len(entry) != 2:
                _fail(at, "trace.pair")
            _int(f"{at}[0]", entry[0], 0, ids)
            _ints(f"{at}[1]", entry[1], 0, self.num_blocks - 1, self.num_blocks)
        for i, counters in enumerate(_of(f"{where}.requests", output["requests"], list)):
            at = f"{where}.requests[{i}]"
            if not isinstance(counters, list) or len(counters) != 4:
                _fail(at, "trace.counters")
            _int(f"{at}[0]", counters[0], 0, ids)
            for j, value in enumerate(counters[1:], start=1):
                _int(f"{at}[{j}]", value, -1)
        for name in ("prefix_cache_queries", "prefix_cache_hits", "preempted_queries", "preempted_hits"):
            _int(f"{where}.{name}", output[name])

    def check_config(self, where: str, config) -> Config:
        _of(where, config, dict)
        for key, (low, high) in CONFIG_BOUNDS.items():
            if key in config and not within(key, config[key]):
                _fail(f"{where}.{key}", "trace.whole_number", value=_shown(config[key]), low=low, high=high)
        try:
            return Config(**config)
        except ConfigError as e:
            _fail(f"{where}.{e.field}", "error.value_fix", value=_shown(e.value), fix=e.fix)
        except TypeError:  # a key Config does not have
            _fail(where, "trace.config_keys", keys=", ".join(SETTINGS))

    def check_blocks(self, where: str, frame: dict):
        blocks = _of(f"{where}.blocks", frame["blocks"], list)
        if self.full or "num_blocks" in frame:
            size = len(blocks) if self.full else frame["num_blocks"]
            self.num_blocks = _int(f"{where}.num_blocks", size, 1, CONFIG_BOUNDS["num_kvcache_blocks"][1])
            if [b.get("id") if isinstance(b, dict) else None for b in blocks] != list(range(size)):
                _fail(f"{where}.blocks", "trace.blocks", last=size - 1)
        elif self.num_blocks == 0:
            _fail(f"{where}.num_blocks", "trace.num_blocks")
        for i, b in enumerate(blocks):
            at = f"{where}.blocks[{i}]"
            _keys(at, b, ("id", "ref_count", "hash", "token_ids", "free_rank"))
            _int(f"{at}.id", b["id"], 0, self.num_blocks - 1)
            _int(f"{at}.ref_count", b["ref_count"], 0, MAX_REQUESTS)
            _int(f"{at}.free_rank", b["free_rank"], -MAX_COUNT)
            if b["hash"] is not None:
                _int(f"{at}.hash", b["hash"], -(2**63), 2**64)
            _ints(f"{at}.token_ids", b["token_ids"], PLACEHOLDER, MAX_COUNT, CONFIG_BOUNDS["kvcache_block_size"][1])

    def check_requests(self, where: str, requests) -> set[int]:
        """The ids of the requests the frame lists."""
        _of(f"{where}.requests", requests, list)
        recorded = set()
        if self.full:
            self.num_requests = 0
        for i, r in enumerate(requests):
            at = f"{where}.requests[{i}]"
            _keys(at, r, ("id", "status", "num_tokens", "num_prompt_tokens", "num_computed_tokens", "block_table",
                          "priority", "arrival", "num_preemptions", "finish_reason", "max_tokens"))
            rid = _int(f"{at}.id", r["id"], 0, min(self.num_requests, len(self.histories) - 1))
            self.num_requests = max(self.num_requests, rid + 1)
            if self.full and rid != i:
                _fail(f"{at}.id", "trace.frame_request_ids", value=rid)
            if r["status"] not in STATUSES:
                _fail(f"{at}.status", "trace.one_of", value=_shown(r["status"]), choices=", ".join(STATUSES))
            total = _int(f"{at}.num_tokens", r["num_tokens"], 0, self.histories[rid])
            _int(f"{at}.num_prompt_tokens", r["num_prompt_tokens"], 0, total)
            _int(f"{at}.num_computed_tokens", r["num_computed_tokens"], 0, total)
            _ints(f"{at}.block_table", r["block_table"], 0, self.num_blocks - 1, self.num_blocks)
            _int(f"{at}.priority", r["priority"], -MAX_COUNT)
            for key in ("arrival", "num_preemptions", "max_tokens"):
                _int(f"{at}.{key}", r[key])
            _of(f"{at}.finish_reason", r["finish_reason"], str, optional=True)
            self.counts[rid] = total, r["num_computed_tokens"]
            recorded.add(rid)
        return recorded

    def check_batch(self, where: str, batch, recorded: set[int]):
        _keys(where, batch, ("kind", "seq_ids", "num_tokens"))
        if batch["kind"] not in BATCH_KINDS:
            _fail(f"{where}.kind", "trace.one_of", value=_shown(batch["kind"]), choices=", ".join(BATCH_KINDS))
        ids = _ints(f"{where}.seq_ids", batch["seq_ids"], 0, self.num_requests - 1, self.num_requests)
        counts = _ints(f"{where}.num_tokens", batch["num_tokens"], 0, MAX_TOKENS, self.num_requests)
        if len(ids) != len(counts):
            _fail(where, "trace.batch_lengths")
        for key in ("num_computed", "num_drafts"):  # absent in traces written before the stage's budget bar
            if key in batch and len(_ints(f"{where}.{key}", batch[key], 0, MAX_TOKENS, self.num_requests)) != len(ids):
                _fail(f"{where}.{key}", "trace.batch_field_length", key=key)
        if self.records:
            self.check_batch_rule(f"{where}.num_tokens", ids, counts, recorded)

    def check_batch_rule(self, where: str, ids: list, counts: list, recorded: set[int]):
        """A version 3 frame leaves out the requests of its batch that advanced as their entry says (the frame
        store's batch rule): the counts the rule gives them must fit their tokens, as a listed request's do."""
        for i, (rid, n) in enumerate(zip(ids, counts, strict=True)):
            if rid in recorded:
                continue
            num_tokens, computed = self.counts[rid] = advanced_by_batch(*self.counts[rid], n)
            if num_tokens > self.histories[rid] or computed > num_tokens:
                _fail(f"{where}[{i}]", "trace.batch_rule", rid=rid, n=num_tokens, computed=computed,
                      most=self.histories[rid])

    def check_queue_diff(self, where: str, name: str, diff):
        """A version 3 frame's queue that changed: [start, keep, middle, tail] against the frame before's."""
        old = self.queues[name]
        if not isinstance(diff, list) or len(diff) != 4:
            _fail(where, "trace.queue_diff")
        start = _int(f"{where}[0]", diff[0], 0, len(old))
        keep = _int(f"{where}[1]", diff[1], 0, len(old) - start)
        middle = _ints(f"{where}[2]", diff[2], 0, self.num_requests - 1, self.num_requests)
        tail = _int(f"{where}[3]", diff[3], 0, len(old) - start - keep)
        queue = QueueDiff(start, keep, tuple(middle), tail).apply(old)
        if len(queue) > self.num_requests:
            _fail(where, "trace.too_many", n=len(queue), most=self.num_requests)
        self.queues[name] = queue

    def check_events(self, where: str, events):
        for i, e in enumerate(_of(where, events, list)):
            at = f"{where}[{i}]"
            _keys(at, e, ("kind", "seq_id"))
            if type(e["kind"]) is not str or e["kind"] not in EVENT_TYPES:
                _fail(f"{at}.kind", "trace.one_of", value=_shown(e["kind"]), choices=", ".join(EVENT_TYPES))
            step_wide = any(cls.step_wide for cls in EVENT_TYPES[e["kind"]])  # concerns no one request: seq_id -1
            _int(f"{at}.seq_id", e["seq_id"], -1 if step_wide else 0, -1 if step_wide else self.num_requests - 1)
            for key, value in e.items():
                if not (value is None or isinstance(value, str | int | float) and len(str(value)) <= 1000
                        or isinstance(value, list) and all(_is_int(v, PLACEHOLDER) or _is_pair(v) for v in value)):
                    _fail(f"{at}.{key}", "trace.event_value", value=_shown(value))

    def check_timing(self, where: str, timing):
        _keys(where, timing, ("step", "schedule", "model", "postprocess", "overlapped"))
        _int(f"{where}.step", timing["step"])
        for key in ("schedule", "model", "postprocess"):
            interval = _of(f"{where}.{key}", timing[key], list)
            if len(interval) != 2:
                _fail(f"{where}.{key}", "trace.interval")
            for value in interval:
                _number(f"{where}.{key}", value)
        _of(f"{where}.overlapped", timing["overlapped"], bool)
