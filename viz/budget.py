"""How a step spent its token budget (`max_num_batched_tokens`), as the stage's budget bar draws it: one segment per
request in the batch, telling a prefill chunk from a decode and its speculative lookahead tokens, and the requests
the budget held back. All of it is read off the frame: the batch as schedule() left it (`BatchView.num_computed`,
`num_drafts`) and the step's events (`chunk`, `speculated`, `blocked`), so the bar says what the scheduler decided.

A segment travels as an array whose positions `SEGMENT_FIELDS` names (the player reads them by name), trailing
zeros dropped: a plain decode is `[request, tokens]`, as the batch always travelled.
"""

from __future__ import annotations

from engine.run.frame import Frame
from scheduler.factory import scheduler_info

SEGMENT_FIELDS = ("request", "tokens", "phase", "computed", "of", "drafts", "accepted")
# What a segment's tokens are; "tokens": a trace written before batches kept where each request's chunk starts.
PHASES = ("decode", "prefill", "recompute", "tokens")
DECODE, PREFILL, RECOMPUTE, UNKNOWN = range(len(PHASES))


def _trimmed(values: list) -> list:
    while len(values) > 2 and not values[-1]:
        values.pop()
    return values


def budget_segments(frame: Frame) -> list[list]:
    """The batch as SEGMENT_FIELDS, in the batch's order: per request its tokens this step; a prefill (or recompute)
    chunk with the tokens computed after it (`computed`) of the `of` it prefills; a decode with its draft tokens
    (`drafts`, speculative lookahead) and how many of them the model accepted."""
    batch = frame.batch
    if not batch.num_computed:
        return [[rid, n, UNKNOWN] for rid, n in zip(batch.seq_ids, batch.num_tokens, strict=True)]
    chunk_totals = {e.seq_id: e.total for e in frame.events_of("chunk")}
    accepted = {e.seq_id: e.num_accepted for e in frame.events_of("speculated")}
    segments = []
    for rid, n, start, drafts in zip(batch.seq_ids, batch.num_tokens, batch.num_computed, batch.num_drafts,
                                     strict=True):
        computed = n - drafts  # tokens whose K/V the step computes besides the drafts
        prompt = frame.requests[rid].num_prompt_tokens
        if computed > 1 or start < prompt:  # more than a decode's one token, or a prompt token
            of = chunk_totals.get(rid, start + computed)  # no chunk event: this chunk completes it
            segments.append(_trimmed([rid, n, RECOMPUTE if of > prompt else PREFILL, start + computed, of]))
        else:
            segments.append(_trimmed([rid, n, DECODE, 0, 0, drafts, accepted.get(rid, 0) if drafts else 0]))
    return segments


def sat_out_cause(frame: Frame) -> str:
    """Why running requests left out of this step's batch sat it out: "batch_full" (max_num_seqs), "prefill" (a
    prefill step), "token_budget" or "other"."""
    config, batch = frame.config, frame.batch
    if len(batch.seq_ids) >= config.max_num_seqs:
        return "batch_full"
    if batch.kind == "prefill":
        return "prefill"
    decided_by = frame.decided_by  # a kind that reads no token budget never spends it
    reads_budget = decided_by is None or "max_num_batched_tokens" in scheduler_info(decided_by.kind).honoured
    if reads_budget and batch.total_tokens >= config.max_num_batched_tokens:
        return "token_budget"
    return "other"


def budget_held(frame: Frame) -> list[list]:
    """The requests the token budget held back this step: [request, tokens it needed, tokens left] for a waiting
    request the scheduler stopped at the budget (its `blocked` event), then [request] for each running request
    that sat the step out because the budget was spent."""
    held = [[e.seq_id, e.needed, e.available] for e in frame.events_of("blocked") if e.reason == "token_budget"]
    batched = set(frame.batch.seq_ids)
    sat_out = [rid for rid in frame.running if rid not in batched]
    if sat_out and sat_out_cause(frame) == "token_budget":
        held += [[rid] for rid in sat_out]
    return held
