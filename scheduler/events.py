"""The scheduler's events: what it decided in one step and why (returned by schedule() with each batch and by
postprocess()), as data the UI narrates from.

Every Event subclass, here or in the engine (engine/run/frame.py: arrived, finished_late, pool_rebuilt), enters the
one registry, `EVENT_TYPES`, under its kind when it is defined; `event_from_dict` reads any of them back.
"""

from collections.abc import Sequence
from dataclasses import MISSING, asdict, dataclass, fields
from functools import cache
from typing import ClassVar

# Why the request at the head of the waiting queue was not admitted this step.
BLOCKED_REASONS = ("token_budget", "blocks", "max_num_seqs", "decode_first", "preempted_this_step", "watermark",
                   "max_num_active_seqs", "no_token", "other", "max_running_requests", "batch_full")
# Why a request finished.
FINISH_REASONS = ("eos", "max_tokens", "max_model_len", "stop_token")


EVENT_TYPES: dict[str, list[type["Event"]]] = {}  # kind -> its classes (a variant of a kind carries a field more)


@dataclass(frozen=True)
class Event:
    kind: ClassVar[str] = "event"
    step_wide: ClassVar[bool] = False  # it concerns the step, no one request: its seq_id is -1
    ends: ClassVar[str | None] = None  # the status it ends its request in ("finished", "aborted"), if it ends one
    seq_id: int

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        EVENT_TYPES.setdefault(cls.kind, []).append(cls)

    def to_dict(self) -> dict:
        return {"kind": self.kind, **asdict(self)}


@dataclass(frozen=True)
class Admitted(Event):
    """Moved from waiting to running; `num_tokens` are computed this step, `num_cached_tokens` came from
    the prefix cache. `recompute` is true for a request that had been preempted."""
    kind: ClassVar[str] = "admitted"
    num_tokens: int
    num_cached_tokens: int
    recompute: bool


@dataclass(frozen=True)
class ChunkScheduled(Event):
    """Part of a prefill: tokens [start, start + num_tokens) of `total` are computed this step."""
    kind: ClassVar[str] = "chunk"
    start: int
    num_tokens: int
    total: int


@dataclass(frozen=True)
class Blocked(Event):
    """The head of the waiting queue stayed there; `reason` is one of BLOCKED_REASONS."""
    kind: ClassVar[str] = "blocked"
    reason: str
    needed: int
    available: float  # a count, but SGLang's budget (BudgetBlocked) is fractional


@dataclass(frozen=True)
class BudgetBlocked(Blocked):
    """SGLang's PrefillAdder refused the head of the waiting queue (reason "no_token": `needed` tokens, its
    extend, its future tokens and a page, against the `available` left of free + evictable slots after the
    `reserve` kept for the running requests' future tokens at `new_token_ratio`; "other": the input or chunk
    budget, `needed` input tokens against `available`). `locked`: the slots of its cached prefix that SGLang locked
    while it judged it, so they did not count as evictable in `available`."""
    reserve: float
    new_token_ratio: float
    locked: int = 0


@dataclass(frozen=True)
class Ordered(Event):
    """The waiting queue's policy (SGLang's `schedule_policy`) put this request first, before `ahead_of`, the
    earliest arrival still waiting; `num_prefix_tokens` its cached prefix (lpm's and dfs-weight's key) and
    `max_new_tokens` its output budget (lof's)."""
    kind: ClassVar[str] = "ordered"
    policy: str
    ahead_of: int
    num_prefix_tokens: int
    max_new_tokens: int


@dataclass(frozen=True)
class Retracted(Event):
    """SGLang's retract_decode: the decode of the running batch needed `needed` slots with `free` free (after
    evicting what the tree could give), so this request went back to the waiting queue, its slots freed;
    `new_token_ratio` is the reserve's ratio set after it (it decays again decode by decode)."""
    kind: ClassVar[str] = "retracted"
    needed: int
    free: int
    new_token_ratio: float
    freed_blocks: tuple[int, ...]


