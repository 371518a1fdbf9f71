"""A whole scheduler of your own, from the contract (docs/schedulers.md, scheduler/contract.py SchedulerProtocol).
It runs as it is, and keeps every invariant the checker tests, with the plainest policy there is: first come, first
served, a request admitted only when the blocks for its whole life are free (so nobody is ever preempted), and every
running request computing what it has left each step within the token budget (its prompt in chunks where the budget
is short, then a token a step), new ones after. Each TODO says what to try next.

    python -m engine run scenarios/02_preemption.toml --scheduler starters/skeleton.py:MyScheduler
    python -m engine check starters/skeleton.py:MyScheduler

It subclasses the article's scheduler for its declaration only (what the app offers and draws for it: `info`) and
for `launch`/`land` (overlapped scheduling, which calls `postprocess` and `_end` below); every call the engine makes
is written here.
"""

from collections import deque

from scheduler.article import Scheduler
from scheduler.article.block_manager import BlockManager
from scheduler.events import Aborted, Admitted, Blocked, Finished
from scheduler.interface import Batch, check_new, check_pool_shape, refuse, requeue
from scheduler.sequence import SequenceStatus

WAITING, RUNNING, FINISHED, ABORTED = (SequenceStatus.WAITING, SequenceStatus.RUNNING, SequenceStatus.FINISHED,
                                       SequenceStatus.ABORTED)


class MyScheduler(Scheduler):
    info = Scheduler.info.derive("my_scheduler")  # your kind's id, in traces and links
    names = {"en": "my scheduler", "zh": "我的调度器"}

    def __init__(self, config):
        self.config = config
        self.block_manager = BlockManager(config)  # the KV pool: blocks, their free list, the prefix cache
        self.waiting = deque()
        self.running = deque()
        self.num_preemptions = 0

    def add(self, seq):
        """A request arrives: queue it, or refuse one that could never run (it ends ABORTED, with the reason)."""
        check_new(seq, self.config, held=seq in self.waiting or seq in self.running)
        pool = self.block_manager
        if pool.blocks_for(self._longest(seq)) > pool.num_blocks:
            refuse(seq, "abort.needs_whole_pool", blocks=pool.num_blocks, size=pool.block_size)
        seq.status = WAITING
        self.waiting.append(seq)  # TODO: another order (a priority, the shortest job first)?

    def schedule(self):
        """This step's batch: every running request computes what it has left (the rest of its prompt, or its next
        token), in queue order, within the token budget; then requests are admitted from the head of `waiting`."""
        pool, batch, events = self.block_manager, [], []
        budget = self.config.max_num_batched_tokens
        for seq in self.running:  # TODO: decodes first, so that a long prompt does not slow them down?
            if not budget:
                break
            batch.append((seq, min(len(seq) - seq.num_computed_tokens, budget)))
            budget -= batch[-1][1]
        while self.waiting and budget and len(self.running) < self.config.max_num_seqs:
            seq = self.waiting[0]
            # TODO: blocks for the whole life leave many free for nothing: take those of the prompt, grow a block
            # at a time, and preempt someone (back to `waiting`, its blocks freed) when none is free
            need = pool.blocks_for(self._longest(seq))
            if need > pool.num_free_blocks:
                events.append(Blocked(seq.seq_id, "blocks", need, pool.num_free_blocks))
                break
            self.waiting.popleft()
            pool.take_blocks(seq, need)
            seq.status = RUNNING
            self.running.append(seq)
            batch.append((seq, min(len(seq), budget)))
            budget -= batch[-1][1]
            events.append(Admitted(seq.seq_id, batch[-1][1], 0, False))
        for seq, num in batch:
            seq.num_scheduled_tokens = num
        prefills = sum(1 for seq, _ in batch if seq.is_prefilling)
        kind = "idle" if not batch else "prefill" if prefills == len(batch) else "mixed" if prefills else "decode"
        return Batch([seq for seq, _ in batch], tuple(num for _, num in batch), kind, tuple(events))

    def postprocess(self, seqs, token_ids):
        """The model ran the batch: one new token per request that finished its prompt (None for a chunk)."""
        events = []
        for seq, token in zip(seqs, token_ids, strict=True):
            seq.num_computed_tokens += seq.num_scheduled_tokens
            seq.num_scheduled_tokens = 0
            if seq.num_computed_tokens < len(seq):
                continue  # a chunk of its prompt: no token yet
            seq.token_ids.append(token)
            reason = self._finish_reason(seq, token)
            if reason:
                self.running.remove(seq)
                self._end(seq, FINISHED, reason)
                events.append(Finished(seq.seq_id, reason))
        return events

    def abort(self, seq, reason):
        """End a request this scheduler holds (the user cancelled it)."""
        (self.running if seq.status is RUNNING else self.waiting).remove(seq)
        seq.num_scheduled_tokens = 0
        self._end(seq, ABORTED, reason)
        return Aborted(seq.seq_id, reason)

    def requeue(self, seqs):
        """Requests of another pool, queued here to be computed again from their first token."""
        return requeue(self, seqs)

    def reconfigure(self, config):
        """The settings changed mid-run (the pool's shape cannot)."""
        check_pool_shape(self.config, config)
        self.config = self.block_manager.config = config

    def is_finished(self):
        return not self.waiting and not self.running

    def _end(self, seq, status, reason):
        """`seq` (already out of the queues) ends: its status, its reason, its blocks freed (returned)."""
        seq.status, seq.finish_reason = status, reason
        return self.block_manager.deallocate(seq)

    def _longest(self, seq):
        """The most tokens `seq` can ever hold: its prompt and max_tokens, within max_model_len."""
        return min(seq.num_prompt_tokens + seq.sampling_params.max_tokens, self.config.max_model_len)

    def _finish_reason(self, seq, token):
        if token == self.config.eos and not seq.sampling_params.ignore_eos:
            return "eos"
        if seq.num_completion_tokens >= seq.sampling_params.max_tokens:
            return "max_tokens"
        if len(seq) >= self.config.max_model_len:
            return "max_model_len"
        return None
