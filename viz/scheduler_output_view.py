"""The SchedulerOutput panel (scheduler/output.py `OUTPUT_PANEL`) as its renderer draws it
(player/scheduler_output_view.js), for a frame whose scheduler declares one: the free block queue head to tail
(cached-free blocks marked, this step's evictions), the step as vLLM's SchedulerOutput lists it, each request's
num_computed_tokens / num_tokens / num_cached_tokens, and the system's log line with its counters, in the words its
kind declares on the panel (`PanelKind.words`: "log_line", "counters"). Everything comes from what the scheduler
recorded (the frame's panel, its free queue and events, engine/run/frame.py); the browser only draws it.

The system's own texts (the field names of SchedulerOutput, its log line, the counters) stay in English, as it prints
them; what the panel says about them is in the language asked for (`panel.scheduler_output.*`).
"""

from __future__ import annotations

from engine.run.frame import Frame
from i18n import text
from scheduler.factory import scheduler_info
from scheduler.output import OUTPUT_PANEL, SchedulerOutput
from viz.colors import CACHED_FREE_COLOR, FREE_COLOR

QUEUE_ENDS = 24  # a free queue longer than twice this shows its head and its tail, this many blocks each
WORDS = "panel.scheduler_output."  # the panel's own message ids (the player's renderer reads them too)


def scheduler_output(frame: Frame) -> SchedulerOutput | None:
    """The frame's SchedulerOutput panel, or None where its scheduler keeps none."""
    return frame.panel(OUTPUT_PANEL.id)


def kind_words(frame: Frame) -> dict[str, str]:
    """What the frame's scheduler says on the panel in its own terms: its declaration's words, what each is -> its
    message id ({} for a frame not known to be any kind's)."""
    if frame.decided_by is None:
        return {}
    declared = [panel for panel in scheduler_info(frame.decided_by.kind).panels if panel.id == OUTPUT_PANEL.id]
    return dict(declared[0].words) if declared else {}


def free_queue(frame: Frame) -> list:
    """The free block queue after the step, head first: [block id, 1 if it is still in the prefix cache], with None
    for the blocks elided from the middle of a long queue."""
    entries = [[b, int(frame.blocks[b].hash is not None)] for b in frame.free_block_ids]
    if len(entries) > 2 * QUEUE_ENDS:
        entries = [*entries[:QUEUE_ENDS], None, *entries[-QUEUE_ENDS:]]
    return entries


def _ids(ids) -> str:
    return "[" + ", ".join(map(str, ids)) + "]"


def _set(ids) -> str:
    return "{" + ", ".join(map(str, ids)) + "}" if ids else "set()"


def output_lines(frame: Frame) -> list[list[str]]:
    """The SchedulerOutput's fields as [name, value] lines, vLLM's names and Python's way of writing them. Tokens and
    drafts come from the batch (vLLM's num_scheduled_tokens order); NewRequestData and CachedRequestData carry the
    tokens each request had computed when it was scheduled, prefix hits included."""
    out, batch = scheduler_output(frame), frame.batch
    computed = dict(zip(batch.seq_ids, batch.num_computed or (0,) * len(batch.seq_ids), strict=True))
    blocks = dict(out.new_block_ids)
    new = ", ".join(f"NewRequestData(req_id={rid}, num_computed_tokens={computed[rid]}, block_ids={_ids(blocks[rid])})"
                    for rid in out.new_req_ids)
    cached = [*out.resumed_req_ids, *out.running_req_ids]
    drafts = {rid: n for rid, n in zip(batch.seq_ids, batch.num_drafts, strict=True) if n} if batch.num_drafts else {}
    cached_data = (f"CachedRequestData(req_ids={_ids(cached)}, resumed_req_ids={_set(out.resumed_req_ids)}, "
                   f"new_block_ids={_ids(_ids(blocks[rid]) for rid in cached)}, "
                   f"num_computed_tokens={_ids(computed[rid] for rid in cached)})")
    return [
        ["scheduled_new_reqs", f"[{new}]"],
        ["scheduled_cached_reqs", cached_data],
        ["num_scheduled_tokens", "{" + ", ".join(f"{rid}: {n}" for rid, n in zip(batch.seq_ids, batch.num_tokens,
                                                                               strict=True)) + "}"],
        ["total_num_scheduled_tokens", str(batch.total_tokens)],
        ["scheduled_spec_decode_tokens", "{" + ", ".join(f"{rid}: [{n} drafts]" for rid, n in drafts.items()) + "}"],
        ["preempted_req_ids", _set(out.preempted_req_ids)],
        ["finished_req_ids", _set(out.finished_req_ids)],
    ]


