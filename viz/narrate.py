"""What happened in a step and why, in plain sentences built from the step's events, in the language asked for
(the words are in i18n/, under `narrate.*`).

A step runs from the frame before (`before`) to its own frame, and the picture shows the frame after the step.
Every number that changes during the step says which moment it belongs to: "at the start of this step: 1
block free; after it: 0". Given the frame before, the narration also tells who was running but sat the step
out, and why, and which request's prompt completed in a last chunk (a step with no event of its own).
"""

from __future__ import annotations

from engine.run.frame import Frame
from i18n import count, in_lang, join_and, messages, text
from scheduler.contract import DecidedBy
from scheduler.events import Event
from scheduler.factory import DEFAULT_KIND, scheduler_info


def _ids(lang: str, ids) -> str:
    return text(lang, "list.sep").join(map(str, ids))


def batch_kind(lang: str, kind: str) -> str:
    """"prefill", "decode", "mixed" or "idle" in `lang`."""
    return text(lang, f"batch.{kind}")


def step_summary(frame: Frame, lang: str) -> str:
    batch = frame.batch
    if frame.step == 0:
        return text(lang, "narrate.nothing_yet")
    if batch.kind == "idle":
        return text(lang, "narrate.idle", step=frame.step)
    return text(lang, "narrate.ran", step=frame.step, kind=batch_kind(lang, batch.kind),
                requests=count(lang, "n.request", len(batch.seq_ids)),
                tokens=count(lang, "n.token", batch.total_tokens), ids=_ids(lang, batch.seq_ids))


def free_at_start(frame: Frame, before: Frame) -> int:
    """Free blocks when the step started: the frame before's, or the whole new pool after a rebuild."""
    rebuilt = frame.events_of("pool_rebuilt")
    return rebuilt[-1].num_blocks if rebuilt else before.metrics.num_free_blocks


def _free_blocks(lang: str, available: int, frame: Frame, before: Frame | None) -> str:
    """Free blocks when a request's turn came, labelled with the moments they belong to."""
    after = frame.metrics.num_free_blocks
    blocks = count(lang, "n.block", available)
    if before is None:
        return text(lang, "narrate.free.turn_only", blocks=blocks, after=after)
    at_start = free_at_start(frame, before)
    if available == at_start:
        return text(lang, "narrate.free.at_start", blocks=blocks, after=after)
    return text(lang, "narrate.free.turn", available=available, at_start=at_start, after=after)


def _reads(frame: Frame, field: str) -> bool:
    """Whether the scheduler that decided `frame` reads the setting `field` (a knob it may be named by)."""
    return frame.decided_by is not None and scheduler_info(frame.decided_by.kind).reads(field)


def _own(lang: str, frame: Frame, key: str) -> str | None:
    """The id of the words the kind that decided `frame` has of its own for `key` (under its prefix, found through
    its declaration: `SchedulerInfo.message`), or None when it has none."""
    if frame.decided_by is None:
        return None
    own = scheduler_info(frame.decided_by.kind).message(key)
    return own if messages(lang, own) else None


def _number(value: float, places: int = 2) -> str:
    """A number as the scheduler computed it and its view shows it: to two places (SGLang's budgets are fractions
    of slots), a ratio to four."""
    return f"{round(value, places):g}"


