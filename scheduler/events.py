"""The scheduler's events: what it decided in one step and why (returned by schedule() with each batch and by
postprocess()), as data the UI narrates from."""

from dataclasses import asdict, dataclass
from typing import ClassVar

# Why the request at the head of the waiting queue was not admitted this step.
BLOCKED_REASONS = ("token_budget", "blocks", "max_num_seqs", "decode_first", "preempted_this_step")
# Why a request finished.
FINISH_REASONS = ("eos", "max_tokens", "max_model_len")


@dataclass(frozen=True)
class Event:
    kind: ClassVar[str] = "event"
    seq_id: int

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
    available: int


@dataclass(frozen=True)
class Preempted(Event):
    """Sent back to the head of waiting, its blocks freed, to make room for `for_seq_id`."""
    kind: ClassVar[str] = "preempted"
    for_seq_id: int
    policy: str
    freed_blocks: tuple[int, ...]


@dataclass(frozen=True)
class PrefixHit(Event):
    kind: ClassVar[str] = "prefix_hit"
    block_ids: tuple[int, ...]
    num_tokens: int


@dataclass(frozen=True)
class Finished(Event):
    kind: ClassVar[str] = "finished"
    reason: str


@dataclass(frozen=True)
class Aborted(Event):
    kind: ClassVar[str] = "aborted"
    reason: str


@dataclass(frozen=True)
class Speculated(Event):
    """Draft tokens checked in this step's forward pass: the first `num_accepted` of `draft_token_ids` agreed
    with the model, which then added one token of its own."""
    kind: ClassVar[str] = "speculated"
    draft_token_ids: tuple[int, ...]
    num_accepted: int


EVENT_TYPES = {cls.kind: cls for cls in
               (Admitted, ChunkScheduled, Blocked, Preempted, PrefixHit, Finished, Aborted, Speculated)}


def event_from_dict(data: dict) -> Event:
    fields = dict(data)
    cls = EVENT_TYPES[fields.pop("kind")]
    for name in ("freed_blocks", "block_ids", "draft_token_ids"):
        if name in fields:
            fields[name] = tuple(fields[name])
    return cls(**fields)