def counter_rows(frame: Frame) -> list[list[int | None]]:
    """[request, num_computed_tokens, num_tokens, num_cached_tokens, tokens scheduled this step or None] of each
    request waiting or running when schedule() returned, as vLLM's Request counts them then."""
    scheduled = dict(zip(frame.batch.seq_ids, frame.batch.num_tokens, strict=True))
    return [[r.req_id, r.num_computed_tokens, r.num_tokens, r.num_cached_tokens, scheduled.get(r.req_id)]
            for r in scheduler_output(frame).requests]


def log_line(frame: Frame, before: Frame | None, lang: str) -> str:
    """The system's per-interval log line, for this step on the simulated clock ("" where its kind declares none):
    throughput over the step's time (prompt tokens counted when a request's first token comes, as vLLM counts them),
    the queues and the KV pool after the step, the prefix-cache hit rate of requests never preempted so far."""
    message = kind_words(frame).get("log_line")
    if message is None:
        return ""
    out, m = scheduler_output(frame), frame.metrics
    seconds = frame.sim_time_s - (before.sim_time_s if before is not None else 0.0)
    prompt = generation = 0
    for rid in frame.batch.seq_ids:
        now = frame.requests[rid]
        was = before.requests[rid].num_output_tokens if before is not None and rid < len(before.requests) else 0
        generation += now.num_output_tokens - was
        if not was and now.num_output_tokens:
            prompt += now.num_prompt_tokens
    usage = 1 - m.num_free_blocks / frame.config.num_kvcache_blocks
    hit_rate = out.prefix_cache_hits / out.prefix_cache_queries if out.prefix_cache_queries else 0.0
    per_s = (lambda n: n / seconds) if seconds > 0 else (lambda n: 0.0)
    return text(lang, message, prompt=f"{per_s(prompt):.1f}", generation=f"{per_s(generation):.1f}",
                running=m.num_running, waiting=m.num_waiting, usage=f"{usage * 100:.1f}",
                hit_rate=f"{hit_rate * 100:.1f}")


def counters_line(frame: Frame, lang: str) -> str:
    """The system's counters the log line leaves out ("" where its kind declares none): preemptions and the prefix
    cache's tokens."""
    message = kind_words(frame).get("counters")
    if message is None:
        return ""
    out = scheduler_output(frame)
    return text(lang, message, preemptions=frame.metrics.num_preemptions, queries=out.prefix_cache_queries,
                hits=out.prefix_cache_hits)


def scheduler_output_view(frame: Frame, before: Frame | None, lang: str) -> dict:
    """What the renderer of the SchedulerOutput panel (player/scheduler_output_view.js) draws of `frame`, which has
    one."""
    evicted = [[b, e.seq_id] for e in frame.events_of("evicted") for b in e.block_ids]
    out = scheduler_output(frame)
    return {"queue": free_queue(frame), "queue_len": frame.metrics.num_free_blocks, "evicted": evicted,
            "output": output_lines(frame), "requests": counter_rows(frame), "log": log_line(frame, before, lang),
            "counters": counters_line(frame, lang), "colors": [FREE_COLOR, CACHED_FREE_COLOR],
            "preempted_text": text(lang, WORDS + "preempted_lookups", hits=out.preempted_hits,
                                   queries=out.preempted_queries) if out.preempted_queries else "",
            "evicted_text": text(lang, WORDS + "evicted", ids=", ".join(
                text(lang, WORDS + "evicted_one", block=b, id=rid) for b, rid in evicted)) if evicted else ""}