@dataclass(frozen=True)
class Preempted(Event):
    """Sent back to the head of waiting, its blocks freed, to make room for `for_seq_id`."""
    kind: ClassVar[str] = "preempted"
    for_seq_id: int
    policy: str
    freed_blocks: tuple[int, ...]


@dataclass(frozen=True)
class AdmittedAfterPreemption(Admitted):
    """An admission that recomputes a request SGLang's priority preemption sent back (see Preempted, policy
    "priority"), not one a retraction did; its kind stays "admitted"."""
    after_preemption: bool = True


@dataclass(frozen=True)
class PassEnded(Event):
    """`seq_id` preempted itself, which ended the pass over the running requests (vLLM 0.32; from 0.33 on, under
    the priority policy, the pass goes on): `skipped`, after it in the running queue, sit the step out."""
    kind: ClassVar[str] = "pass_ended"
    skipped: tuple[int, ...]


@dataclass(frozen=True)
class PrefixHit(Event):
    kind: ClassVar[str] = "prefix_hit"
    block_ids: tuple[int, ...]
    num_tokens: int


@dataclass(frozen=True)
class Evicted(Event):
    """Blocks taken for `seq_id` from the head of the free queue while they were still in the prefix cache (free
    but findable): their cached K/V is gone, no later request can hit it (the vLLM twin's pool)."""
    kind: ClassVar[str] = "evicted"
    block_ids: tuple[int, ...]


EVICTION_TRIGGERS = ("extend", "decode", "release")  # what a radix tree's eviction made room for (LeafEvicted)


@dataclass(frozen=True)
class LeafEvicted(Evicted):
    """A least-recently-used leaf of SGLang's radix tree evicted: its `tokens` and its units (`block_ids`, freed to
    be reused), no longer cached. `trigger` (EVICTION_TRIGGERS) says for what: "extend", the slots of the prefill
    batch `seq_id` heads; "decode", a decode's slots (`seq_id` heads the batch); "release", the room SGLang's
    `release_req` keeps for the decode steps of the requests left running after `seq_id` was sent back."""
    tokens: tuple[int, ...]
    trigger: str = "extend"


@dataclass(frozen=True)
class Unlocked(Event):
    """A request left (sent back or finished) and dropped its lock on its prefix in SGLang's radix tree: the
    units `block_ids` stay cached, now evictable, not freed."""
    kind: ClassVar[str] = "unlocked"
    block_ids: tuple[int, ...]


@dataclass(frozen=True)
class Finished(Event):
    kind: ClassVar[str] = "finished"
    ends: ClassVar[str | None] = "finished"
    reason: str


@dataclass(frozen=True)
class Aborted(Event):
    kind: ClassVar[str] = "aborted"
    ends: ClassVar[str | None] = "aborted"
    reason: str


@dataclass(frozen=True)
class Speculated(Event):
    """Draft tokens checked in this step's forward pass: the first `num_accepted` of `draft_token_ids` agreed
    with the model, which then added one token of its own."""
    kind: ClassVar[str] = "speculated"
    draft_token_ids: tuple[int, ...]
    num_accepted: int


@cache
def _field_names(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in fields(cls))


@cache
def _required_names(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING)


def event_from_dict(data: dict) -> Event:
    """The event of any registered kind whose fields `data` holds (lists read back as tuples); an event written
    before a field with a default was added takes the default."""
    values = {k: tuple(v) if type(v) is list else v for k, v in data.items() if k != "kind"}
    # read as plain classes: mypy takes a type[Event] argument of an @cache function for unhashable
    classes: Sequence[type] = EVENT_TYPES[data["kind"]]
    for cls in classes:
        if _field_names(cls) == values.keys():
            return cls(**values)
    for cls in classes:
        if _required_names(cls) <= values.keys() <= _field_names(cls):
            return cls(**values)
    raise ValueError(f"no {data['kind']} event has the fields {sorted(values)}")
