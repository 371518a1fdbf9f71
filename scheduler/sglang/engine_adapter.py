"""The SGLang twin behind the scheduler contract (scheduler/contract.py): the engine's `Config` read as SGLang's
`ServerArgs` (command_line.py), its `Sequence`s as SGLang `Req`s, the events the twin tells as it decides passed on
(each request's state moved with them), and the radix tree's pool as a `KVPoolView`. The twin (scheduler.py)
decides and tells; this module only translates, so its decisions and their numbers stay SGLang's.

- A unit is one page of `page_size` (= `kvcache_block_size`) token slots, a token slot at page_size 1; SGLang's
  padding slot (page 0) is the reserved unit, so the pool has `num_kvcache_blocks` units a request may hold and
  `max_total_tokens` = num_kvcache_blocks x page_size.
- A request's block table is its row (`req_to_token`) as pages. The tree's copy of a prefix replaces a request's
  own slots when its KV enters the tree (`process_batch_result`), so tables change in place after postprocess
  (`repoints_tables`).
- The free order is the allocator's free list, then the tree's unlocked nodes in the order `evict` takes them
  (least-recently-used leaves first, a parent once it is a leaf)."""

from __future__ import annotations

import heapq
from collections import Counter
from typing import ClassVar

from i18n import Message
from scheduler.config import Config
from scheduler.contract import Launch, PanelKind, PoolChanges, SchedulerInfo, UnitState
from scheduler.events import Aborted, Admitted, Event, Finished, LeafEvicted, Preempted, Retracted
from scheduler.interface import Batch, check_new, check_pool_shape, refuse, requeue
from scheduler.sequence import Sequence, SequenceStatus
from scheduler.sglang.command_line import launch_server_args, server_args
from scheduler.sglang.radix_cache import RadixCache, TreeNode
from scheduler.sglang.req import Req, row_of
from scheduler.sglang.scheduler import ScheduleBatch, Scheduler, clipped_new_tokens, max_request_len
from scheduler.sglang.settings import VERSION, SglangSettings, launch_notes
from scheduler.sglang.tour import TOUR
from scheduler.sglang.tree_view import VIEW_KIND, TreeView

WAITING, RUNNING, FINISHED, ABORTED = (SequenceStatus.WAITING, SequenceStatus.RUNNING, SequenceStatus.FINISHED,
                                       SequenceStatus.ABORTED)
PADDING_UNIT = 0  # SGLang's slot 0 (page 0): written by padded batches, never given to a request


def output_budget(config: Config, num_tokens: int, max_new_tokens: int) -> int:
    """What a request holding `num_tokens` tokens and asking `max_new_tokens` may write, as SGLang clips it on
    arrival (`SchedulerInfo.output_budget`)."""
    args = server_args(config)
    return clipped_new_tokens(max_new_tokens, num_tokens, max_request_len(args), args.max_total_tokens,
                              args.page_size)


