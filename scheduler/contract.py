"""The scheduler contract in code: what the engine, the recorder and the UI may ask of any scheduler and of its KV
pool, and what each scheduler declares about itself. The article's scheduler (scheduler/article/), the vLLM V1 twin
(scheduler/vllm_v1/), the SGLang twin (scheduler/sglang/, whose pool is a radix tree over token slots) and the vLLM
V0 twin (scheduler/vllm_v0/, with a swapped queue and a CPU pool) fit it, each a package of its own;
`scheduler/factory.py` is the one place that names them (one line each), docs/schedulers.md how to add one.

- `SchedulerInfo`: a scheduler's declaration (what it is, what it mirrors, which shared `Config` fields it reads and
  which settings are its own, how many KV units its runner needs, whether it queues a prompt larger than the pool,
  how its system is started). Modules outside scheduler/
  read this, never a kind's name.
- `KVPoolView`: the read-only view of a pool a frame is recorded from, for blocks or token slots alike: its
  units, each one's holders and state (free, used, cached), the free order as the pool states it, the cached
  units' keys, and the changes to the free order since the last look (`recent_changes`).
- `PanelKind`: a panel of the scheduler's own a kind declares (`SchedulerInfo.panels`: vLLM's SchedulerOutput, SGLang's
  radix tree, V0's phase and budget card and its watermark on the pool), recorded in a frame's one slot for them
  (`Frame.panels`) and drawn by the renderer the player registers under its id (player/panels.js), or, for a panel
  of one of the generic shapes (scheduler/panel_shapes.py), by that shape's.
- `SidePool`: a KV pool a kind declares beside its main one (`SchedulerInfo.side_pools`: V0's CPU pool), whose units
  a step's `Batch.block_copies` may copy blocks into and out of; a kind that declares queues or side pools beyond
  the ones every scheduler has also fits `KeepsQueues` or `KeepsSidePools`.
- `SchedulerProtocol`: the calls the engine makes (`add`, `abort`, `schedule() -> Batch`, `postprocess`,
  `reconfigure`, `requeue`; overlapped, `launch` and `land`), the queues it reads (the declared `queues`), its pools,
  `is_finished`, and its panels after a step (`panels()`).

Only the scheduler changes a request once it is added (its status, queue, units and computed tokens); everything
else reads. The invariants every kind keeps are checked in engine/check/invariants.py (`python -m engine check`), over
the factory in tests/test_scheduler_contract.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from collections.abc import Sequence as Seq
from dataclasses import dataclass, replace
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from scheduler.config import CONFIG_FIELDS, Config
from scheduler.panel_shapes import Shape
from scheduler.settings import KindSettings, SettingSpec, declared

if TYPE_CHECKING:
    from i18n import Message
    from scheduler.events import Aborted, Event
    from scheduler.interface import Batch
    from scheduler.sequence import Sequence

GPU_POOL = "gpu"  # the pool every scheduler has (its `pool`), the one the model's attention reads
QUEUES = ("running", "waiting")  # the queues every scheduler has, in the order the stage draws them


@dataclass(frozen=True)
class PanelKind:
    """A panel of a scheduler's own (its state as its system shows it, beside the stage), declared in
    `SchedulerInfo.panels`. `id` is what a frame records it under (`Frame.panels`), a trace writes and the player's
    one registry of renderers (player/panels.js) draws it by; `read` turns its recorded JSON data back into what
    `SchedulerProtocol.panels` gave (None: the data is plain JSON as it is); what it gave is written with its
    `to_dict()` where it has one. `words`: what the panel says in the kind's own terms, (what it is, its message
    id under the kind's prefix): vLLM's log line and counters on vLLM's SchedulerOutput.

    `shape`: one of the shapes every player draws for any kind (scheduler/panel_shapes.py: a `Card` of facts and
    meters, `PoolMarks` on a pool), where the panel is one: the kind then ships no renderer and no builder of its
    own (its data is read back by the shape, its words said by viz/panels.py)."""
    id: str
    read: Callable[[Any], Any] | None = None
    words: tuple[tuple[str, str], ...] = ()
    shape: Shape | None = None

    def to_data(self, value) -> Any:
        """The panel's recorded value as JSON data."""
        return value.to_dict() if hasattr(value, "to_dict") else value

    def from_data(self, data) -> Any:
        read = self.read or (self.shape.from_dict if self.shape else None)
        return data if read is None else read(data)


@dataclass(frozen=True)
class SidePool:
    """A KV pool beside the scheduler's main one (`GPU_POOL`), declared in `SchedulerInfo.side_pools`: `name` (what
    a block copy names, `interface.BlockCopy`; the stage's title is the message `player.side_pool.<name>`), `units`
    how many units it has under a config (the runner holds a tensor of as many blocks). The scheduler reads it through
    `KeepsSidePools.side_pool(name)`."""
    name: str
    units: Callable[[Config], int]


