"""The vLLM twin: vLLM V1's `Scheduler.schedule()` and `update_from_output()` (vLLM 0.32), decision for decision
and block for block, behind the interface the engine uses on any scheduler (scheduler/interface.py).

One step, as vLLM decides it (`schedule`):
1. running requests first, in their order, each taking what it still lacks (the rest of its prompt, or one
   token plus its draft tokens), cut to the token budget, to `long_prefill_token_threshold` (when more than
   one request is there) and to max_model_len; one that gets no blocks preempts the tail of `running` (or, with
   the priority policy, the least important running request) until it fits or is itself preempted, and that
   ends the loop over running requests;
2. then, only in a step that preempted nobody, waiting requests in queue order while a token is left and
   fewer than max_num_seqs run: prefix-cache hits first (a preempted request too, from its own freed blocks if
   they are still cached), the rest cut to the budget (chunked prefill) or left waiting (not chunked), admitted
   only if its whole sequence fits in the free blocks; the first one that does not fit stops the loop.
The events say why in vLLM's terms. `postprocess` is `update_from_output`: tokens appended and checked for
EOS, max_tokens and max_model_len, rejected drafts rolled back (their blocks stay), then the n-gram drafts
for the next step (vLLM's model runner proposes them; `scheduler/speculative.py` finds the same ones).

Requests must carry distinct (priority, arrival, seq_id): vLLM breaks ties by arrival time and request id.
"""

from __future__ import annotations

from bisect import insort
from collections import deque

from scheduler.config import Config
from scheduler.events import Event, Finished, Preempted, Speculated
from scheduler.interface import POOL_SHAPE, Batch, check_new, requeue
from scheduler.policies import priority_key
from scheduler.sequence import PLACEHOLDER, Sequence, SequenceStatus
from scheduler.speculative import NgramIndex
from scheduler.vllm_v1.kv_cache import KVCache
from scheduler.vllm_v1.output import NOT_SCHEDULED_YET, RequestCounters, SchedulerOutput
from scheduler.vllm_v1.step import schedule_step

# The Config fields the twin does not read: vLLM has no such choice (it preempts the running tail, or the least
# important request under the priority queue policy, whatever preemption_policy says).
IGNORED_SETTINGS = ("prefill_first", "mixed_batches", "preemption_policy", "cache_blocks_at_allocation",
                    "notebook_block_bug")
WAITING, RUNNING, FINISHED, ABORTED = (SequenceStatus.WAITING, SequenceStatus.RUNNING, SequenceStatus.FINISHED,
                                       SequenceStatus.ABORTED)


class _Pending:
    """What vLLM's Request holds beyond our Sequence: the drafts proposed for its next step, whether its last
    scheduled chunk left prompt tokens to compute, and, under async scheduling, its tokens still in flight:
    `placeholders` (vLLM's num_output_placeholders), `unlanded` (trailing PLACEHOLDER entries of its token_ids;
    more than `placeholders` once a preemption forgot them), `in_flight` scheduled tokens and `stale` ones (in
    flight when it was preempted: until they land it is not admitted again)."""

    __slots__ = ("drafts", "prefill_chunk", "placeholders", "unlanded", "in_flight", "stale")

    def __init__(self):
        self.drafts: list[int] = []
        self.prefill_chunk = False
        self.placeholders = self.unlanded = self.in_flight = self.stale = 0

    def num_tokens(self, seq: Sequence) -> int:
        """vLLM's num_tokens: the tokens known, not those still in flight."""
        return len(seq.token_ids) - self.unlanded


