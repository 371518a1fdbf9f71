"""The vLLM V0 twin: vLLM 0.10.2's V0 `Scheduler` (vllm/core/scheduler.py), decision for decision and block for
block, behind the engine's contract (scheduler/contract.py) as far as today's contract reaches. Read beside V0's:

- three queues of `SequenceGroup`s: `waiting` (new and recompute-preempted), `running`, `swapped`;
- `_schedule_default` (chunked prefill off): a step is a prefill step or a decode step. `_schedule_prefills` runs
  only while nothing is swapped; if it admitted nothing, under the priority policy
  `_schedule_priority_preemption`, then `_schedule_running` (decodes, preempting the tail of running while
  `can_append_slots` fails) and, only if that preempted nobody, `_schedule_swapped` (swap-ins);
- `_schedule_chunked_prefill`: one budget, `_schedule_running` with chunking, `_schedule_swapped` if nobody was
  preempted, then `_schedule_prefills` with chunking (partial prefills, PartialPrefillMetadata);
- `_preempt`: recompute (`preemption_mode` unset or "recompute") or swap (`_swap_out`, which raises V0's
  RuntimeError when the CPU pool cannot take the blocks); `_swap_in`;
- the block space manager (block_manager.py): `can_allocate` OK / LATER / NEVER with the watermark, the
  one-free-block rule of `can_append_slots`, swaps, prefix caching with the LRU evictor.

`schedule()` returns the engine's `Batch` (V0's scheduled order, token_chunk_size per group) and keeps V0's
`SchedulerOutputs` (`outputs`: blocks_to_swap_out / blocks_to_swap_in, ignored, preempted...); the step's swaps
are the batch's `block_copies` (V0's worker swaps in, then out). It declares its third queue (`queue("swapped")`)
and its CPU pool (`side_pool("cpu")`, a `SidePool`), its settings (`V0Settings`), its `vllm serve` line and its
tour; overlapped, a step's tokens land a step late (`launch` / `land`, the engine's late landing: V0's own async
output processor is not modelled). The LRU stamps are the step number (V0 stamps time.time()
once per schedule(); any clock that grows between steps decides the same)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from operator import attrgetter
from typing import ClassVar

from scheduler.config import Config
from scheduler.contract import GPU_POOL, QUEUES, SchedulerInfo, SidePool
from scheduler.events import Aborted, Admitted, Blocked, ChunkScheduled, Event, Evicted, Finished, PrefixHit
from scheduler.interface import Batch, BlockCopy, refuse, requeue
from scheduler.sequence import Sequence, SequenceStatus
from scheduler.vllm_v0.block_manager import AllocStatus, BlockSpaceManager
from scheduler.vllm_v0.budget import PartialPrefillMetadata, SchedulingBudget
from scheduler.vllm_v0.events import (
    STEP,
    AllocBlocked,
    Ignored,
    PreemptedV0,
    StepPhase,
    SwapInBlocked,
    SwappedIn,
    SwappedOut,
)
from scheduler.vllm_v0.launch import V0_LAUNCH, v0_start_warning
from scheduler.vllm_v0.panels import STEP_PANEL, WATERMARK_PANEL, step_card, watermark_marks
from scheduler.vllm_v0.pool import CpuPoolView, V0PoolView
from scheduler.vllm_v0.sequence_group import SequenceGroup, V0Status
from scheduler.vllm_v0.settings import V0Config, V0Settings
from scheduler.vllm_v0.tour import TOUR

PRIORITY = attrgetter("priority_key")
SWAPPED, CPU_POOL = "swapped", "cpu"  # its third queue and its side pool, as it declares them
CPU_SWAP_SPACE_ERROR = ("Aborted due to the lack of CPU swap space. Please increase the swap space to avoid this "
                        "error.")


def _cpu_blocks(config: Config) -> int:
    return V0Config.from_config(config).cpu_blocks


class CpuSwapSpaceError(RuntimeError):
    """V0's RuntimeError when a swap-out finds the CPU pool too full (its words): the step is lost, V0's engine
    stops; the twin's queues are left as they were when it was raised."""


@dataclass
class SchedulerOutputs:
    """V0's SchedulerOutputs for the last step: `scheduled` (group, token_chunk_size) in V0's order, the swap and
    copy pairs (CPU blocks by their number in the CPU pool), the ignored groups, the preempted count."""
    scheduled: list[tuple[SequenceGroup, int]] = field(default_factory=list)
    num_prefill_groups: int = 0
    num_batched_tokens: int = 0
    blocks_to_swap_in: list[tuple[int, int]] = field(default_factory=list)
    blocks_to_swap_out: list[tuple[int, int]] = field(default_factory=list)
    blocks_to_copy: list[tuple[int, int]] = field(default_factory=list)
    ignored: list[SequenceGroup] = field(default_factory=list)
    preempted: int = 0
    computed_block_nums: list[list[int]] = field(default_factory=list)  # per scheduled group: blocks to skip