@dataclass(frozen=True)
class SchedulerInfo:
    """What a scheduler kind is, declared once beside its class (its `info`).

    `kind` is its factory key (written in links, scenario files and traces); `name` the message id of its display
    name (i18n: `<kind>.name`, and `<kind>.run_name` for a run of it: every message of a kind lives under
    its prefix, `message(key)`); `system` and `version` what it mirrors decision for decision
    ("nano-vllm" and "" for the article's, which follows it without claiming a version); `honoured` the shared
    `Config` fields it reads (the others are shown as ignored); `settings` its own settings (a `KindSettings` class
    beside it, scheduler/settings.py: each field's type, range, default, command-line name and message ids), which
    the sidebar, links, scenario files, traces, the policy lab and handouts read; `reserved_units` the KV units its
    runner holds beyond `num_kvcache_blocks` (vLLM's null block: 1); `queues_oversized_prompt` whether a prompt larger
    than the whole pool is queued (it then waits for good, as in vLLM) rather than refused on arrival;
    `version_setting` its own setting that picks the release it mirrors, one of `versions` (the vLLM twin's
    `vllm_version`; `version` is then that setting's default), or "" when it mirrors one; `sampling` the request
    fields of vLLM's SamplingParams it honours (`stop_token_ids`, `min_tokens`), which the add-request form offers
    only for it; `labels` the system's own name of a shared field it reads with the same meaning (SGLang's
    `max_running_requests` for `max_num_seqs`), which the sidebar and exports show; `repoints_tables` whether
    postprocess may change a request's block table in place (SGLang points a row at the tree's copy of a prefix
    another request inserted first), so a reader must read tables again after it; `launch` how a run of it starts on
    the system it mirrors (the policy lab's export; the article's: the closest vLLM command); `start_warning` the
    mirrored system's start-up check of a config (vLLM's: one request of max_model_len fits in the pool), the warning
    the sidebar shows when it fails; `sidebar_note` the message id of what the sidebar says of how it picks a
    preemption victim, where the article's choice of one is not its own; `workload` the name of a scenario
    file's workload generator that is its own (the requests its system's source ran: the article's, "notebook",
    the InfraTech notebook's demos, engine/inputs/notebook.py), which a scenario file may also name by the kind's
    id (older files do), "" for none. `output_budget` the outputs a request may still write, where its system clips
    what it asks as it arrives (`output_budget(config, num_tokens, max_new_tokens)`: SGLang's
    init_req_max_new_tokens, to the context length and the pool; a request requeued into a rebuilt pool arrives
    again), which the referee holds a trace's length ends to (engine/check/referee.py); None: its max_tokens.

    What the stage draws of it: `queues` the request queues it keeps, drawn in this order (each beyond `QUEUES` read
    from `KeepsQueues.queue`; its title is the message `player.<name>_queue`), `side_pools` its KV pools beside
    the main one, `panels` its own panels (`PanelKind`), and `words` the message ids (under its own prefix) the stage
    says of its pool and queues in its own terms: `reserved_pool` (its reserved units in the pool's title),
    `reserved_unit` (a reserved unit's tip), `queue_limit` (what max_num_seqs limits). `tour`: what the
    learning-path tour says of it and where its system decides (None: the tour shows its stage without them)."""
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
    settings: type[KindSettings] | None = None
    launch: Launch | None = None
    start_warning: Callable[[Config], Message | None] | None = None
    sidebar_note: str = ""
    # The configs under which the system it mirrors may itself never end a run (V0's chunked-prefill livelocks):
    # its twin then does the same, and the contract's tests do not ask such a run to end.
    stalls: Callable[[Config], bool] | None = None
    output_budget: Callable[[Config, int, int], int] | None = None
    tour: TourInfo | None = None
    workload: str = ""
    queues: tuple[str, ...] = QUEUES
    side_pools: tuple[SidePool, ...] = ()
    panels: tuple[PanelKind, ...] = ()
    words: tuple[tuple[str, str], ...] = ()  # (what the stage says, its message id under `<kind>.`)

    def __post_init__(self):
        unknown = self.honoured - set(CONFIG_FIELDS)
        if unknown:
            raise ValueError(f"{self.kind}: honours fields Config does not share: {sorted(unknown)}")
        if self.version_setting and self.version_setting not in {s.key for s in self.own_settings}:
            raise ValueError(f"{self.kind}: its version_setting {self.version_setting!r} is none of its settings")
        unread = {f for f, _ in self.labels} - self.honoured
        if unread:
            raise ValueError(f"{self.kind}: names fields it does not read: {sorted(unread)}")
        if not set(QUEUES) <= set(self.queues):
            raise ValueError(f"{self.kind}: declares queues {self.queues}, without {QUEUES}")

    def derive(self, kind: str, system: str = "", **changes) -> SchedulerInfo:
        """The declaration of a kind of one's own built on this one (its class a subclass of this kind's): its id,
        the system it names (its id where none is given), no version, tour or workload of this kind's, the rest
        (settings, queues, panels...) as declared here unless `changes` says otherwise. The least a scheduler of
        one's own declares: `info = Scheduler.info.derive("mine")` (docs/schedulers.md)."""
        return replace(self, kind=kind, system=system or kind, version="", tour=None, workload="", **changes)

    def setting_name(self, field: str) -> str:
        """The name this scheduler's system gives the Config field (the field's own name where it gives none)."""
        return dict(self.labels).get(field, field)

    def message(self, key: str) -> str:
        """The id of its message `key`: a kind's words live under its own prefix in the catalogues (`<kind>.`)."""
        return f"{self.kind}.{key}"

    @property
    def name(self) -> str:
        """The message id of its display name ("vLLM V1")."""
        return self.message("name")

    @property
    def run_name(self) -> str:
        """The message id of what a run of it is called ("the vLLM twin")."""
        return self.message("run_name")

    @property
    def ignored(self) -> tuple[str, ...]:
        """The shared Config fields it does not read, in Config's order."""
        return tuple(f for f in CONFIG_FIELDS if f not in self.honoured)

    def reads(self, key: str) -> bool:
        """Whether it reads the setting `key`: a shared one it honours, or one of its own."""
        return key in self.honoured or any(spec.key == key for spec in self.own_settings)

    @property
    def own_settings(self) -> tuple[SettingSpec, ...]:
        """Its own settings, as its `settings` class declares them."""
        return declared(self.settings) if self.settings is not None else ()

    def as_read(self, config: Config) -> Config:
        """`config` as this scheduler reads it: the shared fields it ignores at their defaults, no other kind's
        settings (two configs that differ only elsewhere make one run under it)."""
        default = Config()
        return Config(sections=(config.of(self.settings),) if self.settings else (),
                      **{f: getattr(default if f in self.ignored else config, f) for f in CONFIG_FIELDS})

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
        version = config.value(self.version_setting) if self.version_setting else self.version
        return DecidedBy(self.kind, self.system, version)