class VllmScheduler:
    kind = "vllm"
    ignored_settings = IGNORED_SETTINGS

    def __init__(self, config: Config):
        self.config = config
        self.block_manager = KVCache(config.num_kvcache_blocks, config.kvcache_block_size, config.max_model_len,
                                     config.enable_prefix_caching)
        self.waiting: deque[Sequence] | list[Sequence] = [] if config.queue_policy == "priority" else deque()
        self.running: list[Sequence] = []
        self.num_preemptions = 0
        self._pending: dict[int, _Pending] = {}  # by request id, for every request in waiting or running
        self._events: list[Event] = []
        self._in_flight: deque[list[tuple[Sequence, int, int | None]]] = deque()  # async: launched steps,
        # each (sequence, tokens scheduled, index of its placeholder token or None) in vLLM's order
        self._finished_since: list[int] = []  # finished since the last schedule(): its SchedulerOutput tells them
        self._first_cached: dict[int, int] = {}  # request id -> prefix-cache hit tokens of its first scheduling
        self._output: SchedulerOutput | None = None

    # -- requests --------------------------------------------------------------------------------------

    def add(self, seq: Sequence):
        """Queue a new request; an empty one or one of max_model_len tokens is refused (RequestRejected) and ends
        ABORTED, as vLLM's input checks refuse it. A prompt larger than the whole pool is queued, as vLLM's
        Scheduler queues it: it never fits, so it waits for good and, at the head of the queue, holds up every
        request behind it (vLLM's engine refuses at start a max_model_len its pool cannot hold, so it never gets
        such a request; `tools/vllm_check`'s "pool" mode checks the twin against vLLM's Scheduler here)."""
        check_new(seq, self.config, held=seq.seq_id in self._pending)
        seq.status = WAITING
        self._pending[seq.seq_id] = _Pending()
        self._enqueue(seq)

    def _enqueue(self, seq: Sequence, preempted: bool = False):
        """FCFS: arrivals at the tail, preempted requests at the head; priority: in (priority, arrival) order."""
        if self.config.queue_policy == "priority":
            insort(self.waiting, seq, key=priority_key)
        elif preempted:
            self.waiting.appendleft(seq)
        else:
            self.waiting.append(seq)

    def requeue(self, seqs: list[Sequence]) -> list:
        return requeue(self, seqs)

    def reconfigure(self, config: Config):
        """Switch to `config` from the next step on, the queues and the KV cache kept."""
        changed = [f for f in POOL_SHAPE if getattr(config, f) != getattr(self.config, f)]
        if changed:
            raise ValueError(f"{changed} change the KV pool: build a new Scheduler and requeue() its requests")
        if config.queue_policy != self.config.queue_policy:
            queued = sorted(self.waiting, key=priority_key) if config.queue_policy == "priority" else self.waiting
            self.waiting = list(queued) if config.queue_policy == "priority" else deque(queued)
        self.config = config
        self.block_manager.enable_caching = config.enable_prefix_caching
        self.block_manager.max_model_len = config.max_model_len

    def is_finished(self) -> bool:
        return not self.waiting and not self.running

    # -- one step --------------------------------------------------------------------------------------

    def schedule(self) -> Batch:
        """This step's batch, with the events of deciding it; `scheduler_output()` then tells it as vLLM's
        SchedulerOutput does."""
        self._events = []
        held = {seq.seq_id: len(seq.block_table) for seq in self.running}
        batch = schedule_step(self)
        self._output = self._scheduler_output(batch, held)
        return batch

    def scheduler_output(self) -> SchedulerOutput | None:
        """The last schedule()'s step as vLLM's SchedulerOutput lists it, with vLLM's per-request counters."""
        return self._output

    def _scheduler_output(self, batch: Batch, held: dict[int, int]) -> SchedulerOutput:
        admitted = {e.seq_id: e for e in batch.events if e.kind == "admitted"}
        for rid, event in admitted.items():
            self._first_cached.setdefault(rid, event.num_cached_tokens)
        ids = [seq.seq_id for seq in batch.seqs]
        counters = tuple(RequestCounters(seq.seq_id, seq.num_computed_tokens + seq.num_scheduled_tokens,
                                         self._pending[seq.seq_id].num_tokens(seq),
                                         self._first_cached.get(seq.seq_id, NOT_SCHEDULED_YET))
                         for seq in (*self.running, *self.waiting))
        finished, self._finished_since = tuple(self._finished_since), []
        kv = self.block_manager
        return SchedulerOutput(
            tuple(i for i in ids if i in admitted and not admitted[i].recompute),
            tuple(i for i in ids if i in admitted and admitted[i].recompute),
            tuple(i for i in ids if i not in admitted),
            tuple((seq.seq_id, tuple(seq.block_table[held.get(seq.seq_id, 0):])) for seq in batch.seqs),
            tuple(e.seq_id for e in batch.events if e.kind == "preempted"), finished, counters,
            kv.prefix_query_tokens, kv.prefix_hit_tokens, kv.preempted_query_tokens, kv.preempted_hit_tokens)

    def _preempt(self, seq: Sequence, for_seq: Sequence, policy: str):
        """vLLM's `_preempt_request`: free its blocks, forget its progress and drafts, queue it again."""
        freed = self.block_manager.free(seq)
        seq.num_computed_tokens = seq.num_scheduled_tokens = 0
        seq.draft_token_ids = []
        pending = self._pending[seq.seq_id]
        pending.drafts, pending.placeholders, pending.stale = [], 0, pending.in_flight
        seq.status = WAITING
        seq.num_preemptions += 1
        self.num_preemptions += 1
        self._enqueue(seq, preempted=True)
        self._events.append(Preempted(seq.seq_id, for_seq.seq_id, policy, freed))

    # -- after the model ran ---------------------------------------------------------------------------

    def postprocess(self, seqs: list[Sequence], token_ids: list) -> list[Event]:
        """vLLM's `update_from_output` then `update_draft_token_ids`. `token_ids` has one entry per sequence:
        None for a prefill chunk, else the new token, or for a sequence with drafts the list of the accepted
        drafts followed by the model's own token."""
        if len(token_ids) != len(seqs):
            raise ValueError(f"postprocess got {len(token_ids)} outputs for a batch of {len(seqs)} sequences; "
                             "give one per scheduled sequence (nothing was applied)")
        self._events = events = []
        stopped = []
        for seq, output in zip(seqs, token_ids, strict=True):
            drafts = seq.draft_token_ids
            seq.num_computed_tokens += seq.num_scheduled_tokens
            seq.num_scheduled_tokens = 0
            if output is None:
                continue
            new = output if type(output) is list else [output]
            if drafts:
                accepted = len(new) - 1
                seq.num_computed_tokens -= len(drafts) - accepted  # rejected drafts: their blocks stay
                seq.draft_token_ids = []
                events.append(Speculated(seq.seq_id, tuple(d for d in drafts), accepted))
            for token in new:
                seq.token_ids.append(token)
                reason = self._stop_reason(seq, token)
                if reason:
                    stopped.append(seq)
                    self._finish(seq, reason)
                    break
        if stopped:
            gone = set(stopped)
            self.running = [s for s in self.running if s not in gone]
        if self.config.num_speculative_tokens:
            self._propose_drafts(seqs, token_ids)
        return events

    def _stop_reason(self, seq: Sequence, token: int) -> str | None:
        """vLLM's `check_stop`: EOS first, then the length limits."""
        cfg = self.config
        if token == cfg.eos and not seq.sampling_params.ignore_eos:
            return "eos"
        if len(seq.token_ids) >= cfg.max_model_len:
            return "max_model_len"
        if seq.num_completion_tokens >= seq.sampling_params.max_tokens:
            return "max_tokens"
        return None

    def _finish(self, seq: Sequence, reason: str):
        seq.status, seq.finish_reason = FINISHED, reason
        seq.num_scheduled_tokens = 0
        del self._pending[seq.seq_id]
        self._finished_since.append(seq.seq_id)
        self.block_manager.free(seq)
        self._events.append(Finished(seq.seq_id, reason))

    def _propose_drafts(self, seqs: list[Sequence], token_ids: list):
        """The n-gram drafts vLLM's model runner proposes after a step, for each request that sampled a token
        and is below max_model_len; a request still prefilling gets none."""
        cfg = self.config
        for seq, output in zip(seqs, token_ids, strict=True):
            pending = self._pending.get(seq.seq_id)
            if pending is None:  # finished
                continue
            if output is None or pending.prefill_chunk:
                pending.drafts = []
                continue
            room = cfg.max_model_len - len(seq.token_ids)
            index = seq.ngram_index
            if index is None or (index.min_n, index.max_n) != (cfg.prompt_lookup_min, cfg.prompt_lookup_max):
                index = seq.ngram_index = NgramIndex(cfg.prompt_lookup_min, cfg.prompt_lookup_max)
            enough = len(seq.token_ids) >= cfg.prompt_lookup_min
            pending.drafts = index.propose(seq.token_ids, min(cfg.num_speculative_tokens, room)) if enough else []

    # -- async scheduling (the engine's overlapped scheduling, vLLM's AsyncScheduler) ----------------------

    def launch(self, seqs: list[Sequence], outputs: list) -> list[Event]:
        """The batch went to the model; its tokens land later (`land`). `outputs` holds PLACEHOLDER for each
        request that will sample, None for a prefill chunk. vLLM's `_update_after_schedule`: computed tokens
        advance now, and each request that will sample gets a placeholder token."""
        launched = []
        for seq, output in zip(seqs, outputs, strict=True):
            pending, num = self._pending[seq.seq_id], seq.num_scheduled_tokens
            seq.num_computed_tokens += num
            seq.num_scheduled_tokens = 0
            pending.in_flight += num
            index = None
            if output is not None:
                index = len(seq.token_ids)
                seq.token_ids.append(PLACEHOLDER)
                pending.unlanded += 1
                pending.placeholders += 1
            launched.append((seq, num, index))
        self._in_flight.append(launched)
        return []

    def land(self, landed: list[tuple[Sequence, int, int]]) -> tuple[list[tuple[Sequence, tuple[int, ...]]], list]:
        """The oldest step in flight returned its (sequence, index, token)s: vLLM's `update_from_output` under
        async scheduling. A request that stops (EOS, max_tokens, max_model_len) finishes now, one step late, its
        blocks freed: returned with them (the engine drops it from the next batch). A request preempted while
        its token was in flight still takes the token (vLLM delivers stale output)."""
        tokens = {seq.seq_id: token for seq, _, token in landed}
        late = []
        stopped = set()
        for seq, num, index in self._in_flight.popleft():
            pending = self._pending.get(seq.seq_id)
            if pending is None:
                continue
            pending.in_flight -= num
            stale = pending.stale > 0
            if stale:
                pending.stale -= num
            if index is None:
                continue
            seq.token_ids[index] = token = tokens[seq.seq_id]
            pending.unlanded -= 1
            was_running = seq.status is RUNNING
            if not stale:
                pending.placeholders -= 1
            reason = self._stop_reason(seq, token)
            if was_running:
                self.block_manager.cache_blocks(seq, seq.num_computed_tokens - pending.placeholders)
            if reason:
                stopped.add(seq)
                seq.status, seq.finish_reason = FINISHED, reason
                del self._pending[seq.seq_id]
                self._finished_since.append(seq.seq_id)
                late.append((seq, self.block_manager.free(seq)))
        if stopped:
            self.running = [s for s in self.running if s not in stopped]
            self.waiting = type(self.waiting)(s for s in self.waiting if s not in stopped)
        return late, []
