"""What happened in a step and why, in plain sentences built from the step's events.

A step runs from the frame before (`before`) to its own frame, and the picture shows the frame after the step.
Every number that changes during the step says which moment it belongs to: "at the start of this step: 1
block free; after it: 0". Given the frame before, the narration also tells who was running but sat the step
out, and why, and which request's prompt completed in a last chunk (a step with no event of its own).
"""

from __future__ import annotations

from engine.frame import Frame
from engine.scenario import KeyFrame
from scheduler.events import Event

DOES_NOT_HOLD = "does not hold on this run"

FINISH_WHY = {
    "eos": "it produced the end-of-sequence token",
    "max_tokens": "it reached its max_tokens ({max_tokens})",
    "max_model_len": "it reached max_model_len ({max_model_len} tokens)",
}


def _ids(ids) -> str:
    return ", ".join(map(str, ids))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def step_summary(frame: Frame) -> str:
    batch = frame.batch
    if frame.step == 0:
        return "Nothing has run yet: step to start."
    if batch.kind == "idle":
        return f"Step {frame.step} was idle: no request could run."
    return (f"Step {frame.step} ran a {batch.kind} batch of {_plural(len(batch.seq_ids), 'request')} "
            f"({_plural(batch.total_tokens, 'token')}): {_ids(batch.seq_ids)}.")


def free_at_start(frame: Frame, before: Frame) -> int:
    """Free blocks when the step started: the frame before's, or the whole new pool after a rebuild."""
    rebuilt = frame.events_of("pool_rebuilt")
    return rebuilt[-1].num_blocks if rebuilt else before.metrics.num_free_blocks


def _free_blocks(available: int, frame: Frame, before: Frame | None) -> str:
    """Free blocks when a request's turn came, labelled with the moments they belong to."""
    after = frame.metrics.num_free_blocks
    if before is None:
        return f"{_plural(available, 'block')} free when its turn came in this step; after it: {after}"
    at_start = free_at_start(frame, before)
    if available == at_start:
        return f"at the start of this step: {_plural(available, 'block')} free; after it: {after}"
    return (f"{available} free when its turn came in this step (at the start of this step: {at_start}; "
            f"after it: {after})")


def _blocked(event, frame: Frame, before: Frame | None = None) -> str:
    who = f"Request {event.seq_id} waits"
    if event.reason == "blocks":
        return f"{who}: it needs {_plural(event.needed, 'block')}; {_free_blocks(event.available, frame, before)}."
    if event.reason == "token_budget":
        return (f"{who}: its prefill needs {_plural(event.needed, 'token')} but only {event.available} are left "
                f"in this step's token budget (max_num_batched_tokens={frame.config.max_num_batched_tokens}).")
    if event.reason == "max_num_seqs":
        return f"{who}: the batch is full (max_num_seqs={frame.config.max_num_seqs})."
    return f"{who}: decode-first ran the running requests' decodes this step; prefills wait for a step without them."


def _admitted(event, frame: Frame, before: Frame | None = None) -> str:
    text = f"Request {event.seq_id} was admitted: {_plural(event.num_tokens, 'token')} prefilled this step"
    if event.num_cached_tokens:
        text += f", {event.num_cached_tokens} more reused from the prefix cache"
    if getattr(event, "after_rebuild", False):
        text += " (the KV pool was rebuilt, so its K/V is computed again in the new pool)"
    elif event.recompute:
        text += " (it had been preempted, so its K/V is computed again)"
    return text + "."


def _preempted(event, frame: Frame, before: Frame | None = None) -> str:
    freed = f"blocks {_ids(event.freed_blocks)} freed" if event.freed_blocks else "no blocks freed"
    if event.for_seq_id == event.seq_id:
        return (f"Request {event.seq_id} was preempted: it needed another block and no other request could give "
                f"one up ({freed}); it goes back to waiting and will recompute.")
    return (f"Request {event.seq_id} was preempted ({event.policy} policy) to make room for request "
            f"{event.for_seq_id}: {freed}; it goes back to the waiting queue and will recompute.")


def _arrived(event, frame: Frame, before: Frame | None = None) -> str:
    return (f"Request {event.seq_id} arrived ({_plural(event.prompt_len, 'prompt token')}, priority "
            f"{event.priority}) and joined the waiting queue.")


