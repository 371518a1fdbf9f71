"""Key frames: the moments a scenario explains, each with a note and what the note claims (`expect`), checked
against the recorded frames so a note never says what the run does not show.

A claim is read off the step's decision events and the frames before and after the step (`before` is the frame
the step started from); `EXPECTATIONS` names every claim a scenario file may make and how to read it. What a kind
declares beyond every scheduler's queues and pool is claimed by its declared name, whatever the kind: `queues`
(V0's `swapped`: `queues = { swapped = [2] }`), `side_pools` (V0's `cpu`: who holds which of its units,
`side_pools = { cpu = { "2" = [0, 1] } }`) and `block_copies` (the step's copies between pools, in order:
`[["gpu", 4, "cpu", 0], ...]`); a claim on `queues` or `side_pools` checks the names it states.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.run.frame import Frame
from scheduler.events import Preempted


def _ids(frame: Frame, kind: str) -> list[int]:
    return sorted({e.seq_id for e in frame.events_of(kind)})


def _block_tables(frame: Frame) -> dict[str, list[int]]:
    """{request id: its block ids} for the requests holding blocks (TOML table keys are strings)."""
    return {str(r.id): list(r.block_table) for r in frame.requests if r.block_table}


def _free_queue(frame: Frame) -> list[int]:
    """Free block ids in free-list order: the next allocation takes the first (the LRU cached block)."""
    return [b.id for b in sorted((b for b in frame.blocks if b.is_free), key=lambda b: b.free_rank)]


def _needs_block(frame: Frame, before: Frame) -> list[int]:
    """Requests that needed one more KV block for this step's tokens: each request a preemption made room for,
    and each request already running whose block table grew (an admission's blocks are `admitted`)."""
    admitted = set(_ids(frame, "admitted"))
    grew = {rid for rid in frame.batch.seq_ids if rid not in admitted and rid < len(before.requests)
            and len(frame.requests[rid].block_table) > len(before.requests[rid].block_table)}
    return sorted(grew | {e.for_seq_id for e in frame.events if isinstance(e, Preempted)})


def _freed(frame: Frame, before: Frame) -> list[int]:
    """Blocks given back this step: by preemptions, retractions and late finishes (their events name them), and by the
    requests that finished or were aborted (the blocks they held when the step started)."""
    freed = {b for e in frame.events if e.kind in ("preempted", "retracted", "finished_late") for b in e.freed_blocks}
    for e in frame.events:
        if e.kind in ("finished", "aborted") and e.seq_id < len(before.requests):
            freed.update(before.requests[e.seq_id].block_table)
    return sorted(freed)


def _side_pool_tables(frame: Frame) -> dict[str, dict[str, list[int]]]:
    """{side pool: {request id: the units it holds there, by id}} for every pool the scheduler declares beside its
    main one (TOML table keys are strings)."""
    tables: dict[str, dict[str, list[int]]] = {}
    for name, holders in frame.side_pools.items():
        table = tables[name] = {}
        for unit, holder in enumerate(holders):
            if holder is not None:
                table.setdefault(str(holder), []).append(unit)
    return tables


def _first_token(frame: Frame, before: Frame) -> list[int]:
    """Requests whose prompt was complete by this step and that got their first output token in it."""
    return [r.id for r in frame.requests if r.num_output_tokens > 0
            and (r.id >= len(before.requests) or before.requests[r.id].num_output_tokens == 0)]


def _paused(frame: Frame, before: Frame) -> list[int]:
    """Requests running when the step started that the batch left out (not preempted, not finished late)."""
    gone = set(_ids(frame, "preempted")) | set(_ids(frame, "finished_late"))
    return sorted(set(before.running) - set(frame.batch.seq_ids) - gone)


# What a key frame can expect, and how to read it off the step (frame, before). Id lists compare as sorted
# sets, except the queues and the batch, which compare in order.
EXPECTATIONS = {
    "batch_kind": (str, lambda f, b: f.batch.kind),
    "batch": (list, lambda f, b: list(f.batch.seq_ids)),
    "num_batched_tokens": (int, lambda f, b: f.batch.total_tokens),
    "max_num_seqs": (int, lambda f, b: f.config.max_num_seqs),
    "running": (list, lambda f, b: list(f.running)),
    "waiting": (list, lambda f, b: list(f.waiting)),
    "free_blocks": (int, lambda f, b: f.metrics.num_free_blocks),
    "free_blocks_before": (int, lambda f, b: b.metrics.num_free_blocks),
    "arrived": (list, lambda f, b: _ids(f, "arrived")),
    "admitted": (list, lambda f, b: _ids(f, "admitted")),
    "recomputed": (list, lambda f, b: sorted({e.seq_id for e in f.events_of("admitted") if e.recompute})),
    "chunk": (list, lambda f, b: _ids(f, "chunk")),
    "preempted": (list, lambda f, b: _ids(f, "preempted")),
    "preempted_for": (list, lambda f, b: sorted([e.seq_id, e.for_seq_id] for e in f.events_of("preempted"))),
    "needs_block": (list, _needs_block),
    "freed": (list, _freed),
    "first_token": (list, _first_token),
    "paused": (list, _paused),
    "finished": (list, lambda f, b: _ids(f, "finished")),
    "finished_late": (list, lambda f, b: _ids(f, "finished_late")),
    "overlapped": (bool, lambda f, b: bool(f.timing and f.timing.overlapped)),
    "aborted": (list, lambda f, b: _ids(f, "aborted")),
    "prefix_hit": (list, lambda f, b: _ids(f, "prefix_hit")),
    "prefix_tokens": (dict, lambda f, b: {str(e.seq_id): e.num_tokens for e in f.events_of("prefix_hit")}),
    "split": (int, lambda f, b: len((f.panel("radix_tree") or {}).get("split", ()))),  # nodes a radix tree split
    "speculated": (list, lambda f, b: _ids(f, "speculated")),
    "ordered": (list, lambda f, b: _ids(f, "ordered")),  # put first by SGLang's schedule_policy
    "retracted": (list, lambda f, b: _ids(f, "retracted")),  # sent back to waiting by SGLang's retract_decode
    "evicted": (list, lambda f, b: sorted({u for e in f.events_of("evicted") for u in e.block_ids})),
    "blocked": (str, lambda f, b: ",".join(sorted({e.reason for e in f.events_of("blocked")}))),
    "blocked_for_blocks": (list, lambda f, b: sorted({e.seq_id for e in f.events_of("blocked")
                                                      if e.reason == "blocks"})),
    "block_tables": (dict, lambda f, b: _block_tables(f)),
    "free_queue": (list, lambda f, b: _free_queue(f)),
    "cached_blocks": (list, lambda f, b: sorted(blk.id for blk in f.blocks if blk.hash is not None)),
    "queues": (dict, lambda f, b: {name: list(ids) for name, ids in f.queues.items()}),  # each head first
    "side_pools": (dict, lambda f, b: _side_pool_tables(f)),
    "block_copies": (list, lambda f, b: [list(copy) for copy in f.block_copies]),
}
IN_ORDER = ("batch", "running", "waiting", "free_queue", "block_copies")
BY_NAME = ("queues", "side_pools")  # a claim states the declared queues or pools it names, not every one
NEEDS_BEFORE = ("free_blocks_before", "needs_block", "freed", "first_token", "paused")


@dataclass(frozen=True)
class KeyFrame:
    step: int
    note: str
    expect: dict
    needs_model: bool = False  # the expectation depends on what the real model writes
    variant: bool = False  # observed in the scenario's variant run
    translations: dict = field(default_factory=dict)  # {language: the note in it} (`note_zh` in the file)

    def note_in(self, lang: str) -> str:
        """The note in `lang`; in English where the file has none in that language."""
        return self.translations.get(lang, self.note)

    def mismatches(self, frame: Frame, before: Frame | None = None) -> list[str]:
        """What the step (from `before` to `frame`) shows differently from `expect`; empty when the note holds.
        Claims about the step's start (NEEDS_BEFORE) cannot hold without the frame before."""
        problems = []
        for key, wanted in self.expect.items():
            if before is None and key in NEEDS_BEFORE:
                problems.append(f"step {self.step}: {key} is read off the frame before the step; pass it")
                continue
            actual = EXPECTATIONS[key][1](frame, before)
            if key in BY_NAME:
                actual = {name: actual.get(name) for name in wanted}
            if isinstance(wanted, list) and key not in IN_ORDER:
                wanted = sorted(wanted)
            if actual != wanted:
                problems.append(f"step {self.step}: {key} is {actual!r}, expected {wanted!r} ({self.note})")
        return problems

    def holds(self, frames) -> bool:
        """Whether the note is true of this run (a branched run may no longer show it); False when the step
        is not recorded."""
        return self.step < len(frames) and not self.mismatches(frames[self.step], frames[self.step - 1])