@dataclass(frozen=True)
class TourInfo:
    """What the learning-path tour (engine/analysis/tour.py) shows of a kind: `summary`, the message id of one line
    on it (under the kind's own prefix); `source`, the address of its system's code at a pinned release; `lines`,
    per decision it makes ("admit", "resume", "preempt", "chunk", "retract", "wait" for a request held back,
    "batch" for how the step's batch is formed), the file and lines under `source` that decide it."""
    summary: str
    source: str
    lines: tuple[tuple[str, str], ...] = ()

    def link(self, decision: str) -> str | None:
        """The address of the lines deciding `decision`; None where its system has none (a notebook without
        chunked prefill)."""
        where = dict(self.lines).get(decision)
        return f"{self.source}/{where}" if where else None


@dataclass(frozen=True)
class Launch:
    """How a run starts on the system a kind mirrors, as the policy lab's export writes it: the system's name (the
    export's heading), `command(config, model, overlapped scheduling)` its shell words, and `notes(config)` why they
    read as they do (and where the run's scheduler decides otherwise), one message each."""
    system: str
    command: Callable[[Config, str, bool], list[str]]
    notes: Callable[[Config], list[Message]]


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
    @property
    def unit_name(self) -> str:
        """What a unit is called: "block", "page" or "token slot" (a class's constant, or the pool's own)."""

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
class SidePoolView(Protocol):
    """The read-only view of a side pool (`SidePool`): its units and the request holding each (None: free)."""

    @property
    def unit_ids(self) -> range: ...

    def holder(self, unit_id: int) -> int | None: ...


@runtime_checkable
class KeepsQueues(Protocol):
    """What a scheduler that declares queues beyond `QUEUES` (`SchedulerInfo.queues`) offers besides
    `SchedulerProtocol`."""

    def queue(self, name: str) -> Seq[Sequence]:
        """A declared queue beyond running and waiting (V0's swapped), head first."""


@runtime_checkable
class KeepsSidePools(Protocol):
    """What a scheduler that declares side pools (`SchedulerInfo.side_pools`) offers besides `SchedulerProtocol`."""

    def side_pool(self, name: str) -> SidePoolView: ...


@runtime_checkable
class SchedulerProtocol(Protocol):
    """A scheduler as the engine drives it. Requests are the engine's `Sequence`s; the scheduler alone changes them
    once added."""
    info: ClassVar[SchedulerInfo]
    config: Config

    def __init__(self, config: Config): ...

    @property
    def num_preemptions(self) -> int:
        """Preemptions so far (read, never set, by the engine)."""

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

    def panels(self) -> dict[str, Any]:
        """Its declared panels after the last schedule() (`info.panels`), by id: vLLM's SchedulerOutput of the
        step, SGLang's radix tree; {} for a scheduler that declares none (what a frame records in `panels`)."""


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
