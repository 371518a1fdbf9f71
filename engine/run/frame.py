"""Frames: the recorded truth of one engine step, immutable and serialisable.

A `Frame` is what the UI draws: the state *after* step `step` ran (frame 0 is the empty state before the
first step). Step s first adds the requests that arrived before it (arrival < s; an `arrived` event each),
then schedules, runs the model and postprocesses. A request with `arrival = a` can therefore be scheduled
from step a + 1 at the earliest, and TTFT in steps is always at least 1.

Schema (field names are stable; the UI builds its figures from them):

    Frame (the step's StepHeader, read through the frame: step, sim_time_s, wall_*, config, batch, events,
    timing; then the state after the step)
      step: int                      0, 1, 2, ...
      sim_time_s: float              simulated clock at the end of the step (cost model, see engine.CostModel)
      wall_schedule_s, wall_model_s  wall time of schedule() + postprocess(), and of the model (runner.run)
      config: scheduler.Config       the config this step ran under (it can change mid-run, see Engine)
      batch: BatchView               kind ("prefill" | "decode" | "mixed" | "idle"), seq_ids, num_tokens, and
                                     per request as schedule() left it: num_computed (tokens computed before this
                                     step's, where its chunk starts) and num_drafts (speculative lookahead
                                     tokens among its num_tokens); both () in traces written before they were kept
      waiting, running: tuple[int]   request ids in queue order (head first)
      requests: tuple[RequestView]   every request that has arrived by this step, finished ones included,
                                     indexed by id: ids are given in arrival order, so requests[i].id == i
      blocks: tuple[BlockView]       the whole KV pool, indexed by block id
      free_block_ids: tuple[int]     free list in order: head = next block to be allocated, also the
                                     prefix cache's LRU order (cached-but-free blocks are evicted head first)
      events: tuple[Event]           this step's story: `pool_rebuilt` (engine, seq_id -1: a pool setting
                                     changed after the frame before), `arrived` (engine; plus `aborted` for a request
                                     refused at arrival, with the reason) then the events schedule() returned
                                     (admitted, chunk, blocked, preempted, prefix_hit, aborted; an admission the
                                     rebuild caused is an AdmittedAfterRebuild),
                                     then, overlapped, `finished_late` (an EOS known only after this
                                     step was scheduled) and the finishes of postprocess;
                                     each has .kind, .seq_id and .to_dict(), see scheduler/events.py
      metrics: StepMetrics           KV usage, tokens in the batch, queue lengths, cumulative counters
      decided_by: DecidedBy | None   the scheduler that decided the run (kind, system, version mirrored); one per
                                     run, kept by the store (a trace holds it once); None when not known
      timing: StepTiming | None      when the step was scheduled, computed by the model and postprocessed
                                     (engine/run/overlap.py): simulated on the fake runner, measured on the
                                     model; `timing.overlapped` when it was scheduled while the model was
                                     still computing the step before. None for frame 0 and old traces.
      panels: dict                   the scheduler's own panels after the step, by their declared id
                                     (`SchedulerInfo.panels`, `SchedulerProtocol.panels`): the vLLM twin's
                                     SchedulerOutput (scheduler/output.py), the SGLang twin's radix tree
                                     (scheduler/sglang/tree_view.py); {} for a scheduler that declares none, for
                                     frame 0 (left out of to_dict when empty; traces before version 4 wrote them as
                                     `output` and `view`: engine/traces/panels.py)
      block_copies: tuple[BlockCopy] KV blocks the step copied between pools (`Batch.block_copies`: V0's swaps), as
                                     (src_pool, src_block, dst_pool, dst_block); left out of to_dict when none
      queues: dict                   the queues a scheduler declares beyond waiting and running (V0's swapped),
                                     request ids head first; {} otherwise (left out of to_dict)
      side_pools: dict               the KV pools a scheduler declares beside its main one (V0's CPU pool): per
                                     unit, the id of the request holding it or None; {} otherwise (left out of
                                     to_dict)

    RequestView (a NamedTuple)
      id, status ("waiting" | "running" | "finished" | "aborted"), num_tokens (prompt + output so far),
      num_prompt_tokens, num_computed_tokens (tokens whose K/V is cached), block_table, priority, arrival,
      num_preemptions, finish_reason, max_tokens, history (the request's TokenHistory, shared by all its
      views: history.token_ids holds every token the request will ever have, so slice it by num_tokens);
      properties token_ids, prompt_token_ids, output_token_ids, num_output_tokens and pieces (text of each
      token, or None without a tokenizer: integer prompts on the fake runner).

    BlockView (a NamedTuple)
      id, ref_count, hash (None unless the block is a full block registered in the prefix cache),
      free_rank (order key in the free list); properties token_ids (the cached tokens of a hashed block,
      else (); a slice of the filling request's history, so they cost no memory), is_free and
      is_cached_free. Owners: Frame.block_owners(block_id).

Token ids are append-only, so a request's tokens live once in a shared `TokenHistory` and each view keeps
only how many of them existed at its step: frames stay cheap to store and to rebuild.

`Frame.to_dict()` gives plain JSON data (with every request's token ids and pieces); `to_dict(tokens=False)`
leaves tokens out for traces, which store them once per request. `Frame.from_dict(data, histories)` reads
either form back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from engine.run.overlap import StepTiming
from scheduler import Config
from scheduler.contract import DecidedBy
from scheduler.events import Admitted, Event, event_from_dict
from scheduler.factory import SETTINGS, panel_kind
from scheduler.interface import BlockCopy
from scheduler.sequence import PLACEHOLDER


@dataclass(frozen=True)
class Arrived(Event):
    """The request joined the waiting queue at the start of this step."""
    kind = "arrived"
    prompt_len: int
    priority: int


@dataclass(frozen=True)
class FinishedLate(Event):
    """Overlapped scheduling: the request's EOS came back from the previous step only after this step was
    scheduled, so it finished one step late and was dropped from this batch before it ran."""
    kind = "finished_late"
    ends = "finished"
    freed_blocks: tuple[int, ...]


@dataclass(frozen=True)
class PoolRebuilt(Event):
    """A mid-run change of a pool field (block count or size, max_model_len, eos) rebuilt the KV pool before
    this step: the requests in `requeued` (the `num_running` running ones first, then the waiting ones) lost
    their K/V and compute it again; nobody was preempted. It concerns the whole pool: `seq_id` is -1."""
    kind = "pool_rebuilt"
    step_wide = True
    num_blocks: int
    block_size: int
    requeued: tuple[int, ...]
    num_running: int


@dataclass(frozen=True)
class AdmittedAfterRebuild(Admitted):
    """An admission that recomputes a request the KV pool's rebuild requeued (see PoolRebuilt), not one that
    had been preempted; its kind stays "admitted"."""
    after_rebuild: bool = True


PENDING_TEXT = "…"


def token_id_text(token_id: int) -> str:
    """A token id as the page writes it without a tokenizer: "…" while the model is still computing it."""
    return PENDING_TEXT if token_id == PLACEHOLDER else str(token_id)


class TokenHistory:
    """A request's tokens (append-only) and, when a tokenizer exists, their text pieces, computed lazily."""

    __slots__ = ("token_ids", "_pieces", "_to_pieces")

    def __init__(self, token_ids: list[int], to_pieces: Callable[[list[int]], list[str]] | None = None,
                 pieces: list[str] | None = None):
        self.token_ids = token_ids  # the live Sequence's list while the run goes on: only ever appended to
        self._to_pieces = to_pieces
        self._pieces = list(pieces) if pieces is not None else []

    @property
    def has_text(self) -> bool:
        return self._to_pieces is not None or bool(self._pieces)

    def pieces(self, n: int) -> tuple[str, ...] | None:
        """Text of the first n tokens; a token the model is still computing (overlapped scheduling) reads
        "…" and is converted once it has landed."""
        if not self.has_text:
            return None
        if len(self._pieces) < n and self._to_pieces is not None:
            ids = self.token_ids[len(self._pieces):n]
            known = ids.index(PLACEHOLDER) if PLACEHOLDER in ids else len(ids)
            self._pieces.extend(self._to_pieces(ids[:known]))
        return tuple(self._pieces[:n]) + (PENDING_TEXT,) * (n - len(self._pieces))