def _blocked(lang, event, frame: Frame, before: Frame | None = None) -> str:
    cfg = frame.config
    tokens = frame.requests[event.seq_id].num_tokens if event.seq_id < len(frame.requests) else 0
    if event.reason == "blocks" and tokens > cfg.kv_capacity_tokens:  # queued though larger than the pool: for good
        blocks = -(-tokens // cfg.kvcache_block_size)
        return text(lang, "narrate.blocked.never_fits", id=event.seq_id, blocks=count(lang, "n.block", blocks),
                    pool=count(lang, "n.block", cfg.num_kvcache_blocks), system=frame.decided_by.system)
    if event.reason == "blocks":
        blocks, free = count(lang, "n.block", event.needed), _free_blocks(lang, event.available, frame, before)
        if _reads(frame, "scheduler_reserve_full_isl"):  # name the knob behind the rule
            rule = text(lang, "narrate.blocked.whole_sequence" if cfg.value("scheduler_reserve_full_isl")
                        else "narrate.blocked.first_chunk")
            return text(lang, "narrate.blocked.blocks_rule", id=event.seq_id, blocks=blocks, rule=rule, free=free)
        return text(lang, "narrate.blocked.blocks", id=event.seq_id, blocks=blocks, free=free)
    if event.reason == "watermark":
        return text(lang, "narrate.blocked.watermark", id=event.seq_id, blocks=count(lang, "n.block", event.needed),
                    free=_free_blocks(lang, event.available, frame, before), watermark=f"{cfg.value('watermark'):g}",
                    kept=count(lang, "n.block", cfg.section("watermark").watermark_blocks(cfg.num_kvcache_blocks)))
    if event.reason == "max_num_active_seqs":
        return text(lang, "narrate.blocked.max_num_active_seqs", id=event.seq_id,
                    active=cfg.value("max_num_active_seqs"))
    if event.reason == "token_budget":
        return text(lang, "narrate.blocked.token_budget", id=event.seq_id,
                    tokens=count(lang, "n.token", event.needed), available=event.available,
                    budget=frame.config.max_num_batched_tokens)
    if event.reason == "max_num_seqs":
        return text(lang, "narrate.blocked.max_num_seqs", id=event.seq_id, max_num_seqs=frame.config.max_num_seqs)
    if event.reason == "max_num_seqs_now":  # a limit below max_num_seqs for this step, the scheduler's own (`needed`)
        return text(lang, "narrate.blocked.max_num_seqs_now", id=event.seq_id,
                    limit=count(lang, "n.request", event.needed), max_num_seqs=frame.config.max_num_seqs)
    if event.reason == "preempted_this_step":
        return text(lang, "narrate.blocked.preempted_this_step", id=event.seq_id)
    if (own := _own(lang, frame, f"narrate.blocked.{event.reason}")) is not None:
        return _refused(lang, own, event, frame)
    return text(lang, "narrate.blocked.decode_first", id=event.seq_id)


def _refused(lang, key: str, event, frame: Frame) -> str:
    """A kind's own reason (`key`: SGLang's NO_TOKEN, the KV slots left after the reserve for the running requests'
    future tokens; OTHER, the input or chunk budget; max_running_requests, under priority preemption none running
    it could preempt; the batch-is-full latch), with the numbers its event carries as the scheduler computed
    them. A budget spent by the requests admitted before it (no number of its own: `needed` 0) has its words."""
    cfg = frame.config
    values = {"id": event.seq_id, "needed": event.needed, "available": _number(event.available),
              "reserve": _number(getattr(event, "reserve", 0)),
              "ratio": _number(getattr(event, "new_token_ratio", 0), 4),
              "max_prefill_tokens": cfg.value("max_prefill_tokens"),
              "threshold": cfg.value("priority_scheduling_preemption_threshold")}
    if hasattr(event, "reserve") and not event.needed:
        key += "_spent"
    elif getattr(event, "locked", 0):  # its cached prefix, locked while it was judged, not evictable then
        key += "_locked"
        values["locked"] = count(lang, "n.slot", event.locked)
    elif event.reason == "max_running_requests" and _priority_preemption(frame):
        key += "_priority"
    return text(lang, key, **values)


def _priority_preemption(frame: Frame) -> bool:
    """Whether SGLang's priority preemption was on for this step."""
    cfg = frame.config
    return _reads(frame, "enable_priority_scheduling") and cfg.value("enable_priority_scheduling") and \
        not cfg.value("disable_priority_preemption")


def _direction(lang: str, frame: Frame) -> str:
    """Which priority values the kind serves first under `frame`'s settings (SGLang's)."""
    low_first = frame.config.value("schedule_low_priority_values_first")
    return text(lang, _own(lang, frame, "narrate.priority_first.low" if low_first else "narrate.priority_first.high"))


def _admitted(lang, event, frame: Frame, before: Frame | None = None) -> str:
    cached = text(lang, "narrate.admitted.cached", n=event.num_cached_tokens) if event.num_cached_tokens else ""
    why = ""
    if getattr(event, "after_rebuild", False):
        why = text(lang, "narrate.admitted.after_rebuild")
    elif event.recompute:  # with a prefix-cache hit, only what the cache no longer held is computed again
        key = "narrate.sent_back.priority" if getattr(event, "after_preemption", False) else "narrate.sent_back"
        sent_back = text(lang, _own(lang, frame, key) or "narrate.sent_back")  # SGLang's word: retracted
        why = text(lang, "narrate.admitted.recompute_rest" if event.num_cached_tokens else "narrate.admitted.recompute",
                   sent_back=sent_back)
    return text(lang, "narrate.admitted", id=event.seq_id, tokens=count(lang, "n.token", event.num_tokens),
                cached=cached, why=why)


def kv_unit(frame: Frame) -> str:
    """What the frame's pool calls a KV unit (i18n `unit.*`): a block, or in a radix tree's pool a token slot (a
    page of them when page_size is above 1)."""
    view = frame.panel("radix_tree")
    if view is None:
        return "block"
    return "slot" if view["page_size"] == 1 else "page"


def pool_size(lang: str, frame: Frame, num_units: int, tokens_per_unit: int) -> str:
    """A pool of `num_units` in the frame's pool's words: "6 blocks of 10 tokens", "40 token slots", "9 pages of 4
    tokens" (the player says it with the same messages)."""
    return text(lang, f"player.pool_size.{kv_unit(frame)}", n=num_units,
                tokens=count(lang, "n.token", tokens_per_unit))


def _unit_ids(lang: str, frame: Frame, units) -> str:
    """Units by id; pages with the token slots they hold, as the radix tree beside them names its nodes' slots
    ("pages 1, 2, 3 (slots 4–15)")."""
    said = _ids(lang, units)
    if kv_unit(frame) != "page":
        return said
    page = frame.panel("radix_tree")["page_size"]
    runs: list[list[int]] = []
    for unit in units:
        if runs and unit * page == runs[-1][1] + 1:
            runs[-1][1] = unit * page + page - 1
        else:
            runs.append([unit * page, unit * page + page - 1])
    slots = text(lang, "list.sep").join(f"{a}–{b}" for a, b in runs)
    return text(lang, "narrate.page_slots", ids=said, slots=slots)


def _freed(lang: str, frame: Frame, units) -> str:
    noun = kv_unit(frame)
    if not units:
        return text(lang, "narrate.freed.none", units=text(lang, f"unit.{noun}.other"))
    return text(lang, "narrate.freed", units=count(lang, f"unit.{noun}", len(units)), ids=_unit_ids(lang, frame, units))


def _preempted(lang, event, frame: Frame, before: Frame | None = None) -> str:
    freed = _freed(lang, frame, event.freed_blocks)
    if (own := _own(lang, frame, "narrate.preempted")) is not None:  # SGLang's priority preemption, its numbers
        requests, cfg = frame.requests, frame.config
        return text(lang, own, id=event.seq_id, priority=requests[event.seq_id].priority,
                    for_id=event.for_seq_id, for_priority=requests[event.for_seq_id].priority,
                    most=cfg.max_num_seqs, threshold=cfg.value("priority_scheduling_preemption_threshold"),
                    direction=_direction(lang, frame), freed=freed)
    cached = sum(1 for b in event.freed_blocks if b < len(frame.blocks) and frame.blocks[b].hash is not None)
    then = text(lang, "narrate.preempted.then_cached", cached=cached) if cached else \
        text(lang, "narrate.preempted.then")  # freed blocks that keep their K/V in the prefix cache: resumed from
    if event.for_seq_id == event.seq_id:  # the policy picked the request that needed the block (tail: it is last)
        return text(lang, "narrate.preempted.self_tail" if event.policy == "tail" else "narrate.preempted.self",
                    id=event.seq_id, policy=event.policy, freed=freed, then=then)
    return text(lang, "narrate.preempted", id=event.seq_id, policy=event.policy, for_id=event.for_seq_id,
                freed=freed, then=then)


def _decided_by(frame: Frame) -> DecidedBy:
    """The scheduler that decided `frame`; for an old trace that does not say, the one a trace without it was
    decided by (the factory's default kind, as its declaration states its system)."""
    return frame.decided_by or scheduler_info(DEFAULT_KIND).decided_by


def _pass_ended(lang, event, frame: Frame, before: Frame | None = None) -> str:
    decided_by = _decided_by(frame)
    return count(lang, "narrate.pass_ended", len(event.skipped), id=event.seq_id, ids=join_and(lang, event.skipped),
                 scheduler=f"{decided_by.system} {decided_by.version}".strip())


def _arrived(lang, event, frame: Frame, before: Frame | None = None) -> str:
    return text(lang, "narrate.arrived", id=event.seq_id, prompt=count(lang, "n.prompt_token", event.prompt_len),
                priority=event.priority)


def _tokens_from(lang: str, key: str, start: int, end: int, **values) -> str:
    """A chunk's tokens `start`..`end`: "tokens 8–9 of 10", or "token 0 of 10" for one."""
    return text(lang, key if end > start else f"{key}_one", start=start, end=end, **values)


def _chunk(lang, event, frame: Frame, before: Frame | None = None) -> str:
    return _tokens_from(lang, "narrate.chunk", event.start, event.start + event.num_tokens - 1, id=event.seq_id,
                        total=event.total)


def _prefix_hit(lang, event, frame: Frame, before: Frame | None = None) -> str:
    n = len(event.block_ids)
    unit = text(lang, f"unit.{kv_unit(frame)}.{'one' if n == 1 else 'other'}")
    return count(lang, "narrate.prefix_hit", n, id=event.seq_id, tokens=event.num_tokens, unit=unit,
                 ids=_unit_ids(lang, frame, event.block_ids))


def _evicted(lang, event, frame: Frame, before: Frame | None = None) -> str:
    if hasattr(event, "tokens"):  # a radix tree's leaf (SGLang): the tokens it cached, and for what it went
        shown = _ids(lang, event.tokens[:LEAF_TOKENS_SHOWN]) + ("…" if len(event.tokens) > LEAF_TOKENS_SHOWN else "")
        return count(lang, _own(lang, frame, f"narrate.evicted_leaf.{event.trigger}"), len(event.tokens),
                     id=event.seq_id, tokens=shown, freed=_freed(lang, frame, event.block_ids))
    return count(lang, "narrate.evicted", len(event.block_ids), id=event.seq_id, ids=_ids(lang, event.block_ids))


LEAF_TOKENS_SHOWN = 6


def _ordered(lang, event, frame: Frame, before: Frame | None = None) -> str:
    """Why the queue's policy put this request first (SGLang's schedule_policy, or its priority scheduling)."""
    requests = frame.requests
    return text(lang, _own(lang, frame, f"narrate.ordered.{event.policy}"), id=event.seq_id, ahead=event.ahead_of,
                prefix=count(lang, "n.token", event.num_prefix_tokens),
                output=count(lang, "n.token", event.max_new_tokens), priority=requests[event.seq_id].priority,
                ahead_priority=requests[event.ahead_of].priority, direction=_direction(lang, frame))


def _retracted(lang, event, frame: Frame, before: Frame | None = None) -> str:
    freed = _freed(lang, frame, event.freed_blocks)
    by_priority = frame.config.value("retraction_policy") == "priority"  # SGLang's retraction_policy
    key = _own(lang, frame, "narrate.retracted.priority" if by_priority else "narrate.retracted")
    return text(lang, key, id=event.seq_id, needed=count(lang, "n.slot", event.needed), free=event.free,
                ratio=_number(event.new_token_ratio, 4), freed=freed, priority=frame.requests[event.seq_id].priority)


def _unlocked(lang, event, frame: Frame, before: Frame | None = None) -> str:
    """A request left and dropped its lock on its prefix in the radix tree: the units stay cached."""
    units = count(lang, f"unit.{kv_unit(frame)}", len(event.block_ids))
    return text(lang, _own(lang, frame, "narrate.unlocked"), id=event.seq_id, units=units,
                ids=_unit_ids(lang, frame, event.block_ids))


def _finished(lang, event, frame: Frame, before: Frame | None = None) -> str:
    request = frame.requests[event.seq_id]
    why = text(lang, f"finish.{event.reason}", max_tokens=request.max_tokens,
               max_model_len=frame.config.max_model_len)
    tree = kv_unit(frame) != "block"  # a radix tree keeps a finished request's KV, unlocked
    return text(lang, "narrate.finished.tree" if tree else "narrate.finished", id=event.seq_id, why=why)


def _aborted(lang, event, frame: Frame, before: Frame | None = None) -> str:
    return text(lang, "narrate.aborted", id=event.seq_id, reason=event.reason)


def _speculated(lang, event, frame: Frame, before: Frame | None = None) -> str:
    drafted, accepted = len(event.draft_token_ids), event.num_accepted
    return text(lang, "narrate.speculated", id=event.seq_id, drafts=count(lang, "n.draft_token", drafted),
                accepted=accepted, new=count(lang, "n.new_token", accepted + 1))


def _finished_late(lang, event, frame: Frame, before: Frame | None = None) -> str:
    request = frame.requests[event.seq_id]
    if request.finish_reason in ("max_tokens", "max_model_len"):  # a length stop learnt as its token landed
        why = text(lang, f"finish.{request.finish_reason}", max_tokens=request.max_tokens,
                   max_model_len=frame.config.max_model_len)
        return text(lang, "narrate.finished_late.length", id=event.seq_id, why=why, step=frame.step - 1,
                    system=frame.decided_by.system)
    return text(lang, "narrate.finished_late", id=event.seq_id, step=frame.step - 1)


def _pool_rebuilt(lang, event, frame: Frame, before: Frame | None = None) -> str:
    base = text(lang, "narrate.rebuilt", step=frame.step, pool=pool_size(lang, frame, event.num_blocks,
                                                                         event.block_size), prev=frame.step - 1)
    running, waiting = event.requeued[:event.num_running], event.requeued[event.num_running:]
    if running:
        return count(lang, "narrate.rebuilt.running", len(running), base=base, ids=join_and(lang, running))
    return text(lang, "narrate.rebuilt.waiting" if waiting else "narrate.rebuilt.none", base=base)


def overlap_summary(frame: Frame, lang: str) -> str | None:
    """How overlapped scheduling shaped this step, or None for a synchronous one."""
    timing = frame.timing
    if timing is None or not timing.overlapped:
        return None
    return text(lang, "narrate.overlapped", prev=frame.step - 1)


def _other(lang, event, frame: Frame, before: Frame | None = None) -> str:
    """An event kind this module does not know yet: still a sentence, never an error."""
    details = ", ".join(f"{k}={v}" for k, v in event.to_dict().items() if k not in ("kind", "seq_id"))
    return text(lang, "narrate.other", id=event.seq_id, kind=event.kind.replace('_', ' '),
                details=f" ({details})" if details else "")


DESCRIBE = {"arrived": _arrived, "admitted": _admitted, "chunk": _chunk, "blocked": _blocked,
            "preempted": _preempted, "prefix_hit": _prefix_hit, "finished": _finished, "aborted": _aborted,
            "speculated": _speculated, "finished_late": _finished_late, "evicted": _evicted,
            "pool_rebuilt": _pool_rebuilt, "ordered": _ordered, "retracted": _retracted, "pass_ended": _pass_ended,
            "unlocked": _unlocked}


def describe(event: Event, frame: Frame, before: Frame | None = None, *, lang: str) -> str:
    """One sentence for one event of `frame`'s step (`before`: the frame the step started from). An event of a
    kind's own that says itself (`said()`, its sentence as a Message under the kind's prefix, filled with the
    numbers it carries) is told so, before any rule here."""
    said = getattr(event, "said", None)
    if said is not None:
        return in_lang(lang, said())
    return DESCRIBE.get(event.kind, _other)(lang, event, frame, before)


def _arrivals(lang: str, events) -> str:
    """Several requests arriving together, in one sentence."""
    priorities = {e.priority for e in events}
    priority = text(lang, "narrate.arrivals.priority", priority=priorities.pop()) if len(priorities) == 1 else ""
    return text(lang, "narrate.arrivals", ids=join_and(lang, [e.seq_id for e in events]),
                lens=join_and(lang, [e.prompt_len for e in events]), priority=priority)


def left_out(frame: Frame, before: Frame, lang: str) -> str | None:
    """Who was running when the step started but is not in its batch (preempted and late-finished requests
    are told by their own events, and those a pool rebuild queued again by its own), and why."""
    gone = {e.seq_id for e in frame.events if e.kind in ("preempted", "finished_late", "retracted")}
    gone |= {rid for e in frame.events_of("pool_rebuilt") for rid in e.requeued}
    gone |= {rid for e in frame.events_of("pass_ended") for rid in e.skipped}
    paused = sorted(set(before.running) - set(frame.batch.seq_ids) - gone)
    if not paused or frame.batch.kind == "idle":
        return None
    config, n, ids = frame.config, len(paused), join_and(lang, paused)
    if frame.batch.kind == "prefill":
        sentence = count(lang, "narrate.sat_out.prefill", n, ids=ids, system=_decided_by(frame).system)
        if len(frame.running) > config.max_num_seqs:
            sentence += text(lang, "narrate.sat_out.prefill_extra", max_num_seqs=config.max_num_seqs,
                             running=len(frame.running))
        return sentence
    late = len(frame.events_of("finished_late"))
    if len(frame.batch.seq_ids) + late >= config.max_num_seqs:
        return count(lang, "narrate.sat_out.max_num_seqs", n, ids=ids, max_num_seqs=config.max_num_seqs)
    if not _reads(frame, "max_num_batched_tokens"):  # no token budget, no chunk rule of the article's to name
        return count(lang, "narrate.sat_out.other", n, ids=ids)
    if frame.batch.total_tokens >= config.max_num_batched_tokens:
        return count(lang, "narrate.sat_out.token_budget", n, ids=ids, budget=config.max_num_batched_tokens)
    waiting_for_blocks = [_chunk_lacks_blocks(rid, frame, before, lang) for rid in paused]
    if all(waiting_for_blocks):
        return " ".join(waiting_for_blocks)
    return count(lang, "narrate.sat_out.other", n, ids=ids)


def _chunk_lacks_blocks(rid: int, frame: Frame, before: Frame, lang: str) -> str | None:
    """Why a running request in the middle of its prompt got no chunk, when its next chunk needed more blocks than
    were free at the start of the step (the article's scheduler leaves it waiting in its place), else None."""
    was, config = before.requests[rid], frame.config
    remaining = was.num_prompt_tokens - was.num_computed_tokens
    if remaining <= 0:
        return None
    chunk = min(remaining, config.max_num_batched_tokens)
    blocks = -(-(was.num_computed_tokens + chunk) // config.kvcache_block_size) - len(was.block_table)
    free = free_at_start(frame, before)
    if blocks <= free:
        return None
    return text(lang, "narrate.sat_out.chunk_blocks", id=rid, tokens=count(lang, "n.token", chunk),
                blocks=count(lang, "n.block", blocks), free=free)


def prompts_completed(frame: Frame, before: Frame, lang: str) -> list[str]:
    """Requests whose prompt was completed by a last chunk this step (no event of their own tells it)."""
    admitted = {e.seq_id for e in frame.events_of("admitted")}
    lines = []
    for rid, n in zip(frame.batch.seq_ids, frame.batch.num_tokens, strict=True):
        now = frame.requests[rid]
        if rid in admitted or rid >= len(before.requests) or before.requests[rid].num_output_tokens:
            continue
        if now.num_output_tokens:
            lines.append(_tokens_from(lang, "narrate.last_chunk", now.num_prompt_tokens - n, now.num_prompt_tokens - 1,
                                      id=rid, total=now.num_prompt_tokens))
    return lines


def kv_moments(frame: Frame, before: Frame, lang: str) -> str:
    """The pool's free units at the two moments a step has: its start (the frame before) and its end; in a kind's
    own words where its view carries its own counts (SGLang: the allocator's `available_size()` and the tree's
    `evictable_size()`, as the twin read them after each step, in token slots whatever its page size)."""
    view, was = frame.panel("radix_tree") or {}, before.panel("radix_tree") or {}
    own = _own(lang, frame, "narrate.kv_moments")
    if own is not None and "available_size" in view and "available_size" in was and not frame.events_of("pool_rebuilt"):
        return text(lang, own, start=was["available_size"],
                    start_evictable=was["evictable_size"], after=view["available_size"],
                    after_evictable=view["evictable_size"], total=view["size"])
    return text(lang, "narrate.kv_moments", units=text(lang, f"unit.{kv_unit(frame)}.other"),
                start=free_at_start(frame, before), after=frame.metrics.num_free_blocks,
                total=frame.config.num_kvcache_blocks)  # a reserved unit (vLLM's null block) is not one of them


def narrate(frame: Frame, before: Frame | None = None, *, lang: str) -> list[str]:
    """The step summary, how overlapped scheduling shaped the step (when it did), then one sentence per event
    in the order things happened (requests that arrived together share one sentence). Given the frame the
    step started from, also the free blocks at its start and end, who sat the step out and why, and which
    prompt a last chunk completed."""
    lines, events = [step_summary(frame, lang)], list(frame.events)
    if before is not None and frame.step > 0:
        lines.append(kv_moments(frame, before, lang))
    if overlapped := overlap_summary(frame, lang):
        lines.append(overlapped)
    while events:
        arrived = 0
        while arrived < len(events) and events[arrived].kind == "arrived":
            arrived += 1
        if arrived > 1:
            lines.append(_arrivals(lang, events[:arrived]))
            events = events[arrived:]
        else:
            lines.append(describe(events.pop(0), frame, before, lang=lang))
    if before is not None and frame.step > 0:
        lines += prompts_completed(frame, before, lang)
        lines += filter(None, [left_out(frame, before, lang)])
    return lines
