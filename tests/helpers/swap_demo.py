"""A scheduler kind for tests only (never in scheduler/factory.py): the article's scheduler plus what V0 will bring,
to show the contract carries it: a third queue (`swapped`), a second KV pool (`cpu`, CPU_BLOCKS blocks) and blocks
moved between them through `Batch.block_copies`. At step SWAP_OUT_AT it swaps the last running request out (its
blocks copied to the CPU pool, its GPU blocks freed, its computed tokens kept); at step SWAP_IN_AT it swaps it back
into fresh GPU blocks, where it decodes on without recomputing. It declares a panel of its own (`swap_log`, plain
data, for which the player registers no renderer). `registered` puts the kind in the factory for a test."""

from collections import deque
from contextlib import contextmanager
from dataclasses import replace

from engine.run.recipe import Request
from scheduler import Config, factory
from scheduler.article.scheduler import Scheduler
from scheduler.contract import GPU_POOL, QUEUES, PanelKind, SchedulerInfo, SidePool
from scheduler.events import Admitted, Preempted
from scheduler.interface import Batch, BlockCopy
from scheduler.sequence import SequenceStatus

KIND = "swap_demo"
CPU_POOL, SWAPPED = "cpu", "swapped"
CPU_BLOCKS = 6
SWAP_OUT_AT, SWAP_IN_AT = 4, 7
SWAP_LOG = PanelKind("swap_log")
# A run of it: two requests, the second swapped out at SWAP_OUT_AT and in at SWAP_IN_AT
CONFIG = Config(max_num_seqs=2, max_num_batched_tokens=64, max_model_len=40, num_kvcache_blocks=10,
                kvcache_block_size=4)
WORKLOAD = (Request(0, prompt_token_ids=tuple(range(10, 19)), max_tokens=12),
            Request(0, prompt_token_ids=tuple(range(30, 36)), max_tokens=12))


class CpuPool:
    """The side pool's view (`SidePoolView`): which request holds each unit."""

    def __init__(self, num_units: int):
        self.holders: list[int | None] = [None] * num_units

    @property
    def unit_ids(self) -> range:
        return range(len(self.holders))

    def holder(self, unit_id: int) -> int | None:
        return self.holders[unit_id]

    def take(self, n: int, seq_id: int) -> list[int]:
        units = [u for u, holder in enumerate(self.holders) if holder is None][:n]
        for unit in units:
            self.holders[unit] = seq_id
        return units


class SwapDemoScheduler(Scheduler):  # a KeepsQueues and a KeepsSidePools too
    info = SchedulerInfo(KIND, "schedlab tests", "", Scheduler.info.honoured, words=Scheduler.info.words,
                         queues=(*QUEUES, SWAPPED), side_pools=(SidePool(CPU_POOL, lambda config: CPU_BLOCKS),),
                         panels=(SWAP_LOG,))

    def __init__(self, config):
        super().__init__(config)
        self.swapped: deque = deque()
        self.cpu = CpuPool(CPU_BLOCKS)
        self.steps = 0
        self._cpu_tables: dict[int, list[int]] = {}
        self._log: dict = {}

    def queue(self, name: str):
        return self.swapped

    def side_pool(self, name: str) -> CpuPool:
        return self.cpu

    def panels(self) -> dict:
        return {SWAP_LOG.id: self._log}

    def is_finished(self) -> bool:
        return super().is_finished() and not self.swapped

    def schedule(self) -> Batch:
        self.steps += 1
        copies, events = [], []
        if self.steps == SWAP_OUT_AT and self.running:
            events.append(self._swap_out(self.running.pop(), copies))
        elif self.steps == SWAP_IN_AT and self.swapped:
            events.append(self._swap_in(self.swapped.popleft(), copies))
        self._log = {"out": [c[1] for c in copies if c.src_pool == GPU_POOL],
                     "in": [c[3] for c in copies if c.dst_pool == GPU_POOL]}
        batch = super().schedule()
        return replace(batch, events=(*events, *batch.events), block_copies=tuple(copies))

    def _swap_out(self, seq, copies: list) -> Preempted:
        computed, table = seq.num_computed_tokens, list(seq.block_table)
        cpu = self._cpu_tables[seq.seq_id] = self.cpu.take(len(table), seq.seq_id)
        copies += [BlockCopy(GPU_POOL, gpu, CPU_POOL, unit) for gpu, unit in zip(table, cpu, strict=True)]
        freed = self.block_manager.deallocate(seq)
        seq.num_computed_tokens, seq.status = computed, SequenceStatus.WAITING  # its K/V is kept, on the CPU
        self.swapped.append(seq)
        return Preempted(seq.seq_id, seq.seq_id, "swap", freed)

    def _swap_in(self, seq, copies: list) -> Admitted:
        self.block_manager.grow(seq, 0)  # GPU blocks for the tokens it has computed
        cpu = self._cpu_tables.pop(seq.seq_id)
        copies += [BlockCopy(CPU_POOL, unit, GPU_POOL, gpu) for unit, gpu in zip(cpu, seq.block_table, strict=True)]
        for unit in cpu:
            self.cpu.holders[unit] = None
        seq.status = SequenceStatus.RUNNING
        self.running.append(seq)
        return Admitted(seq.seq_id, 0, seq.num_computed_tokens, False)


@contextmanager
def registered():
    """The kind in the factory while the block runs (the engine, the payload and traces find it there)."""
    factory.SCHEDULERS[KIND] = SwapDemoScheduler
    try:
        yield
    finally:
        del factory.SCHEDULERS[KIND]