class RequestView(NamedTuple):
    id: int
    status: str
    num_tokens: int
    num_prompt_tokens: int
    num_computed_tokens: int
    block_table: tuple[int, ...]
    priority: int
    arrival: int
    num_preemptions: int
    finish_reason: str | None
    max_tokens: int
    history: TokenHistory

    @property
    def token_ids(self) -> tuple[int, ...]:
        return tuple(self.history.token_ids[:self.num_tokens])

    @property
    def prompt_token_ids(self) -> tuple[int, ...]:
        return tuple(self.history.token_ids[:self.num_prompt_tokens])

    @property
    def output_token_ids(self) -> tuple[int, ...]:
        return tuple(self.history.token_ids[self.num_prompt_tokens:self.num_tokens])

    @property
    def num_output_tokens(self) -> int:
        return self.num_tokens - self.num_prompt_tokens

    @property
    def pieces(self) -> tuple[str, ...] | None:
        return self.history.pieces(self.num_tokens)

    def progressed(self, num_tokens: int, num_computed_tokens: int) -> RequestView:
        """This view with new token counts: a fast `_replace` (frames are rebuilt with many of these)."""
        return tuple.__new__(RequestView, (*self[:2], num_tokens, self[3], num_computed_tokens, *self[5:]))

    def to_dict(self, tokens: bool = True) -> dict:
        data = self._asdict()
        del data["history"]
        data["block_table"] = list(self.block_table)
        if tokens:
            data["token_ids"] = list(self.token_ids)
            data["pieces"] = None if self.pieces is None else list(self.pieces)
        return data

    @classmethod
    def from_dict(cls, data: dict, history: TokenHistory) -> RequestView:
        values = {f: data[f] for f in cls._fields if f != "history"}
        values["block_table"] = tuple(values["block_table"])
        return cls(**values, history=history)