def _chunk(event, frame: Frame, before: Frame | None = None) -> str:
    end = event.start + event.num_tokens
    return (f"Request {event.seq_id} prefilled a chunk: tokens {event.start}–{end - 1} of {event.total}; "
            f"the rest continues next step.")


def _prefix_hit(event, frame: Frame, before: Frame | None = None) -> str:
    return (f"Request {event.seq_id} found {_plural(len(event.block_ids), 'block')} ({event.num_tokens} tokens) "
            f"in the prefix cache and reuses them: blocks {_ids(event.block_ids)}.")


def _finished(event, frame: Frame, before: Frame | None = None) -> str:
    request = frame.requests[event.seq_id]
    why = FINISH_WHY[event.reason].format(max_tokens=request.max_tokens, max_model_len=frame.config.max_model_len)
    return f"Request {event.seq_id} finished: {why}; its blocks were freed."


def _aborted(event, frame: Frame, before: Frame | None = None) -> str:
    return f"Request {event.seq_id} was aborted: {event.reason}."


def _speculated(event, frame: Frame, before: Frame | None = None) -> str:
    drafted, accepted = len(event.draft_token_ids), event.num_accepted
    return (f"Request {event.seq_id} checked {_plural(drafted, 'draft token')} found by prompt lookup: {accepted} "
            f"accepted, and the model added one of its own ({_plural(accepted + 1, 'new token')} in one step).")


def _finished_late(event, frame: Frame, before: Frame | None = None) -> str:
    return (f"Request {event.seq_id} finished one step late: the end-of-sequence token it wrote in step "
            f"{frame.step - 1} came back only after this step was scheduled, so it was dropped from this batch "
            "and its blocks were freed (its tokens are the same as without overlap).")


def _pool_rebuilt(event, frame: Frame, before: Frame | None = None) -> str:
    text = (f"KV pool rebuilt at step {frame.step} with {_plural(event.num_blocks, 'block')} of {event.block_size} "
            f"tokens (a setting changed after frame {frame.step - 1})")
    running, waiting = event.requeued[:event.num_running], event.requeued[event.num_running:]
    if running:
        who = f"the running request {running[0]}" if len(running) == 1 else f"every running request ({_and(running)})"
        return text + f": {who} recomputes its tokens, queued ahead of the waiting ones; nobody was preempted."
    if waiting:
        return text + ": nothing was running; the waiting requests keep their places."
    return text + "."


def overlap_summary(frame: Frame) -> str | None:
    """How overlapped scheduling shaped this step, or None for a synchronous one."""
    timing = frame.timing
    if timing is None or not timing.overlapped:
        return None
    return (f"Overlapped scheduling: this batch was decided while the model was still computing step "
            f"{frame.step - 1}, from lengths alone (its new tokens were placeholders until they came back).")


def _other(event, frame: Frame, before: Frame | None = None) -> str:
    """An event kind this module does not know yet: still a sentence, never an error."""
    details = ", ".join(f"{k}={v}" for k, v in event.to_dict().items() if k not in ("kind", "seq_id"))
    return f"Request {event.seq_id}: {event.kind.replace('_', ' ')}" + (f" ({details})." if details else ".")


DESCRIBE = {"arrived": _arrived, "admitted": _admitted, "chunk": _chunk, "blocked": _blocked,
            "preempted": _preempted, "prefix_hit": _prefix_hit, "finished": _finished, "aborted": _aborted,
            "speculated": _speculated, "finished_late": _finished_late,
            "pool_rebuilt": _pool_rebuilt}


def describe(event: Event, frame: Frame, before: Frame | None = None) -> str:
    """One sentence for one event of `frame`'s step (`before`: the frame the step started from)."""
    return DESCRIBE.get(event.kind, _other)(event, frame, before)


