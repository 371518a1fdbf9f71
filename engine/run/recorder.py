"""Turns the live scheduler into FrameStore records while looking only at what a step touched.

Cheap because of three facts about the scheduler:
- a request's state changes only if it was in the batch or has an event this step (arrived, admitted, preempted,
  finished, aborted), so only those are examined; a batched request without an event is read from the scheduler
  (its token and computed counts) and stored only where the frame store's batch rule (`advanced_by_batch`) would
  not rebuild it;
- a block's state (ref count, hash, tokens) changes only if it entered or left a touched request's block table
  or became full this step, so only those blocks are rebuilt; a scheduler that re-points tables in postprocess
  (`SchedulerInfo.repoints_tables`: SGLang moves a row onto the tree's copy of a prefix) has its batched tables
  compared after postprocess, as the engine's copy was taken before it;
- the pool states how its free order changed (`KVPoolView.recent_changes`, scheduler/contract.py): a block it
  placed at the head of its free order gets the next `free_rank` below all others, one placed at its tail the next
  above, so sorting free blocks by rank gives the free order again; a pool that reorders otherwise has its whole
  free order read and ranked anew.
"""

from dataclasses import dataclass
from operator import attrgetter
from typing import cast

from engine.run.frame import BatchView, BlockView, RequestView, StepHeader, StepMetrics, TokenHistory
from engine.run.frame_store import FrameStore, Paged, advanced_by_batch, paged
from engine.run.recipe import Request
from scheduler import Batch, Sequence, SequenceStatus
from scheduler.contract import (
    GPU_POOL,
    QUEUES,
    KeepsQueues,
    KeepsSidePools,
    KVPoolView,
    PoolChanges,
    SchedulerProtocol,
    UnitState,
)

STATUS_NAMES = {status: status.name.lower() for status in SequenceStatus}
SEQ_ID = attrgetter("seq_id")


@dataclass
class RequestRecord:
    """Everything the engine keeps of one request, indexed by its id: where it came from, the scheduler's
    Sequence and its token history (shared with its frame views). When its first token and its end happened is
    read off the frames, in one place: engine/run/metrics.py."""
    request: Request
    seq: Sequence
    history: TokenHistory


def batch_view(batch: Batch) -> BatchView:
    """The batch as schedule() left it (read before the model runs: postprocess moves the counts on)."""
    seqs = batch.seqs
    return BatchView(batch.kind, tuple(map(SEQ_ID, seqs)), batch.num_scheduled_tokens,
                     tuple(s.num_computed_tokens for s in seqs), tuple(len(s.draft_token_ids) for s in seqs))


def request_view(seq: Sequence, history: TokenHistory) -> RequestView:
    return RequestView(seq.seq_id, STATUS_NAMES[seq.status], len(seq.token_ids), seq.num_prompt_tokens,
                       seq.num_computed_tokens, tuple(seq.block_table), seq.priority, seq.arrival,
                       seq.num_preemptions, seq.finish_reason, seq.sampling_params.max_tokens, history)