class BlockView(NamedTuple):
    id: int
    ref_count: int
    hash: int | None
    free_rank: int  # blocks in the free list are ordered by this rank (a freed block goes to the tail)
    # A hashed block's tokens are a slice of the history of the request that filled it: shared, not copied.
    tokens_from: TokenHistory | None = None
    tokens_start: int = 0
    tokens_len: int = 0

    @property
    def token_ids(self) -> tuple[int, ...]:
        """The cached tokens of a hashed block, else ()."""
        if self.tokens_from is None:
            return ()
        return tuple(self.tokens_from.token_ids[self.tokens_start:self.tokens_start + self.tokens_len])

    @property
    def is_free(self) -> bool:
        return self.ref_count == 0

    @property
    def is_cached_free(self) -> bool:
        """Free, but its content can still be revived by a prefix hit until the block is reused."""
        return self.ref_count == 0 and self.hash is not None

    def to_dict(self) -> dict:
        return {"id": self.id, "ref_count": self.ref_count, "hash": self.hash, "token_ids": list(self.token_ids),
                "free_rank": self.free_rank}

    @classmethod
    def from_dict(cls, data: dict) -> BlockView:
        tokens = data["token_ids"]
        return cls(data["id"], data["ref_count"], data["hash"], data["free_rank"],
                   TokenHistory(tokens) if tokens else None, 0, len(tokens))