def _and(items) -> str:
    items = [str(i) for i in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _arrivals(events) -> str:
    """Several requests arriving together, in one sentence."""
    priorities = {e.priority for e in events}
    priority = f", priority {priorities.pop()}" if len(priorities) == 1 else ""
    return (f"Requests {_and(e.seq_id for e in events)} arrived ({_and(e.prompt_len for e in events)} prompt tokens"
            f"{priority}) and joined the waiting queue.")


def _who(ids) -> str:
    ids = list(ids)
    return f"Request {ids[0]} was" if len(ids) == 1 else f"Requests {_and(ids)} were"


def left_out(frame: Frame, before: Frame) -> str | None:
    """Who was running when the step started but is not in its batch (preempted and late-finished requests
    are told by their own events), and why."""
    gone = {e.seq_id for e in frame.events if e.kind in ("preempted", "finished_late")}
    paused = sorted(set(before.running) - set(frame.batch.seq_ids) - gone)
    if not paused or frame.batch.kind == "idle":
        return None
    config, who = frame.config, _who(paused)
    if frame.batch.kind == "prefill":
        text = (f"{who} running but sat this step out: a step that admits new requests carries only prefills (as in "
                f"nano-vllm), so their decodes pause for it.")
        if len(frame.running) > config.max_num_seqs:
            text += (f" max_num_seqs={config.max_num_seqs} counts only this prefill batch, so "
                     f"{len(frame.running)} requests are running after it; decode steps take "
                     f"{config.max_num_seqs} at a time.")
        return text
    late = len(frame.events_of("finished_late"))
    if len(frame.batch.seq_ids) + late >= config.max_num_seqs:
        return (f"{who} running but not in this batch: a batch holds at most max_num_seqs={config.max_num_seqs} "
                f"requests, so the running ones take turns.")
    if frame.batch.total_tokens >= config.max_num_batched_tokens:
        return (f"{who} running but not in this batch: the step's token budget (max_num_batched_tokens="
                f"{config.max_num_batched_tokens}) was spent.")
    return f"{who} running but not scheduled in this step."


def prompts_completed(frame: Frame, before: Frame) -> list[str]:
    """Requests whose prompt was completed by a last chunk this step (no event of their own tells it)."""
    admitted = {e.seq_id for e in frame.events_of("admitted")}
    lines = []
    for rid, n in zip(frame.batch.seq_ids, frame.batch.num_tokens, strict=True):
        now = frame.requests[rid]
        if rid in admitted or rid >= len(before.requests) or before.requests[rid].num_output_tokens:
            continue
        if now.num_output_tokens:
            start = now.num_prompt_tokens - n
            lines.append(f"Request {rid} prefilled the last chunk of its prompt (tokens {start}–"
                         f"{now.num_prompt_tokens - 1} of {now.num_prompt_tokens}) and got its first token.")
    return lines


def kv_moments(frame: Frame, before: Frame) -> str:
    """The pool's free blocks at the two moments a step has: its start (the frame before) and its end."""
    return (f"KV blocks free: at the start of this step {free_at_start(frame, before)}, after it "
            f"{frame.metrics.num_free_blocks} (of {len(frame.blocks)}).")


def narrate(frame: Frame, before: Frame | None = None) -> list[str]:
    """The step summary, how overlapped scheduling shaped the step (when it did), then one sentence per event
    in the order things happened (requests that arrived together share one sentence). Given the frame the
    step started from, also the free blocks at its start and end, who sat the step out and why, and which
    prompt a last chunk completed."""
    lines, events = [step_summary(frame)], list(frame.events)
    if before is not None and frame.step > 0:
        lines.append(kv_moments(frame, before))
    if overlapped := overlap_summary(frame):
        lines.append(overlapped)
    while events:
        arrived = 0
        while arrived < len(events) and events[arrived].kind == "arrived":
            arrived += 1
        if arrived > 1:
            lines.append(_arrivals(events[:arrived]))
            events = events[arrived:]
        else:
            lines.append(describe(events.pop(0), frame, before))
    if before is not None and frame.step > 0:
        lines += prompts_completed(frame, before)
        lines += filter(None, [left_out(frame, before)])
    return lines


def key_frame_note(key_frame: KeyFrame, frames) -> tuple[str, bool]:
    """A key frame's note as the stage shows it, and whether it holds on this run: a run branched with other
    settings may no longer show what the note says, and the stage then greys it out with that warning."""
    if key_frame.holds(frames):
        return f"Key frame, step {key_frame.step}. {key_frame.note}", True
    return f"Key frame, step {key_frame.step} ({DOES_NOT_HOLD}): {key_frame.note}", False