class Recorder:
    def __init__(self, store: FrameStore, requests: list[RequestRecord]):
        self.store = store
        self.requests = requests  # the engine's, indexed by request id
        self._views: list[RequestView | None] = []  # latest recorded view of each request
        self._progress: list[list[int] | None] = []  # [num_tokens, num_computed_tokens, len(block_table)], current
        self._blocks: list[BlockView] = []
        self._next_rank = 0
        self._first_rank = 0  # the rank below every free block's, for a block freed to the head of the free list
        self._num_cached_free = 0
        self._pool_rebuilt = True
        self._touched_ids: set[int] = set()
        self._advanced: set[int] = set()  # requests whose view is behind their progress
        self._pages = Paged((), ())  # the last snapshot, and what changed since
        self._changed_requests: set[int] = set()
        self._changed_blocks: set[int] = set()

    def reset_pool(self, pool: KVPoolView):
        """A fresh, empty pool: every block free, in id order. Block tables of the old pool are forgotten."""
        for rid, view in enumerate(self._views):
            if view is not None and view.block_table:
                self._views[rid] = view._replace(block_table=())
                progress = self._progress[rid]
                assert progress is not None  # _update sets a request's view and progress together
                progress[2] = 0
                self._changed_requests.add(rid)
        self._blocks = [BlockView(bid, pool.unit_state(bid)[0], None, bid)  # a reserved unit is held
                        for bid in pool.unit_ids]
        pool.recent_changes()  # the fresh pool's order is its ids'; only what changes from here on is read
        self._pages = self._pages._replace(blocks=())
        self._next_rank, self._first_rank = len(self._blocks), 0
        self._num_cached_free = 0
        self._pool_rebuilt = True

    def touch(self, seq_ids):
        """Requests changed outside a step (e.g. requeued by a pool rebuild): examine them at the next record."""
        self._touched_ids.update(seq_ids)

    def record(self, sched: SchedulerProtocol, batch: Batch, batch_tables: list[list[int]], header: StepHeader):
        """Record the step of `header` (whose batch view is `batch`'s); `batch_tables` are the batch's block
        tables right after schedule()."""
        bm, events, records = sched.pool, header.events, self.requests
        repoints = sched.info.repoints_tables  # tables may change in place in postprocess: read them after it
        bs = bm.tokens_per_unit
        event_ids = {e.seq_id for e in events if e.seq_id >= 0} | self._touched_ids  # pool_rebuilt: -1
        self._touched_ids = set()
        changed: dict[int, RequestView] = {}
        dirty: set[int] = set()
        self._views.extend([None] * (len(records) - len(self._views)))  # new requests, all with an arrived event
        self._progress.extend([None] * (len(records) - len(self._progress)))
        progress_of, advanced = self._progress, self._advanced
        filled_by: dict[int, tuple[int, int]] = {}  # block -> (request, index in its table) for blocks it may fill
        for seq, n, table in zip(batch.seqs, batch.num_scheduled_tokens, batch_tables, strict=True):
            rid = seq.seq_id
            if rid in event_ids:
                dirty.update(table)
                if repoints:
                    dirty.update(seq.block_table)
                filled_by.update((b, (rid, i)) for i, b in enumerate(table))
                changed[rid] = self._update(seq)  # recorded, so readers do not apply the batch rule
                continue
            progress = progress_of[rid]  # the hot path: no view is built
            assert progress is not None  # set when it arrived (its arrived event is recorded)
            num_tokens, old_computed, table_len = progress
            now = len(seq.token_ids), seq.num_computed_tokens  # as the scheduler left it
            if now != advanced_by_batch(num_tokens, old_computed, n):  # the store's rule would not rebuild it
                dirty.update(table)
                filled_by.update((b, (rid, i)) for i, b in enumerate(table))
                changed[rid] = self._update(seq)
                continue
            progress[0], progress[1] = now
            computed = now[1]
            advanced.add(rid)
            if computed // bs != old_computed // bs:
                # blocks that became full (the notebook's block bug fills a table's last block past its size)
                for i in range(old_computed // bs, min(computed // bs, len(table))):
                    dirty.add(table[i])
                    filled_by[table[i]] = (rid, i)
            if len(table) != table_len:
                dirty.update(table[table_len:])
                changed[rid] = self._update(seq)
            elif repoints and seq.block_table != table:  # postprocess pointed it at another copy of its prefix
                dirty.update(table, seq.block_table)
                changed[rid] = self._update(seq)
        for rid in event_ids - changed.keys():
            seq = records[rid].seq
            old = self._views[rid]
            if old is not None:
                dirty.update(old.block_table)
                for i, b in enumerate(old.block_table):  # a block it filled may be hashed as it leaves
                    filled_by.setdefault(b, (rid, i))
            dirty.update(seq.block_table)
            view = self._update(seq)
            if view != old:
                changed[rid] = view
        for e in events:
            dirty.update(getattr(e, "freed_blocks", ()))
        for copy in header.block_copies:
            dirty.update(b for pool, b in (copy[:2], copy[2:]) if pool == GPU_POOL)
        blocks = self._record_blocks(bm, dirty, filled_by)
        waiting = tuple(map(SEQ_ID, sched.waiting_seqs))
        running = tuple(map(SEQ_ID, sched.running_seqs))
        info = sched.info
        queues = {name: tuple(map(SEQ_ID, cast(KeepsQueues, sched).queue(name))) for name in info.queues
                  if name not in QUEUES}
        side_pools = {}
        for pool in info.side_pools:
            side = cast(KeepsSidePools, sched).side_pool(pool.name)
            side_pools[pool.name] = tuple(map(side.holder, side.unit_ids))
        num_free = bm.num_free_units
        metrics = StepMetrics((bm.num_units - num_free) / bm.num_units, batch.num_tokens, len(waiting),
                              len(running), num_free, self._num_cached_free, bm.num_prefix_queries,
                              bm.num_prefix_hits, sched.num_preemptions)
        self.store.append(header, metrics, changed, blocks, waiting, running, self.snapshot, queues, side_pools)

    def snapshot(self) -> Paged:
        """Every request's and block's view now, for the store's keyframes, without replaying records."""
        for rid in self._advanced:
            view, progress = self._views[rid], self._progress[rid]
            assert view is not None and progress is not None  # an advanced request was recorded before
            self._views[rid] = view.progressed(progress[0], progress[1])
        self._pages = Paged(paged(self._views, self._pages.requests, self._advanced | self._changed_requests),
                            paged(self._blocks, self._pages.blocks, self._changed_blocks))
        self._advanced.clear()
        self._changed_requests.clear()
        self._changed_blocks.clear()
        return self._pages

    def _update(self, seq: Sequence) -> RequestView:
        rid = seq.seq_id
        view = request_view(seq, self.requests[rid].history)
        self._views[rid] = view
        self._changed_requests.add(rid)
        self._progress[rid] = [view.num_tokens, view.num_computed_tokens, len(view.block_table)]
        return view

    def _record_blocks(self, bm: KVPoolView, dirty: set[int], filled_by: dict[int, tuple[int, int]]
                       ) -> dict[int, BlockView] | tuple[BlockView, ...]:
        changes = bm.recent_changes()
        ranks = self._free_ranks(bm, changes)
        changed = {}
        for bid in dirty | ranks.keys() | set(changes.evicted):  # an evicted unit may stay where it was, now empty
            view = self._block_view(bm, bid, ranks.get(bid, self._blocks[bid].free_rank), filled_by)
            if view != self._blocks[bid]:
                changed[bid] = view
        for bid, view in changed.items():
            self._num_cached_free += view.is_cached_free - self._blocks[bid].is_cached_free
            self._blocks[bid] = view
        self._changed_blocks.update(changed)
        if self._pool_rebuilt:
            self._pool_rebuilt = False
            return tuple(self._blocks)
        return changed

    def _free_ranks(self, bm: KVPoolView, changes: PoolChanges) -> dict[int, int]:
        """The new `free_rank` of each block whose place in the free order changed and that is still free."""
        if changes.reordered:
            order = list(bm.free_order())
            self._next_rank += len(order)
            return {bid: self._next_rank - len(order) + i for i, bid in enumerate(order)}
        head = [bid for bid in changes.to_head if bm.state(bid) is not UnitState.USED]
        tail = [bid for bid in changes.to_tail if bm.state(bid) is not UnitState.USED]
        ranks = {}
        for bid in head:  # placed at the head one after the other: the last placed is first
            self._first_rank -= 1
            ranks[bid] = self._first_rank
        for bid in tail:
            ranks[bid] = self._next_rank
            self._next_rank += 1
        return ranks

    def _block_view(self, bm: KVPoolView, bid: int, free_rank: int, filled_by: dict[int, tuple[int, int]]
                    ) -> BlockView:
        (ref_count, block_hash), old = bm.unit_state(bid), self._blocks[bid]
        if block_hash is None:
            return BlockView(bid, ref_count, None, free_rank)
        if old.hash == block_hash:  # same hash, same tokens
            return BlockView(bid, ref_count, block_hash, free_rank, *old[4:])
        filler = filled_by.get(bid)  # a hash appears when a request fills the block (batched, or leaving)
        if filler is None:  # hashed after its step's record (overlapped: as its last token landed)
            return BlockView(bid, ref_count, block_hash, free_rank)
        rid, index = filler
        return BlockView(bid, ref_count, block_hash, free_rank, self.requests[rid].history,
                         index * bm.tokens_per_unit, bm.tokens_per_unit)