@dataclass
class _Part:
    """What one of _schedule_running / _schedule_swapped / _schedule_prefills scheduled."""
    decode: list[tuple[SequenceGroup, int]] = field(default_factory=list)
    prefill: list[tuple[SequenceGroup, int]] = field(default_factory=list)
    preempted: list[SequenceGroup] = field(default_factory=list)
    swapped_out: list[SequenceGroup] = field(default_factory=list)
    ignored: list[SequenceGroup] = field(default_factory=list)
    blocks: list[tuple[int, int]] = field(default_factory=list)


class VllmV0Scheduler:
    """vLLM 0.10.2's V0 Scheduler for the engine. Built from the engine's `Config` (its fields under V0's names,
    V0Config.from_config) or from a `V0Config` with V0's own settings (preemption mode, CPU blocks, partial
    prefills)."""
    info: ClassVar[SchedulerInfo] = SchedulerInfo("vllm_v0", "vLLM V0", "0.10.2", frozenset({
        "max_num_seqs", "max_num_batched_tokens", "max_model_len", "num_kvcache_blocks", "kvcache_block_size", "eos",
        "enable_prefix_caching", "chunked_prefill", "queue_policy"}), queues_oversized_prompt=True,
        start_warning=v0_start_warning,
        sampling=frozenset({"stop_token_ids", "min_tokens"}), settings=V0Settings, launch=V0_LAUNCH,
        labels=(("num_kvcache_blocks", "num_gpu_blocks_override"), ("kvcache_block_size", "block_size"),
                ("chunked_prefill", "enable_chunked_prefill"), ("queue_policy", "scheduling_policy")),
        sidebar_note="vllm_v0.victim", queues=(*QUEUES, SWAPPED), side_pools=(SidePool(CPU_POOL, _cpu_blocks),),
        panels=(STEP_PANEL, WATERMARK_PANEL), words=(("queue_limit", "vllm_v0.queue_limit"),), tour=TOUR,
        # V0 livelocks under chunked prefill: a prefill needing every block preempts itself forever, and prefix
        # caching's blocks can cut a chunk to nothing
        stalls=lambda config: config.chunked_prefill)

    config: Config  # the engine's, where it was built from one (not from a V0Config alone: V0's own checks)

    def __init__(self, config: Config | V0Config):
        if isinstance(config, Config):
            self.config = config
        v0 = self.v0 = config if isinstance(config, V0Config) else V0Config.from_config(config)
        self.block_manager = BlockSpaceManager(v0.block_size, v0.num_gpu_blocks, v0.cpu_blocks, v0.watermark,
                                               v0.enable_prefix_caching)
        self.waiting: deque[SequenceGroup] = deque()
        self.running: deque[SequenceGroup] = deque()
        self.swapped: deque[SequenceGroup] = deque()
        self.groups: dict[int, SequenceGroup] = {}  # every group waiting, running or swapped
        self.num_cumulative_preemption = 0
        self.outputs = SchedulerOutputs()
        self._step = 0
        self._phase: StepPhase | None = None
        self._partial: tuple[int, int, int] | None = None  # chunked prefill's partial prefills this step
        self._decided_with: tuple | None = None  # what the last step decided with, for its card (panels())
        self._events: list[Event] = []
        self._pool = V0PoolView(self.block_manager.gpu)
        self._cpu_pool = V0PoolView(self.block_manager.cpu)

    # -- the read-only views (SchedulerProtocol, and what the contract does not hold yet) --------------------

    @property
    def num_preemptions(self) -> int:
        return self.num_cumulative_preemption

    @property
    def pool(self) -> V0PoolView:
        return self._pool

    @property
    def cpu_pool(self) -> V0PoolView:
        """The CPU block pool swapped-out requests' blocks wait in."""
        return self._cpu_pool

    @property
    def waiting_seqs(self) -> list[Sequence]:
        return [g.seq for g in self.waiting]

    @property
    def running_seqs(self) -> list[Sequence]:
        return [g.seq for g in self.running]

    @property
    def swapped_seqs(self) -> list[Sequence]:
        """The swapped queue, head first (the next to be swapped in)."""
        return [g.seq for g in self.swapped]

    def queue(self, name: str) -> list[Sequence]:
        """Its declared queue beyond running and waiting: swapped (KeepsQueues)."""
        if name != SWAPPED:
            raise KeyError(f"vllm_v0 keeps no queue {name!r}")
        return self.swapped_seqs

    def side_pool(self, name: str) -> CpuPoolView:
        """Its declared side pool: the CPU blocks swapped-out requests wait in (KeepsSidePools)."""
        if name != CPU_POOL:
            raise KeyError(f"vllm_v0 keeps no side pool {name!r}")
        return CpuPoolView(self.block_manager.cpu.num_blocks,
                           {unit: g.request_id for g in self.swapped for unit in self.cpu_block_table(g.seq)})

    def cpu_block_table(self, seq: Sequence) -> list[int]:
        """A swapped-out request's blocks, by their number in the CPU pool ([] unless it is swapped out)."""
        group = self.groups.get(seq.seq_id)
        if group is None or group.status is not V0Status.SWAPPED:
            return []
        first = self.block_manager.cpu.first_id
        return [b - first for b in self.block_manager.block_tables[seq.seq_id].ids]

    @property
    def blocks_to_swap_out(self) -> list[tuple[int, int]]:
        return self.outputs.blocks_to_swap_out

    @property
    def blocks_to_swap_in(self) -> list[tuple[int, int]]:
        return self.outputs.blocks_to_swap_in

    def is_finished(self) -> bool:
        return not (self.waiting or self.running or self.swapped)

    def panels(self) -> dict:
        """Its panels after a step (panels.py, in the generic shapes): the step's card (its phase and why, its
        SchedulingBudget as it ended, the blocks evicted for decodes or swap-ins) and the watermark on the GPU pool.
        (Its swaps are the batch's block copies.) Built when asked, from what schedule() kept: a step's scheduling
        pays for no card."""
        bm = self.block_manager
        panels: dict = {}
        if self._decided_with is not None:
            panels[STEP_PANEL.id] = step_card(*self._decided_with)
        marks = watermark_marks(bm.watermark_blocks, bm.num_total_gpu_blocks)
        if marks is not None:
            panels[WATERMARK_PANEL.id] = marks
        return panels

    # -- requests --------------------------------------------------------------------------------------------

    def add(self, seq: Sequence):
        """V0's add_seq_group: to the tail of waiting. V0's engine refuses an empty prompt or one longer than
        max_model_len before the scheduler sees it (RequestRejected here)."""
        if seq.seq_id in self.groups:
            raise ValueError(f"request {seq.seq_id} is already in this scheduler; add a request once")
        n = len(seq.token_ids)
        if n == 0:
            refuse(seq, "abort.empty_prompt")
        if n > self.v0.max_model_len:
            refuse(seq, "abort.no_room", n=n, max_model_len=self.v0.max_model_len)
        seq.status = SequenceStatus.WAITING
        group = self.groups[seq.seq_id] = SequenceGroup(seq, self.v0.block_size)
        self.waiting.append(group)

    def abort(self, seq: Sequence, reason: str) -> Aborted:
        """V0's abort_seq_group: out of its queue, its blocks freed (FINISHED_ABORTED)."""
        group = self.groups.pop(seq.seq_id)
        queue = {V0Status.RUNNING: self.running, V0Status.SWAPPED: self.swapped}.get(group.status, self.waiting)
        queue.remove(group)
        if group.status is V0Status.SWAPPED:
            self.block_manager.free_swapped(group)
        else:
            self.block_manager.free(group)
        group.status = V0Status.FINISHED_ABORTED
        seq.status, seq.finish_reason, seq.num_scheduled_tokens = SequenceStatus.ABORTED, reason, 0
        seq.block_table = []
        return Aborted(seq.seq_id, reason)

    def requeue(self, seqs: list[Sequence]) -> list[Aborted]:
        return requeue(self, seqs)

    def reconfigure(self, config: Config | V0Config):
        """The next steps run under `config`, the queues and both pools kept: a config that changes a pool (its
        blocks, block size, CPU blocks, or prefix caching, which V0 sets up with the pool) is refused."""
        v0 = config if isinstance(config, V0Config) else \
            V0Config.from_config(config, num_cpu_blocks=self.block_manager.cpu.num_blocks)
        changed = [f for f in ("num_gpu_blocks", "block_size", "cpu_blocks", "enable_prefix_caching")
                   if getattr(v0, f) != getattr(self.v0, f)]
        if changed:
            raise ValueError(f"{changed} change V0's block pools: build a new scheduler and requeue() its requests")
        if isinstance(config, Config):
            self.config = config
        self.v0 = v0

    @property
    def _budget_lookup(self) -> list[int]:
        """V0's partial_prefill_budget_lookup_list: the budget, then the budget split between 1, 2, ... prefills."""
        batched = self.v0.batched_tokens
        return [batched] + [batched // i for i in range(1, self.v0.max_num_partial_prefills + 1)]

    # -- one step: V0's schedule() ------------------------------------------------------------------------------

    def schedule(self) -> Batch:
        """V0's schedule(): `_schedule()`, then the LRU stamps of every scheduled sequence's blocks and the blocks
        cached this step marked computed. Raises CpuSwapSpaceError as V0 raises its RuntimeError."""
        self._step += 1
        events: list[Event] = []
        self._events, self._partial = events, None  # (a step without chunked prefill has no partial prefills)
        outputs = self.outputs = self._schedule_chunked_prefill() if self.v0.enable_chunked_prefill \
            else self._schedule_default()
        bm = self.block_manager
        seqs, counts, num_prefills = [], [], 0
        for group, chunk in outputs.scheduled:
            bm.access(group, self._step)
            outputs.computed_block_nums.append(bm.common_computed_block_ids(group))
            seq = group.seq
            seq.num_scheduled_tokens = chunk
            seq.block_table = bm.block_tables[group.request_id].ids
            if group.is_prefill:
                num_prefills += 1
                if seq.num_computed_tokens + chunk < len(seq.token_ids):
                    events.append(ChunkScheduled(seq.seq_id, seq.num_computed_tokens, chunk, len(seq.token_ids)))
            seqs.append(seq)
            counts.append(chunk)
        if outputs.scheduled:
            bm.gpu.mark_computed()
        self._decided_with = None if self._phase is None else (
            self._phase, outputs.num_prefill_groups, self._partial, tuple(self._events), tuple(bm.gpu.evicted))
        bm.gpu.evicted.clear()
        n = len(seqs)
        kind = "idle" if not n else "prefill" if num_prefills == n else "decode" if not num_prefills else "mixed"
        copies = (*(BlockCopy(CPU_POOL, c, GPU_POOL, b) for c, b in outputs.blocks_to_swap_in),
                  *(BlockCopy(GPU_POOL, b, CPU_POOL, c) for b, c in outputs.blocks_to_swap_out))
        return Batch(seqs, tuple(counts), kind, tuple(events), copies)

    def _schedule_default(self) -> SchedulerOutputs:
        v0 = self.v0
        budget = SchedulingBudget(v0.batched_tokens, v0.max_num_seqs)
        swapped_head = self.swapped[0].request_id if self.swapped else STEP
        for group in self.running:
            budget.add_num_seqs(group.request_id, 1)
        prefills = _Part()
        if not self.swapped:
            prefills = self._schedule_prefills(budget, enable_chunking=False)
        if not prefills.prefill and v0.policy == "priority":
            self._schedule_priority_preemption(budget)
        running, swapped_in = _Part(), _Part()
        if not prefills.prefill:
            running = self._schedule_running(budget, enable_chunking=False)
            swapped_in = self._schedule_swapped_unless_preempted(running, budget)
        self.waiting.extendleft(running.preempted)
        self.running.extend(g for g, _ in prefills.prefill)
        self.running.extend(g for g, _ in running.decode)
        self.running.extend(g for g, _ in swapped_in.decode)
        self.swapped.extend(running.swapped_out)
        scheduled = prefills.prefill + running.decode + swapped_in.decode
        phase, reason = ("prefill", "prefills_admitted") if prefills.prefill else \
            ("decode", "swapped_waiting" if swapped_head != STEP else "no_prefill_admitted")
        return self._outputs(budget, scheduled, len(prefills.prefill), running, swapped_in,
                             prefills.ignored + swapped_in.ignored, phase, reason, swapped_head)

    def _schedule_chunked_prefill(self) -> SchedulerOutputs:
        v0 = self.v0
        budget = SchedulingBudget(v0.batched_tokens, v0.max_num_seqs)
        metadata = PartialPrefillMetadata(self.running, self.waiting, v0.prefill_threshold,
                                          v0.max_num_partial_prefills, v0.max_long_partial_prefills)
        partial = metadata.schedulable_prefills
        self._partial = (partial, v0.max_num_partial_prefills, self._budget_lookup[partial])
        running = self._schedule_running(budget, enable_chunking=True, metadata=metadata)
        swapped_in = self._schedule_swapped_unless_preempted(running, budget)
        prefills = self._schedule_prefills(budget, enable_chunking=True, metadata=metadata)
        self.waiting.extendleft(running.preempted)
        self.running.extend(g for g, _ in swapped_in.decode)
        self.running.extend(g for g, _ in swapped_in.prefill)
        self.running.extend(g for g, _ in running.decode)
        finishing = [g for g, chunk in running.prefill if g.num_uncomputed_tokens == chunk]
        self.running.extend(finishing)
        self.running.extend(g for g, chunk in running.prefill if g.num_uncomputed_tokens != chunk)
        self.running.extend(g for g, _ in prefills.prefill)
        self.swapped.extend(running.swapped_out)
        scheduled = prefills.prefill + running.prefill + swapped_in.prefill + running.decode + swapped_in.decode
        num_prefill_groups = len(prefills.prefill) + len(swapped_in.prefill) + len(running.prefill)
        return self._outputs(budget, scheduled, num_prefill_groups, running, swapped_in,
                             prefills.ignored + swapped_in.ignored, "chunked", "one_budget", STEP)

    def _outputs(self, budget: SchedulingBudget, scheduled, num_prefill_groups: int, running: _Part,
                 swapped_in: _Part, ignored: list[SequenceGroup], phase: str, reason: str,
                 swapped_head: int) -> SchedulerOutputs:
        self._phase = StepPhase(swapped_head, phase, reason, swapped_head, budget.num_batched_tokens,
                                budget.num_cached_tokens, budget.token_budget, budget.num_curr_seqs,
                                budget.max_num_seqs)
        if reason == "swapped_waiting":  # about the swapped head (a step-wide event has no seq_id a trace takes)
            self._events.append(self._phase)
        for group in ignored:
            group.seq.status, group.seq.finish_reason = SequenceStatus.ABORTED, "ignored"
            del self.groups[group.request_id]
        return SchedulerOutputs(scheduled, num_prefill_groups, budget.num_batched_tokens + budget.num_cached_tokens,
                                swapped_in.blocks, running.blocks, [], ignored,
                                len(running.preempted) + len(running.swapped_out))

    # -- the three queues -----------------------------------------------------------------------------------

    def _num_new_tokens(self, group: SequenceGroup, enable_chunking: bool, budget: SchedulingBudget,
                        metadata: PartialPrefillMetadata | None = None) -> tuple[int, int]:
        """V0's _get_num_new_uncached_and_cached_tokens: (uncached, cached) tokens to compute; a decode is 1; the
        prefix cache's computed blocks cost nothing (but a fully cached prompt still computes one token);
        chunking cuts the uncached ones to the budget (whole blocks with prefix caching) and the prefill slot."""
        if not group.is_prefill:
            uncached, cached = 1, 0
        else:
            computed = group.seq.num_computed_tokens
            uncached, cached = len(group.seq.token_ids) - computed, 0
            if self.v0.enable_prefix_caching:
                num_cached = self.block_manager.get_num_cached_tokens(group)
                if num_cached < computed and not (group.status is V0Status.RUNNING
                                                  and self.v0.enable_chunked_prefill):
                    raise AssertionError("Number of cached tokens should not be less than the number of computed "
                                         "tokens for a sequence that's still in prefill (vLLM 0.10.2 asserts it)")
                cached = max(0, num_cached - computed)
                uncached -= cached
        if uncached == 0 and cached > 0:
            uncached, cached = 1, cached - 1
        if enable_chunking:
            remaining = budget.remaining_token_budget()
            slot = remaining if metadata is None else self._budget_lookup[metadata.schedulable_prefills]
            if self.v0.enable_prefix_caching:
                bs = self.v0.block_size
                remaining = min(remaining, slot) // bs * bs
            uncached = min(uncached, remaining, slot)
        return uncached, cached

    def _schedule_running(self, budget: SchedulingBudget, enable_chunking: bool,
                          metadata: PartialPrefillMetadata | None = None) -> _Part:
        """Decodes and running prefill chunks in running order; while the head cannot append its slots, the tail
        of running is preempted (the head itself when it is the last)."""
        part, queue, bm = _Part(), self.running, self.block_manager
        while queue:
            group = queue[0]
            num_tokens, _ = self._num_new_tokens(group, enable_chunking, budget, metadata)
            if num_tokens == 0:
                break
            queue.popleft()
            rid = group.request_id
            while not bm.can_append_slots(group):
                budget.subtract_num_batched_tokens(rid, num_tokens)
                budget.subtract_num_seqs(rid, 1)
                victim = queue.pop() if queue else group
                if self._preempt(victim, part.blocks, group, "tail"):
                    part.preempted.append(victim)
                else:
                    part.swapped_out.append(victim)
                if victim is group:
                    break
            else:
                bm.append_slots(group)
                if group.is_prefill:
                    part.prefill.append((group, num_tokens))
                else:
                    part.decode.append((group, 1))
                budget.add_num_batched_tokens(rid, num_tokens)
                if enable_chunking:
                    budget.add_num_seqs(rid, 1)
        return part

    def _schedule_swapped_unless_preempted(self, running: _Part, budget: SchedulingBudget) -> _Part:
        """V0 swaps nothing in after a preemption in the same step (no room for more running requests)."""
        if not running.preempted and not running.swapped_out:
            return self._schedule_swapped(budget)
        if self.swapped:
            self._events.append(SwapInBlocked(self.swapped[0].request_id, "preempted_this_step", 0, 0,
                                              self.block_manager.watermark_blocks))
        return _Part()

    def _schedule_swapped(self, budget: SchedulingBudget) -> _Part:
        """Swap-ins from the head of swapped while can_swap_in says OK and the budget (never chunked) holds."""
        part, queue, bm = _Part(), self.swapped, self.block_manager
        while queue:
            group = queue[0]
            is_prefill = group.is_prefill
            status, needed = bm.can_swap_in(group)
            if status is AllocStatus.LATER:
                self._events.append(SwapInBlocked(group.request_id, "LATER", needed, bm.gpu.num_free,
                                                  bm.watermark_blocks))
                break
            if status is AllocStatus.NEVER:  # its CPU blocks stay held: V0 never frees them
                group.status = V0Status.FINISHED_IGNORED
                self._events.append(Ignored(group.request_id, "never_swap_in", needed, bm.gpu.num_blocks))
                part.ignored.append(group)
                queue.popleft()
                continue
            uncached, cached = self._num_new_tokens(group, False, budget)
            if uncached == 0 or not budget.can_schedule(uncached, 1):
                bm.remove_from_computed_tracker(group)
                self._events.append(SwapInBlocked(group.request_id, "budget", uncached,
                                                  budget.remaining_token_budget(), bm.watermark_blocks))
                break
            queue.popleft()
            self._swap_in(group, part.blocks)
            bm.append_slots(group)
            if is_prefill:
                part.prefill.append((group, uncached + cached))
            else:
                part.decode.append((group, 1))
            budget.add_num_batched_tokens(group.request_id, uncached, cached)
            budget.add_num_seqs(group.request_id, 1)
        return part

    def _prompt_limit(self) -> int:
        v0 = self.v0
        return v0.max_model_len if v0.enable_chunked_prefill else min(v0.max_model_len, v0.batched_tokens)

    def _schedule_prefills(self, budget: SchedulingBudget, enable_chunking: bool,
                           metadata: PartialPrefillMetadata | None = None) -> _Part:
        """Admission from the head of waiting: a prompt over the prompt limit or NEVER fitting is ignored; LATER
        (blocks for the whole prompt, the watermark kept), a full budget or max_num_seqs stop admission; else
        blocks for the whole prompt and the group runs."""
        part, bm, events = _Part(), self.block_manager, self._events
        if budget.remaining_token_budget() == 0:
            return part
        queue, leftover = self.waiting, deque[SequenceGroup]()
        while queue:
            group = queue[0]
            rid = group.request_id
            if group.status is not V0Status.WAITING:  # a group priority preemption swapped out (V0's crash)
                raise AssertionError("Waiting sequence group should have only one prompt sequence.")
            if metadata is not None and not metadata.can_schedule(group):
                leftover.appendleft(group)
                queue.popleft()
                continue
            uncached, cached = self._num_new_tokens(group, enable_chunking, budget, metadata)
            num_tokens = uncached + cached
            limit = self._prompt_limit()
            if num_tokens > limit:
                self._ignore(group, "prompt_limit", num_tokens, limit)
                part.ignored.append(group)
                queue.popleft()
                continue
            status, required, free = bm.can_allocate(group)
            if status is AllocStatus.LATER:
                bm.remove_from_computed_tracker(group)
                watermark = bm.watermark_blocks
                events.append(AllocBlocked(rid, "watermark" if free >= required else "blocks", required, free,
                                           watermark))
                break
            if status is AllocStatus.NEVER:
                self._ignore(group, "never", required, bm.num_total_gpu_blocks - bm.watermark_blocks)
                part.ignored.append(group)
                queue.popleft()
                continue
            if budget.num_batched_tokens >= self.v0.batched_tokens:
                bm.remove_from_computed_tracker(group)
                events.append(Blocked(rid, "token_budget", uncached, 0))
                break
            if uncached == 0 or not budget.can_schedule(uncached, 1):
                bm.remove_from_computed_tracker(group)
                full = budget.num_curr_seqs + 1 > budget.max_num_seqs
                events.append(Blocked(rid, "max_num_seqs", 1, 0) if full else
                              Blocked(rid, "token_budget", uncached, budget.remaining_token_budget()))
                break
            queue.popleft()
            bm.allocate(group)
            self._admitted(group, uncached, cached)
            if metadata is not None:
                metadata.maybe_increment_partial_prefills(group)
            part.prefill.append((group, num_tokens))
            budget.add_num_batched_tokens(rid, uncached, cached)
            budget.add_num_seqs(rid, 1)
        queue.extendleft(leftover)
        return part

    def _ignore(self, group: SequenceGroup, reason: str, num: int, limit: int):
        group.status = V0Status.FINISHED_IGNORED
        self.block_manager.remove_from_computed_tracker(group)
        self._events.append(Ignored(group.request_id, reason, num, limit))

    def _admitted(self, group: SequenceGroup, uncached: int, cached: int):
        bm, seq = self.block_manager, group.seq
        group.status, seq.status = V0Status.RUNNING, SequenceStatus.RUNNING
        evicted = bm.gpu.evicted
        if evicted:
            self._events.append(Evicted(seq.seq_id, tuple(evicted)))
            evicted.clear()
        hits = bm.computed_block_ids(group)
        if hits:
            self._events.append(PrefixHit(seq.seq_id, tuple(hits), len(hits) * self.v0.block_size))
        seq.num_cached_tokens = cached
        self._events.append(Admitted(seq.seq_id, uncached + cached, cached, seq.num_preemptions > 0))

    def _schedule_priority_preemption(self, budget: SchedulingBudget):
        """Under the priority policy, in a step that admitted nothing: while the lowest-priority running group
        ranks below the head of waiting (as the queue stands) and that head cannot be admitted, preempt it into
        waiting; then both queues sorted by (priority, arrival)."""
        bm = self.block_manager
        running = deque(sorted(self.running, key=PRIORITY))
        waiting = self.waiting
        dropped_swap_pairs: list[tuple[int, int]] = []  # V0 drops them (its priority + swap bug)
        if waiting:
            group = waiting.popleft()
            uncached, _ = self._num_new_tokens(group, False, budget)
            while running and running[-1].priority_key > group.priority_key:
                if uncached > 0 and bm.can_allocate(group)[0] is AllocStatus.OK \
                        and budget.can_schedule(uncached, 1):
                    break
                victim = running.pop()
                victim_tokens, _ = self._num_new_tokens(victim, False, budget)
                budget.subtract_num_batched_tokens(victim.request_id, victim_tokens)
                budget.subtract_num_seqs(victim.request_id, 1)
                self._preempt(victim, dropped_swap_pairs, group, "priority")
                waiting.appendleft(victim)
            waiting.appendleft(group)
            if group.status is V0Status.WAITING:
                bm.remove_from_computed_tracker(group)
        self.waiting = deque(sorted(waiting, key=PRIORITY))
        self.running = running

    # -- preemption and swaps -----------------------------------------------------------------------------

    def _preempt(self, group: SequenceGroup, blocks_to_swap_out: list, for_group: SequenceGroup,
                 policy: str) -> bool:
        """V0's _preempt: recompute unless preemption_mode is "swap" (unset, V0 recomputes a one-sequence group).
        Returns True for a recompute."""
        mode = self.v0.preemption_mode
        recompute = mode != "swap"
        self.num_cumulative_preemption += 1
        seq = group.seq
        seq.num_preemptions += 1
        freed = tuple(self.block_manager.block_tables[group.request_id].ids)
        self._events.append(PreemptedV0(seq.seq_id, for_group.request_id, policy, freed,
                                        "recompute" if recompute else "swap",
                                        "preemption_mode" if mode else "single_sequence",
                                        len(seq.token_ids) if recompute else 0))
        if recompute:
            group.status, seq.status = V0Status.WAITING, SequenceStatus.WAITING
            self.block_manager.free(group)
            group.reset_state_for_recompute()
            seq.block_table = []
        else:
            self._swap_out(group, blocks_to_swap_out)
        return recompute

    def _swap_out(self, group: SequenceGroup, blocks_to_swap_out: list):
        if not self.block_manager.can_swap_out(group):
            raise CpuSwapSpaceError(CPU_SWAP_SPACE_ERROR)
        pairs = self.block_manager.swap_out(group)
        blocks_to_swap_out.extend(pairs)
        group.status, group.seq.status = V0Status.SWAPPED, SequenceStatus.WAITING
        group.seq.block_table = []
        self._events.append(SwappedOut(group.request_id, tuple(pairs)))

    def _swap_in(self, group: SequenceGroup, blocks_to_swap_in: list):
        pairs = self.block_manager.swap_in(group)
        blocks_to_swap_in.extend(pairs)
        group.status, group.seq.status = V0Status.RUNNING, SequenceStatus.RUNNING
        self._events.append(SwappedIn(group.request_id, tuple(pairs)))

    # -- after the model ran: V0's LLMEngine._process_model_outputs ---------------------------------------

    def postprocess(self, seqs: list[Sequence], token_ids: list) -> list[Event]:
        """Per scheduled group, in order: its computed tokens advance by its chunk; a group that samples (a decode,
        or a prefill's last chunk) appends its token and is checked by V0's StopChecker, a finished one freed at
        once; then the finished groups leave running (free_finished_seq_groups)."""
        if len(token_ids) != len(seqs):
            raise ValueError(f"postprocess got {len(token_ids)} outputs for a batch of {len(seqs)} sequences; "
                             "give one per scheduled sequence (nothing was applied)")
        events: list[Event] = []
        bm, finished = self.block_manager, False
        for seq, token in zip(seqs, token_ids, strict=True):
            group = self.groups.get(seq.seq_id)
            if group is None or group.status.is_finished:
                continue
            chunk = seq.num_scheduled_tokens
            do_sample = not group.is_prefill or seq.num_computed_tokens + chunk >= len(seq.token_ids)
            group.update_num_computed_tokens(chunk)
            seq.num_scheduled_tokens = 0
            if not do_sample:
                continue
            seq.token_ids.append(token)
            reason = self._stop_reason(seq, token)
            if reason:
                group.status = V0Status.FINISHED_STOPPED if reason in ("eos", "stop_token") \
                    else V0Status.FINISHED_LENGTH_CAPPED
                seq.status, seq.finish_reason = SequenceStatus.FINISHED, reason
                bm.free(group)
                seq.block_table = []
                del self.groups[seq.seq_id]
                events.append(Finished(seq.seq_id, reason))
                finished = True
        if finished:
            self.running = deque(g for g in self.running if not g.status.is_finished)
        return events

    def _stop_reason(self, seq: Sequence, token: int) -> str | None:
        """V0's StopChecker: min_tokens first, then EOS, the request's stop tokens, max_model_len, max_tokens."""
        params = seq.sampling_params
        if seq.num_completion_tokens < params.min_tokens:
            return None
        if not params.ignore_eos and token == self.v0.eos:
            return "eos"
        if token in params.stop_token_ids:
            return "stop_token"
        if len(seq.token_ids) >= self.v0.max_model_len:
            return "max_model_len"
        if seq.num_completion_tokens == params.max_tokens:
            return "max_tokens"
        return None

    def launch(self, seqs: list[Sequence], outputs: list) -> list[Event]:
        """Overlapped: the batch went to the model; it is postprocessed ahead, PLACEHOLDER for each token it will
        write (None for a prefill chunk), replaced when it lands."""
        return self.postprocess(seqs, outputs)

    def land(self, landed: list[tuple[Sequence, int, int]]
             ) -> tuple[list[tuple[Sequence, tuple[int, ...]]], list[Sequence]]:
        """The step in flight returned: each token in place of its placeholder. A request still going whose token is
        a stop token (EOS, its stop_token_ids) finishes now, one step late: the tokens after it dropped, its
        blocks freed (returned with it); one a length limit ended at that token takes the stop as its reason."""
        late, at_limit = [], []
        for seq, index, token in landed:
            seq.token_ids[index] = token
            params = seq.sampling_params
            if index + 1 - seq.num_prompt_tokens < params.min_tokens:
                continue
            reason = "eos" if not params.ignore_eos and token == self.v0.eos else \
                "stop_token" if token in params.stop_token_ids else None
            if reason is None:
                continue
            if seq.is_done:
                seq.finish_reason = reason
                at_limit.append(seq)
                continue
            group = self.groups.pop(seq.seq_id)
            del seq.token_ids[index + 1:]
            queue = {V0Status.RUNNING: self.running, V0Status.SWAPPED: self.swapped}.get(group.status, self.waiting)
            queue.remove(group)
            freed = tuple(reversed(self.block_manager.block_tables[group.request_id].ids))
            (self.block_manager.free_swapped if group.status is V0Status.SWAPPED else self.block_manager.free)(group)
            group.status = V0Status.FINISHED_STOPPED
            seq.status, seq.finish_reason, seq.num_scheduled_tokens, seq.block_table = \
                SequenceStatus.FINISHED, reason, 0, []
            late.append((seq, freed if queue is not self.swapped else ()))
        return late, at_limit