class BatchView(NamedTuple):
    kind: str  # "prefill", "decode", "mixed" or "idle"
    seq_ids: tuple[int, ...]
    num_tokens: tuple[int, ...]  # tokens computed this step, per request in seq_ids
    num_computed: tuple[int, ...] = ()  # tokens each had computed when scheduled (prefix hits included)
    num_drafts: tuple[int, ...] = ()  # speculative draft tokens among num_tokens

    @property
    def total_tokens(self) -> int:
        return sum(self.num_tokens)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "seq_ids": list(self.seq_ids), "num_tokens": list(self.num_tokens),
                "num_computed": list(self.num_computed), "num_drafts": list(self.num_drafts)}

    @classmethod
    def from_dict(cls, data: dict) -> BatchView:
        return cls(data["kind"], tuple(data["seq_ids"]), tuple(data["num_tokens"]),
                   tuple(data.get("num_computed", ())), tuple(data.get("num_drafts", ())))


class StepMetrics(NamedTuple):
    kv_usage: float             # blocks held by requests / pool size, after the step
    num_batched_tokens: int
    num_waiting: int
    num_running: int
    num_free_blocks: int
    num_cached_free_blocks: int
    num_prefix_queries: int     # cumulative: full prompt blocks looked up in the prefix cache
    num_prefix_hits: int        # cumulative
    num_preemptions: int        # cumulative

    def to_dict(self) -> dict:
        return self._asdict()

    @classmethod
    def from_dict(cls, data: dict) -> StepMetrics:
        return cls(**{f: data[f] for f in cls._fields})


@dataclass(frozen=True, slots=True)
class StepHeader:
    """What the engine tells about a step, as opposed to the scheduler's state after it: its number, clocks,
    config, batch, events and timing. The engine makes one per step; the recorder, the store and the frame
    pass it on as it is."""
    step: int
    sim_time_s: float
    wall_schedule_s: float
    wall_model_s: float
    config: Config
    batch: BatchView
    events: tuple[Event, ...]
    timing: StepTiming | None = None
    panels: dict = field(default_factory=dict)  # the scheduler's own panels after the step, by id
    block_copies: tuple[BlockCopy, ...] = ()

    @classmethod
    def from_dict(cls, data: dict, config: Config) -> StepHeader:
        """The header of a frame's JSON data (`to_dict`), under `config` (a trace may carry it only when it
        changed)."""
        return cls(data["step"], data["sim_time_s"], data["wall_schedule_s"], data["wall_model_s"], config,
                   BatchView.from_dict(data["batch"]), tuple(event_from_dict(e) for e in data["events"]),
                   StepTiming.from_dict(data["timing"]) if data.get("timing") else None,
                   {pid: panel_kind(pid).from_data(value) for pid, value in data.get("panels", {}).items()},
                   tuple(BlockCopy(*copy) for copy in data.get("block_copies", ())))

    def extras_dict(self) -> dict:
        """The header's entries a frame writes only when it has them: its panels and its block copies (frames of
        schedulers without them keep their shape)."""
        extras: dict[str, object] = {}
        if self.panels:
            extras["panels"] = {pid: panel_kind(pid).to_data(value) for pid, value in self.panels.items()}
        if self.block_copies:
            extras["block_copies"] = [list(copy) for copy in self.block_copies]
        return extras


def _from_header(name: str) -> property:
    return property(lambda frame: getattr(frame.header, name), doc=f"The step's {name} (see StepHeader).")


