"""The scheduler contract in code: what the engine, the recorder and the UI may ask of any scheduler and of its KV
pool, and what each scheduler declares about itself. The article's scheduler (scheduler/scheduler.py), the vLLM
twin (scheduler/vllm_v1/) and any later one (an SGLang twin, whose pool is a radix tree over token slots) fit it;
`scheduler/factory.py` is the one place that names them.

- `SchedulerInfo`: a scheduler's declaration (what it is, what it mirrors, which `Config` fields it reads, how
  many KV units its runner needs, whether it queues a prompt larger than the pool). Modules outside scheduler/
  read this, never a kind's name.
- `KVPoolView`: the read-only view of a pool a frame is recorded from, for blocks or token slots alike: its
  units, each one's holders and state (free, used, cached), the free order as the pool states it, the cached
  units' keys, and the changes to the free order since the last look (`recent_changes`).
- `SchedulerProtocol`: the calls the engine makes (`add`, `abort`, `schedule() -> Batch`, `postprocess`,
  `reconfigure`, `requeue`; overlapped, `launch` and `land`), the queues it reads, `is_finished`, and what it records
  of the scheduler's own beside the frame (`scheduler_output`, `scheduler_view`: None where it offers none).

Only the scheduler changes a request once it is added (its status, queue, units and computed tokens); everything
else reads. The invariants every kind keeps are checked over the factory in tests/test_scheduler_contract.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from collections.abc import Sequence as Seq
from dataclasses import dataclass, replace
from enum import Enum
from typing import TYPE_CHECKING, ClassVar, Protocol, runtime_checkable

from scheduler.config import CONFIG_FIELDS, Config

if TYPE_CHECKING:
    from scheduler.events import Aborted, Event
    from scheduler.interface import Batch
    from scheduler.output import SchedulerOutput
    from scheduler.sequence import Sequence


@dataclass(frozen=True)
class SchedulerInfo:
    """What a scheduler kind is, declared once beside its class (its `info`).

    `kind` is its factory key (written in links, scenario files and traces); `name` the message id of its display
    name (i18n: `sidebar.scheduler.<kind>`); `system` and `version` what it mirrors decision for decision
    ("nano-vllm" and "" for the article's, which follows it without claiming a version); `honoured` the `Config`
    fields it reads (the others are shown as ignored); `reserved_units` the KV units its runner holds beyond
    `num_kvcache_blocks` (vLLM's null block: 1); `queues_oversized_prompt` whether a prompt larger than the
    whole pool is queued (it then waits for good, as in vLLM) rather than refused on arrival; `version_setting`
    the Config field that picks the release it mirrors, one of `versions` (the vLLM twin's `vllm_version`;
    `version` is then that field's default), or "" when it mirrors one; `sampling` the request fields of vLLM's
    SamplingParams it honours (`stop_token_ids`, `min_tokens`), which the add-request form offers only for it;
    `labels` the system's own name of a Config field it reads with the same meaning (SGLang's
    `max_running_requests` for `max_num_seqs`), which the sidebar and exports show; `repoints_tables` whether
    postprocess may change a request's block table in place (SGLang points a row at the tree's copy of a prefix
    another request inserted first), so a reader must read tables again after it; `command` the shell words that
    start the system it mirrors, other than vLLM (whose `vllm serve` line engine/analysis/vllm_args.py writes for
    every run), with a run's config, for (config, model, overlapped scheduling); `words` the prefix of the message
    ids of the words only it says (i18n: `<words>.narrate.*`: its events' sentences, its reasons), which the
    narration looks up through this declaration, "" when it says only the shared ones."""
    kind: str
    system: str
    version: str
    honoured: frozenset[str]
    reserved_units: int = 0
    queues_oversized_prompt: bool = False
    version_setting: str = ""
    versions: tuple[str, ...] = ()
    sampling: frozenset[str] = frozenset()  # vLLM's SamplingParams fields it reads beyond max_tokens and ignore_eos
    labels: tuple[tuple[str, str], ...] = ()  # (Config field, the system's name for it)
    repoints_tables: bool = False
    command: Callable[[Config, str, bool], list[str]] | None = None
    words: str = ""

    def __post_init__(self):
        unknown = self.honoured - set(CONFIG_FIELDS)
        if unknown:
            raise ValueError(f"{self.kind}: honours fields Config does not have: {sorted(unknown)}")
        unread = {f for f, _ in self.labels} - self.honoured
        if unread:
            raise ValueError(f"{self.kind}: names fields it does not read: {sorted(unread)}")

    def setting_name(self, field: str) -> str:
        """The name this scheduler's system gives the Config field (the field's own name where it gives none)."""
        return dict(self.labels).get(field, field)

    @property
    def name(self) -> str:
        """The message id of its display name."""
        return f"sidebar.scheduler.{self.kind}"

    @property
    def ignored(self) -> tuple[str, ...]:
        """The Config fields it does not read, in Config's order."""
        return tuple(f for f in CONFIG_FIELDS if f not in self.honoured)

    def runner_config(self, config: Config) -> Config:
        """The config a runner's KV cache is sized from: the pool's blocks and the reserved ones."""
        return replace(config, num_kvcache_blocks=config.num_kvcache_blocks + self.reserved_units) \
            if self.reserved_units else config

    @property
    def decided_by(self) -> DecidedBy:
        """What a trace and its frames record of the scheduler that decided them (at its default release)."""
        return DecidedBy(self.kind, self.system, self.version)

    def decided_under(self, config: Config) -> DecidedBy:
        """What a run started under `config` records: the release `config` picks, where the scheduler offers one."""
        version = getattr(config, self.version_setting) if self.version_setting else self.version
        return DecidedBy(self.kind, self.system, version)


@dataclass(frozen=True)
class DecidedBy:
    """Which scheduler decided a run, as its trace and each of its frames record it: its kind, and the system and
    version it mirrored then (a trace from an older twin keeps the version it was decided under)."""
    kind: str
    system: str
    version: str

    def to_dict(self) -> dict:
        return {"kind": self.kind, "system": self.system, "version": self.version}


class UnitState(Enum):
    """A KV unit's state: held by a request (or reserved), free and empty, or free with reusable content."""
    USED = "used"
    FREE = "free"
    CACHED = "cached"


@dataclass(frozen=True, slots=True)
class PoolChanges:
    """How the free order changed since the pool was last asked (`KVPoolView.recent_changes`), as the pool states
    it. `to_head` and `to_tail`: units placed at the head (taken or evicted next) or the tail of the free order, in
    the order they were placed (a unit placed twice counts where it was placed last; one taken again since is
    listed too, the reader skips units no longer free). `evicted`: units whose cached content was dropped (to be
    reused). `reordered`: the pool moved free units otherwise (an LRU touch inside the order); the reader then
    reads `free_order()` whole instead."""
    to_head: tuple[int, ...] = ()
    to_tail: tuple[int, ...] = ()
    evicted: tuple[int, ...] = ()
    reordered: bool = False


@runtime_checkable
class KVPoolView(Protocol):
    """The read-only view of a scheduler's KV pool, general enough for blocks or token slots.

    A unit is what a request's table lists (a block of `tokens_per_unit` tokens, or one token slot). Every unit
    id in `unit_ids` is used, free or cached; `reserved_unit_ids` are used by no request (vLLM's null block). A
    unit's owners are the requests whose `block_table` lists it, in the scheduler's queues (a frame's
    `block_owners`); `unit_state` counts them. The free order is the pool's own: its head is the unit taken (or
    evicted) next; a radix tree's is its eviction order over the units no request holds."""
    unit_name: ClassVar[str]  # "block" or "token slot"

    @property
    def tokens_per_unit(self) -> int: ...

    @property
    def num_units(self) -> int:
        """Units a request may hold (the reserved ones are not counted)."""

    @property
    def unit_ids(self) -> range:
        """Every unit id, the reserved ones included."""

    @property
    def reserved_unit_ids(self) -> tuple[int, ...]: ...

    @property
    def num_free_units(self) -> int:
        """Units an allocation may take now: the free ones and the cached ones."""

    @property
    def num_prefix_queries(self) -> int:
        """Full units of prompts looked up in the prefix cache so far (the hit rate's denominator)."""

    @property
    def num_prefix_hits(self) -> int: ...

    def unit_state(self, unit_id: int) -> tuple[int, int | None]:
        """How many holders the unit has (a reserved unit counts one) and its cache key (None when it has none)."""

    def state(self, unit_id: int) -> UnitState: ...

    def free_order(self) -> Iterable[int]:
        """The free and cached units, head first: the order the pool takes (and evicts) them in."""

    def cached_keys(self) -> Mapping[int, int]:
        """Unit id -> cache key, for every unit holding reusable content (held by a request or not)."""

    def recent_changes(self) -> PoolChanges:
        """The changes to the free order since the previous call (its one reader is the engine's recorder)."""


@runtime_checkable
class SchedulerProtocol(Protocol):
    """A scheduler as the engine drives it. Requests are the engine's `Sequence`s; the scheduler alone changes them
    once added."""
    info: ClassVar[SchedulerInfo]
    config: Config
    num_preemptions: int

    def __init__(self, config: Config): ...

    @property
    def pool(self) -> KVPoolView: ...

    @property
    def waiting_seqs(self) -> Seq[Sequence]:
        """The waiting queue, head first (the next to be admitted first)."""

    @property
    def running_seqs(self) -> Seq[Sequence]:
        """The running requests, in the scheduler's order."""

    def add(self, seq: Sequence) -> None:
        """Queue a new request; one that could never run is refused (`interface.RequestRejected`)."""

    def abort(self, seq: Sequence, reason: str) -> Aborted:
        """End a request it holds, ABORTED for `reason` (a message), its units freed."""

    def schedule(self) -> Batch: ...

    def scheduler_output(self) -> SchedulerOutput | None:
        """The last schedule()'s step as vLLM's SchedulerOutput lists it (scheduler/output.py), with vLLM's
        per-request counters; None for a scheduler that keeps none (what a frame records as its `output`)."""

    def scheduler_view(self) -> dict | None:
        """What the stage draws of the scheduler's own state after the step, as plain JSON data (SGLang's radix
        tree, scheduler/sglang/tree_view.py); None for one that offers none (what a frame records as its `view`)."""

    def postprocess(self, seqs: list[Sequence], token_ids: list) -> list[Event]: ...

    def reconfigure(self, config: Config) -> None:
        """The next steps run under `config` (the pool's shape, `interface.POOL_SHAPE`, unchanged)."""

    def requeue(self, seqs: list[Sequence]) -> list[Aborted]:
        """Queue requests that lost their units with another scheduler's pool (`interface.requeue`)."""

    def launch(self, seqs: list[Sequence], outputs: list) -> list[Event]:
        """Overlapped: the batch went to the model, its tokens still unknown (PLACEHOLDER)."""

    def land(self, landed: list[tuple[Sequence, int, int]]
             ) -> tuple[list[tuple[Sequence, tuple[int, ...]]], list[Sequence]]:
        """Overlapped: the step in flight returned; those that finished late, with the units freed for them."""

    def is_finished(self) -> bool: ...