class RadixPoolView:
    """`KVPoolView` of the twin's allocator and radix tree, read from a snapshot taken at the first look after the
    scheduler changed (`stale`)."""
    def __init__(self, owner: SglangScheduler):
        self._owner = owner
        self._snapshot: tuple | None = None
        self.evicted: list[int] = []  # units evicted since the last recent_changes()
        self._last_order: list[int] | None = None  # the free order at the last recent_changes()
        self.num_prefix_queries = self.num_prefix_hits = 0

    @property
    def _twin(self) -> Scheduler:
        return self._owner.twin

    @property
    def unit_name(self) -> str:
        return "token slot" if self._twin.page_size == 1 else "page"

    def stale(self):
        self._snapshot = None

    @property
    def tokens_per_unit(self) -> int:
        return self._twin.page_size

    @property
    def num_units(self) -> int:
        return self._twin.max_total_num_tokens // self._twin.page_size

    @property
    def unit_ids(self) -> range:
        return range(self.num_units + 1)

    @property
    def reserved_unit_ids(self) -> tuple[int, ...]:
        return (PADDING_UNIT,)

    def units(self, slots: list[int]) -> list[int]:
        """The units of a page-aligned run of slots."""
        page = self._twin.page_size
        return list(slots) if page == 1 else [slot // page for slot in slots[::page]]

    def _read(self) -> tuple[Counter, dict[int, int], list[int]]:
        """(holders per unit, cache key per cached unit, free order), taken once per change."""
        if self._snapshot is None:
            holders = Counter(unit for req in self._owner.live_reqs() if req.holds_kv
                              for unit in self.units(row_of(req)))
            holders[PADDING_UNIT] += 1
            twin = self._twin
            free = list(twin.allocator.free_slots if twin.page_size == 1 else twin.allocator.free_pages)
            keys: dict[int, int] = {}
            self._key_units(twin.tree_cache.root_node, hash(()), keys)
            free += self._eviction_order(twin.tree_cache)
            self._snapshot = holders, keys, free
        return self._snapshot

    def _key_units(self, node: TreeNode, key: int, keys: dict[int, int]):
        """Each tree unit's key: a hash chained over the tokens from the root to its end (a split keeps it)."""
        page = self._twin.page_size
        for child in node.children.values():
            child_key = key
            for i, unit in enumerate(self.units(child.value)):
                child_key = hash((child_key, *child.key[i * page:(i + 1) * page]))
                keys[unit] = child_key
            self._key_units(child, child_key, keys)

    def _eviction_order(self, tree: RadixCache) -> list[int]:
        """The unlocked nodes' units in the order `RadixCache.evict` frees them, simulated on counts."""
        children = {}
        heap = []
        stack = [tree.root_node]
        while stack:
            node = stack.pop()
            stack.extend(node.children.values())
            children[node] = len(node.children)
            if node in tree.evictable_leaves:
                heap.append((node.last_access_time, id(node), node))
        heapq.heapify(heap)
        order = []
        while heap:
            _, _, leaf = heapq.heappop(heap)
            order += self.units(leaf.value)
            parent = leaf.parent
            assert parent is not None  # an evictable leaf is never the root
            children[parent] -= 1
            if parent is not tree.root_node and parent.lock_ref == 0 and not children[parent]:
                heapq.heappush(heap, (parent.last_access_time, id(parent), parent))
        return order

    @property
    def num_free_units(self) -> int:
        return len(self._read()[2])

    def unit_state(self, unit_id: int) -> tuple[int, int | None]:
        holders, keys, _ = self._read()
        return holders[unit_id], keys.get(unit_id)

    def state(self, unit_id: int) -> UnitState:
        holders, keys, _ = self._read()
        if holders[unit_id]:
            return UnitState.USED
        return UnitState.CACHED if unit_id in keys else UnitState.FREE

    def free_order(self):
        return iter(self._read()[2])

    def cached_keys(self) -> dict[int, int]:
        return dict(self._read()[1])

    def recent_changes(self) -> PoolChanges:
        """How the free order moved since the last look: nothing but units taken from it (a decode's slots), units
        placed after all the others, or else (an LRU touch, slots freed before the tree's units) `reordered`."""
        evicted, self.evicted = tuple(self.evicted), []
        order, last = self._read()[2], self._last_order
        self._last_order = order
        if last is None:
            return PoolChanges(evicted=evicted, reordered=True)
        now = set(order)
        kept = [unit for unit in last if unit in now]
        if order[:len(kept)] == kept:  # the old order's survivors first, in their order: new units at its tail
            return PoolChanges(to_tail=tuple(order[len(kept):]), evicted=evicted)
        return PoolChanges(evicted=evicted, reordered=True)


class SglangScheduler:
    """SGLang 0.5.23's Scheduler (the twin, scheduler/sglang/scheduler.py) as the engine drives a scheduler.
    SGLang has no preemption policy, priority queue, step order or batch mixing of the article's (its own priority
    scheduling has SGLang's settings), no prefix caching switch (the radix tree is always on), no speculative
    decoding or vLLM knobs: those Config fields are not read. A request's `priority` is SGLang's. A prompt of
    max_model_len tokens or more is refused on arrival (SGLang's tokenizer manager refuses it before its scheduler
    sees it); one over the scheduler's input limit (its context length or pool, less SGLang's margin) is queued as
    SGLang's one-token stub and aborted after its prefill; one its admission could never take even with the pool
    empty (its prompt, its clipped max_new_tokens and a page not below max_total_tokens), which SGLang would keep
    waiting for good, is refused on arrival. Overlapped, a step's tokens are appended as
    placeholders and filled in when they land; an EOS found then ends its request a step late, its computed KV
    entering the tree."""
    info: ClassVar[SchedulerInfo] = SchedulerInfo(
        "sglang", "SGLang", VERSION,
        frozenset({"max_num_seqs", "max_model_len", "num_kvcache_blocks", "kvcache_block_size", "eos"}),
        reserved_units=1, settings=SglangSettings, sidebar_note="sglang.victim",
        labels=(("max_num_seqs", "max_running_requests"), ("kvcache_block_size", "page_size"),
                ("num_kvcache_blocks", "max_total_tokens ÷ page_size"), ("max_model_len", "context_length")),
        repoints_tables=True, launch=Launch("SGLang", launch_server_args, launch_notes), panels=(PanelKind(VIEW_KIND),),
        words=(("reserved_pool", "sglang.pool_reserved"), ("reserved_unit", "sglang.block_reserved"),
               ("queue_limit", "sglang.queue_limit")), tour=TOUR, output_budget=output_budget)

    def __init__(self, config: Config):
        self.config = config
        self.twin = Scheduler(server_args(config))
        self.num_preemptions = 0
        self._reqs: dict[int, Req] = {}  # seq id -> its Req, for every request waiting or running
        self._seqs: dict[int, Sequence] = {}
        self._batch: ScheduleBatch | None = None  # the last schedule()'s
        self._pool = RadixPoolView(self)
        self._tree_view = TreeView()

    # -- the read-only views ---------------------------------------------------------------------------

    @property
    def pool(self) -> RadixPoolView:
        return self._pool

    def live_reqs(self) -> list[Req]:
        return list(self._reqs.values())

    @property
    def waiting_seqs(self) -> list[Sequence]:
        return [self._seqs[r.rid] for r in self.twin.waiting_queue if r.rid in self._reqs]

    @property
    def running_seqs(self) -> list[Sequence]:
        """The running batch, then the last prefill batch's requests not in it yet (the one being chunked)."""
        twin, seqs, seen = self.twin, [], set()
        last = twin.last_batch.reqs if twin.last_batch is not None else []
        for req in (*twin.running_batch.reqs, *last):
            seq = self._seqs.get(req.rid)
            if seq is not None and req.rid not in seen and seq.status is RUNNING and self._reqs[req.rid] is req:
                seen.add(req.rid)
                seqs.append(seq)
        return seqs

    def is_finished(self) -> bool:
        return not self._reqs

    def panels(self) -> dict[str, dict]:
        """The radix tree, the waiting queue and PrefillAdder's budgets after the step (tree_view.py)."""
        return {VIEW_KIND: self._tree_view.snapshot(self.twin)}

    # -- requests ----------------------------------------------------------------------------------------

    def add(self, seq: Sequence):
        """Queue a new request (SGLang's `handle_generate_request`; a prompt over its input limit is queued as a
        one-token stub, aborted after its prefill); one SGLang could never admit ends ABORTED now."""
        check_new(seq, self.config, held=seq.seq_id in self._reqs)
        twin = self.twin
        params = seq.sampling_params
        max_new = max(params.max_tokens - seq.num_completion_tokens, 0)
        req = twin.add_request(seq.seq_id, seq.token_ids, max_new, params.ignore_eos, seq.priority)
        if (needed := twin.never_admitted(req)) is not None:  # NO_TOKEN even with the pool empty: SGLang would
            twin.waiting_queue.remove(req)  # keep it waiting for good, and every request behind it
            refuse(seq, "sglang.abort.never_fits", needed=needed, slots=twin.max_total_num_tokens)
        self._reqs[seq.seq_id] = req
        self._seqs[seq.seq_id] = seq
        seq.status = WAITING
        self._pool.stale()

    def abort(self, seq: Sequence, reason: str) -> Aborted:
        self.twin.abort_request(self._reqs[seq.seq_id])
        self._end(seq, ABORTED, reason)
        return Aborted(seq.seq_id, reason)

    def requeue(self, seqs: list[Sequence]) -> list[Aborted]:
        return requeue(self, seqs)

    def reconfigure(self, config: Config):
        """The next steps under `config`: SGLang's limits, policy and reserve changed, the tree and queues kept."""
        check_pool_shape(self.config, config)
        self.twin.apply_args(server_args(config))
        self.config = config

    # -- one step ------------------------------------------------------------------------------------------

    def schedule(self) -> Batch:
        """SGLang's `get_next_batch_to_run`: the events the twin told as it decided, each request's state moved
        with them."""
        twin = self.twin
        batch = twin.get_next_batch_to_run()
        if batch is None:
            twin.on_idle()
        twin.step_done(batch)
        self._batch = batch
        self._pool.stale()
        events = [self._follow(event) for event in twin.events]
        if batch is None:
            return Batch([], (), "idle", tuple(events))
        extend = batch.forward_mode == "extend"
        seqs, counts = [], []
        for req in batch.reqs:
            seq, n = self._seqs[req.rid], req.extend_len if extend else 1
            seq.num_scheduled_tokens = n
            seq.num_computed_tokens = req.kv_committed_len - n
            seq.block_table = self._pool.units(row_of(req))
            seqs.append(seq)
            counts.append(n)
        return Batch(seqs, tuple(counts), "prefill" if extend else "decode", tuple(events))

    def _follow(self, event: Event) -> Event:
        """A request's state as the twin's event leaves it (sent back, admitted, aborted); the event as told."""
        if isinstance(event, (Retracted, Preempted)):
            self._send_back(self._seqs[event.seq_id])
        elif isinstance(event, Admitted):
            seq, req, page = self._seqs[event.seq_id], self._reqs[event.seq_id], self.twin.page_size
            seq.status, seq.num_cached_tokens = RUNNING, event.num_cached_tokens
            self._pool.num_prefix_queries += (len(req.fill_ids) - 1) // page
            self._pool.num_prefix_hits += event.num_cached_tokens // page
        elif isinstance(event, LeafEvicted):
            self._pool.evicted += event.block_ids
        elif isinstance(event, Aborted):
            reason = Message(event.reason)
            self._end(self._seqs[event.seq_id], ABORTED, reason)
            return Aborted(event.seq_id, reason)
        return event

    def _send_back(self, seq: Sequence):
        """A running request sent back to the waiting queue (retracted or preempted)."""
        seq.status, seq.block_table = WAITING, []
        seq.num_computed_tokens = seq.num_scheduled_tokens = 0
        seq.num_preemptions += 1
        self.num_preemptions += 1

    # -- after the model ---------------------------------------------------------------------------------

    def postprocess(self, seqs: list[Sequence], token_ids: list) -> list[Event]:
        """SGLang's `process_batch_result`: each request's token, its finish, its KV into the tree."""
        if len(token_ids) != len(seqs):
            raise ValueError(f"postprocess got {len(token_ids)} outputs for a batch of {len(seqs)} sequences; "
                             "give one per scheduled sequence (nothing was applied)")
        if not seqs:
            return []
        reqs = [self._reqs[seq.seq_id] for seq in seqs]
        outputs = [len(r.output_ids) for r in reqs]
        tokens = [0 if t is None else t for t in token_ids]
        batch = self._batch
        assert batch is not None  # `seqs` are the last schedule()'s batch
        extend = batch.forward_mode == "extend"
        self.twin.process_batch_result(ScheduleBatch(reqs, batch.forward_mode), tokens)
        self._pool.stale()
        events: list[Event] = []
        for seq, req, before in zip(seqs, reqs, outputs, strict=True):
            seq.num_computed_tokens, seq.num_scheduled_tokens = req.kv_committed_len, 0
            if req.finished_reason == "abort":  # an over-long prompt's stub, prefilled (validate_input_length)
                message = Message("sglang.abort.prompt", n=len(seq.token_ids), most=self.twin.max_req_input_len - 1)
                self._end(seq, ABORTED, message)
                events.append(Aborted(seq.seq_id, message))
                continue
            if len(req.output_ids) > before:
                seq.token_ids.append(req.output_ids[-1])
            if req.finished():
                reason = self._finish_reason(seq, req)
                self._end(seq, FINISHED, reason)
                events.append(Finished(seq.seq_id, reason))
            elif extend:  # its prefill entered the tree: its row may now point at the tree's copy of its prefix
                seq.block_table = self._pool.units(row_of(req))
        return events

    def _finish_reason(self, seq: Sequence, req: Req) -> str:
        if req.finished_reason == "eos":
            return "eos"
        return "max_tokens" if seq.num_completion_tokens >= seq.sampling_params.max_tokens else "max_model_len"

    def _end(self, seq: Sequence, status: SequenceStatus, reason: str) -> tuple[int, ...]:
        """The request leaves: its status and reason, its table emptied (returned)."""
        freed = tuple(seq.block_table)
        del self._reqs[seq.seq_id], self._seqs[seq.seq_id]
        seq.status, seq.finish_reason = status, reason
        seq.block_table, seq.num_scheduled_tokens = [], 0
        self._pool.stale()
        return freed

    # -- overlapped --------------------------------------------------------------------------------------

    def launch(self, seqs: list[Sequence], outputs: list) -> list[Event]:
        """The batch went to the model: postprocessed ahead, a PLACEHOLDER for each token it will write."""
        return self.postprocess(seqs, outputs)

    def land(self, landed: list[tuple[Sequence, int, int]]
             ) -> tuple[list[tuple[Sequence, tuple[int, ...]]], list[Sequence]]:
        """The step in flight returned: its tokens replace the placeholders (in the Req too, before any enters
        the tree). A request whose token is EOS ends now, one step late, with the KV it computed entering the
        tree; one a length limit ended already takes "eos" as its reason. An over-long prompt's stub, aborted at
        its result, keeps no token (SGLang streams nothing of it)."""
        late, eos_at_limit = [], []
        landed = [item for item in landed if item[0].status is not ABORTED]  # an over-long prompt's stub kept none
        for seq, index, token in landed:
            seq.token_ids[index] = token
            req = self._reqs.get(seq.seq_id)
            if req is not None:
                req.output_ids[index - len(req.origin_input_ids)] = token
        for seq, index, token in landed:
            if token != self.config.eos or seq.sampling_params.ignore_eos:
                continue
            if seq.is_done:
                seq.finish_reason = "eos"
                eos_at_limit.append(seq)
                continue
            req = self._reqs[seq.seq_id]
            del seq.token_ids[index + 1:]
            del req.output_ids[index + 1 - len(req.origin_input_ids):]
            computed = min(seq.num_computed_tokens, len(seq.token_ids))
            self.twin.abort_request(req, "eos", computed)
            late.append((seq, self._end(seq, FINISHED, "eos")))
        return late, eos_at_limit