@dataclass(frozen=True)
class Frame:
    header: StepHeader
    waiting: tuple[int, ...]
    running: tuple[int, ...]
    requests: tuple[RequestView, ...]
    blocks: tuple[BlockView, ...]
    metrics: StepMetrics
    decided_by: DecidedBy | None = None  # the scheduler that decided the run (scheduler/contract.py)
    queues: dict[str, tuple[int, ...]] = field(default_factory=dict)  # declared beyond waiting and running
    side_pools: dict[str, tuple[int | None, ...]] = field(default_factory=dict)  # per unit, its holder
    _owners: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    step = _from_header("step")
    sim_time_s = _from_header("sim_time_s")
    wall_schedule_s = _from_header("wall_schedule_s")
    wall_model_s = _from_header("wall_model_s")
    config = _from_header("config")
    batch = _from_header("batch")
    events = _from_header("events")
    timing = _from_header("timing")
    panels = _from_header("panels")
    block_copies = _from_header("block_copies")

    def panel(self, panel_id: str):
        """The scheduler's panel of `panel_id` after this step, or None where it recorded none."""
        return self.header.panels.get(panel_id)

    def queue(self, name: str) -> tuple[int, ...]:
        """A queue by name: waiting, running, or one the scheduler declares beyond them (() where it has none)."""
        return getattr(self, name) if name in ("waiting", "running") else self.queues.get(name, ())

    @property
    def free_block_ids(self) -> tuple[int, ...]:
        return tuple(b.id for b in sorted((b for b in self.blocks if b.is_free), key=lambda b: b.free_rank))

    def block_owners(self, block_id: int) -> tuple[int, ...]:
        """Ids of the requests whose block table holds this block, in request-id order."""
        if not self._owners:
            owners: dict[int, list[int]] = {}
            for req in self.requests:
                for b in req.block_table:
                    owners.setdefault(b, []).append(req.id)
            self._owners.update({b: tuple(ids) for b, ids in owners.items()})
        return self._owners.get(block_id, ())

    def events_of(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.kind == kind]

    def to_dict(self, tokens: bool = True) -> dict:
        return self.header.extras_dict() | state_extras(self.queues, self.side_pools) | {
            "step": self.step, "sim_time_s": self.sim_time_s, "wall_schedule_s": self.wall_schedule_s,
            "wall_model_s": self.wall_model_s, "config": config_to_dict(self.config),
            "batch": self.batch.to_dict(), "waiting": list(self.waiting), "running": list(self.running),
            "requests": [r.to_dict(tokens) for r in self.requests],
            "blocks": [{**b.to_dict(), "owners": list(self.block_owners(b.id))} for b in self.blocks],
            "free_block_ids": list(self.free_block_ids),
            "events": [e.to_dict() for e in self.events],
            "metrics": self.metrics.to_dict(),
            "timing": self.timing and self.timing.to_dict(),
            "decided_by": self.decided_by and self.decided_by.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict, histories: Sequence[TokenHistory] | Mapping[int, TokenHistory] | None = None
                  ) -> Frame:
        """`histories` maps request id to its tokens (a trace's `requests` list); without it the frame's own
        per-request `token_ids` / `pieces` are used."""
        requests = []
        for r in sorted(data["requests"], key=lambda r: r["id"]):
            history = histories[r["id"]] if histories is not None else TokenHistory(r["token_ids"],
                                                                                    pieces=r.get("pieces"))
            requests.append(RequestView.from_dict(r, history))
        return cls(StepHeader.from_dict(data, Config(**data["config"])), waiting=tuple(data["waiting"]),
                   running=tuple(data["running"]), requests=tuple(requests),
                   blocks=tuple(BlockView.from_dict(b) for b in data["blocks"]),
                   metrics=StepMetrics.from_dict(data["metrics"]),
                   decided_by=DecidedBy(**data["decided_by"]) if data.get("decided_by") else None,
                   queues={name: tuple(ids) for name, ids in data.get("queues", {}).items()},
                   side_pools={name: tuple(units) for name, units in data.get("side_pools", {}).items()})


def state_extras(queues: dict, side_pools: dict) -> dict:
    """A frame's declared queues beyond waiting and running, and its side pools, as JSON data: only where the
    scheduler declares them (the others' frames keep their shape)."""
    extras: dict[str, object] = {}
    if queues:
        extras["queues"] = {name: list(ids) for name, ids in queues.items()}
    if side_pools:
        extras["side_pools"] = {name: list(units) for name, units in side_pools.items()}
    return extras


def config_to_dict(config: Config) -> dict:
    """A config as traces and frames write it, flat, by each setting's key: the shared settings and those traces
    held from their start always; a kind's setting added since only when set away from its default (a trace without
    one was run at the default, as every older one was), so older traces and runs read byte for byte as they were."""
    return {key: value for key, spec in SETTINGS.items() if spec.written(value := config.value(key))}
