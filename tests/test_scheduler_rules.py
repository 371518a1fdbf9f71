"""One test per scheduling rule, on hand-built situations small enough to check by eye."""

import pytest

from scheduler import Config, RequestRejected, SamplingParams, Sequence, SequenceStatus
from scheduler.article import Scheduler
from scheduler.article import block_manager as bm_module
from scheduler.contract import UnitState
from tests.helpers.scheduler_loop import run_to_end


def config(**overrides) -> Config:
    base = dict(max_num_seqs=4, max_num_batched_tokens=64, max_model_len=40, num_kvcache_blocks=20,
                kvcache_block_size=10, eos=-1, enable_prefix_caching=False)
    return Config(**{**base, **overrides})


def seq(n: int, seq_id: int, max_tokens: int = 8, start: int = 1, **kw) -> Sequence:
    params = SamplingParams(temperature=0.0, max_tokens=max_tokens, ignore_eos=kw.pop("ignore_eos", True))
    return Sequence(list(range(start, start + n)), params, seq_id=seq_id, **kw)


def step(scheduler: Scheduler, token: int = 7):
    batch = scheduler.schedule()
    tokens = [None if s.num_computed_tokens + s.num_scheduled_tokens < len(s) else token for s in batch.seqs]
    scheduler.postprocess(batch.seqs, tokens)
    return batch


def kinds(batch, kind: str) -> list:
    """The events of one kind among those schedule() returned with `batch`."""
    return [e for e in batch.events if e.kind == kind]


# -- add() -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n, match", [(0, "empty"), (40, "max_model_len"), (45, "max_model_len")])
def test_add_refuses_prompts_that_can_never_run(n, match):
    with pytest.raises(RequestRejected, match=match):
        Scheduler(config()).add(seq(n, 0))


def test_add_refuses_a_prompt_larger_than_the_pool():
    with pytest.raises(RequestRejected, match="pool has 2"):
        Scheduler(config(num_kvcache_blocks=2)).add(seq(25, 0))


# -- prefill -----------------------------------------------------------------------------------------

def test_prefill_counts_tokens_against_the_budget():
    s = Scheduler(config(max_num_batched_tokens=50))
    for i in range(3):
        s.add(seq(20, i))
    batch = s.schedule()
    assert [x.seq_id for x in batch.seqs] == [0, 1] and batch.num_tokens == 40 and batch.kind == "prefill"
    (blocked,) = kinds(batch, "blocked")
    assert (blocked.seq_id, blocked.reason, blocked.needed, blocked.available) == (2, "token_budget", 20, 10)


def test_prefill_stops_at_max_num_seqs_and_when_blocks_are_short():
    s = Scheduler(config(max_num_seqs=2))
    for i in range(3):
        s.add(seq(5, i))
    batch = s.schedule()
    assert [x.seq_id for x in batch.seqs] == [0, 1]
    assert kinds(batch, "blocked")[0].reason == "max_num_seqs"

    s = Scheduler(config(num_kvcache_blocks=3))
    s.add(seq(15, 0))
    s.add(seq(15, 1))
    batch = s.schedule()
    assert [x.seq_id for x in batch.seqs] == [0]
    blocked = kinds(batch, "blocked")[0]
    assert (blocked.reason, blocked.needed, blocked.available) == ("blocks", 2, 1)


def test_prefill_moves_head_of_waiting_to_tail_of_running():
    s = Scheduler(config())
    s.add(seq(3, 0))
    step(s)
    s.add(seq(3, 1))
    batch = s.schedule()
    assert batch.kind == "prefill" and [x.seq_id for x in s.running] == [0, 1]
    assert s.running[1].status is SequenceStatus.RUNNING and not s.waiting


def test_blocks_come_from_the_free_list_head_and_return_to_its_tail_last_block_first():
    s = Scheduler(config(num_kvcache_blocks=6, max_model_len=30))
    s.add(seq(25, 0, max_tokens=1))
    s.schedule()
    assert s.running[0].block_table == [0, 1, 2]
    assert list(s.block_manager.free_block_ids) == [3, 4, 5]
    s.postprocess(list(s.running), [7])  # max_tokens=1: finishes and frees
    assert list(s.block_manager.free_block_ids) == [3, 4, 5, 2, 1, 0]


# -- decode ------------------------------------------------------------------------------------------

def test_decode_batches_at_most_max_num_seqs_and_keeps_order():
    s = Scheduler(config(max_num_seqs=2, max_num_batched_tokens=64))
    for i in range(4):
        s.add(seq(3, i))
    step(s), step(s)  # two prefills of two requests each
    assert [x.seq_id for x in s.running] == [0, 1, 2, 3]
    batch = s.schedule()
    assert batch.kind == "decode" and [x.seq_id for x in batch.seqs] == [0, 1]
    assert [x.seq_id for x in s.running] == [0, 1, 2, 3]


@pytest.mark.parametrize("prompt_len, needs_block", [(9, False), (10, True), (11, False)])
def test_can_append_boundary_is_one_past_a_block(prompt_len, needs_block):
    """After prefill the sequence holds prompt_len + 1 tokens; decoding writes the K/V of its last one."""
    s = Scheduler(config(num_kvcache_blocks=5))
    s.add(seq(prompt_len, 0))
    step(s)
    held = len(s.running[0].block_table)
    step(s)
    assert len(s.running[0].block_table) == held + needs_block


def test_decode_preempts_the_tail_when_no_block_is_free():
    s = Scheduler(config(num_kvcache_blocks=3, max_num_seqs=3))
    s.add(seq(10, 0))  # will need a second block at its first decode
    s.add(seq(5, 1))
    s.add(seq(5, 2))
    step(s)
    batch = s.schedule()
    (pre,) = kinds(batch, "preempted")
    assert (pre.seq_id, pre.for_seq_id, pre.policy) == (2, 0, "tail")
    assert [x.seq_id for x in batch.seqs] == [0, 1]
    victim = s.waiting[0]
    assert victim.seq_id == 2 and victim.status is SequenceStatus.WAITING and victim.block_table == []
    assert victim.num_computed_tokens == 0


def test_the_last_running_sequence_preempts_itself_when_others_are_batched():
    s = Scheduler(config(num_kvcache_blocks=2, max_num_seqs=2))
    a, b = seq(5, 0), seq(10, 1)
    s.add(a)
    s.add(b)
    step(s)
    batch = s.schedule()  # a fits in its block; b needs a second one and nothing is left to preempt
    (pre,) = kinds(batch, "preempted")
    assert (pre.seq_id, pre.for_seq_id) == (1, 1) and batch.seqs == [a]
    assert list(s.waiting) == [b] and list(s.running) == [a]


def test_preempted_sequence_is_recomputed_with_its_output():
    s = Scheduler(config(num_kvcache_blocks=3, max_num_seqs=2))
    s.add(seq(10, 0))
    s.add(seq(20, 1))
    step(s)  # both prefilled: 1 + 2 blocks, pool full
    step(s)  # 0 needs a block: preempts 1 (the tail), which holds 21 tokens
    while s.running:
        step(s)
    batch = s.schedule()
    (adm,) = kinds(batch, "admitted")
    assert adm.seq_id == 1 and adm.recompute and adm.num_tokens == 21


def test_sequence_outgrowing_the_whole_pool_is_aborted_not_looped():
    s = Scheduler(config(num_kvcache_blocks=1, max_model_len=30))
    a, b = seq(5, 0, max_tokens=20), seq(3, 1, max_tokens=2)
    run_to_end(s, {1: [a, b]})
    assert a.status is SequenceStatus.ABORTED and "whole KV pool" in a.finish_reason
    assert b.status is SequenceStatus.FINISHED


def test_block_size_one_allocates_a_block_per_token():
    s = Scheduler(config(kvcache_block_size=1, num_kvcache_blocks=12, max_model_len=12))
    a = seq(4, 0, max_tokens=6)
    s.add(a)
    step(s)
    assert a.block_table == [0, 1, 2, 3]
    step(s)
    assert len(a.block_table) == 5  # the token sampled at prefill now has its K/V
    run_to_end(s, {})
    assert a.status is SequenceStatus.FINISHED and a.num_completion_tokens == 6


def test_empty_schedule_is_an_idle_batch():
    s = Scheduler(config())
    batch = s.schedule()
    seqs, is_prefill = batch
    assert seqs == [] and is_prefill is False and batch.kind == "idle"


# -- postprocess -------------------------------------------------------------------------------------

def test_finish_reasons():
    s = Scheduler(config(max_model_len=12))
    eos, ignore, short, long = (seq(3, 0, ignore_eos=False), seq(3, 1, ignore_eos=True),
                                seq(3, 2, max_tokens=2), seq(8, 3, max_tokens=30))
    for x in (eos, ignore, short, long):
        s.add(x)
    batch = s.schedule()
    s.postprocess(batch.seqs, [-1, -1, 5, 5])
    assert eos.finish_reason == "eos" and eos.status is SequenceStatus.FINISHED
    assert ignore.status is SequenceStatus.RUNNING
    run_to_end(s, {})
    assert (short.finish_reason, long.finish_reason) == ("max_tokens", "max_model_len")
    assert len(long) == 12 and ignore.finish_reason in ("max_tokens", "max_model_len")


def test_finished_sequence_frees_its_blocks_and_leaves_running():
    s = Scheduler(config())
    a = seq(15, 0, max_tokens=1)
    s.add(a)
    step(s)
    assert not s.running and a.block_table == [] and s.block_manager.num_free_blocks == 20


# -- prefix caching ----------------------------------------------------------------------------------

def test_prefix_hit_shares_blocks_and_counts_only_uncached_tokens():
    s = Scheduler(config(enable_prefix_caching=True))
    a, b = seq(25, 0), seq(25, 1)
    s.add(a)
    step(s)
    s.add(b)
    batch = s.schedule()
    (hit,) = kinds(batch, "prefix_hit")
    assert hit.block_ids == tuple(a.block_table[:2]) and hit.num_tokens == 20
    assert batch.num_scheduled_tokens == (5,) and b.block_table[:2] == a.block_table[:2]
    assert all(s.block_manager.blocks[i].ref_count == 2 for i in a.block_table[:2])
    assert (s.block_manager.num_prefix_hits, s.block_manager.num_prefix_queries) == (2, 4)


def test_a_hit_never_skips_the_last_token():
    s = Scheduler(config(enable_prefix_caching=True))
    a, b = seq(20, 0, max_tokens=1), seq(20, 1)
    s.add(a)
    step(s)
    s.add(b)
    batch = s.schedule()
    assert b.num_cached_tokens == 10 and batch.num_scheduled_tokens == (10,)


def test_freed_blocks_stay_cached_and_are_revived_in_lru_order():
    s = Scheduler(config(enable_prefix_caching=True, num_kvcache_blocks=4))
    a = seq(25, 0, max_tokens=1)
    s.add(a)
    step(s)  # finished: blocks 2, 1, 0 return to the tail, 0 and 1 keep their content
    bm = s.block_manager
    assert [b for b in bm.free_order() if bm.state(b) is UnitState.CACHED] == [1, 0]
    assert list(bm.free_block_ids) == [3, 2, 1, 0]
    b = seq(25, 1, max_tokens=1)
    s.add(b)
    s.schedule()
    assert b.block_table[:2] == [0, 1] and b.num_cached_tokens == 20 and list(bm.free_block_ids) == [2]


def test_reusing_a_cached_block_evicts_its_content():
    s = Scheduler(config(enable_prefix_caching=True, num_kvcache_blocks=3))
    step_add = [seq(25, 0, max_tokens=1), seq(25, 1, max_tokens=1, start=500)]
    s.add(step_add[0])
    step(s)
    s.add(step_add[1])
    step(s)  # takes all three blocks, evicting the first request's cached blocks
    c = seq(25, 2)
    s.add(c)
    s.schedule()
    assert c.num_cached_tokens == 0


def test_hash_hit_is_confirmed_by_comparing_tokens(monkeypatch):
    monkeypatch.setattr(bm_module, "chain_hash", lambda tokens, prefix: 42)
    s = Scheduler(config(enable_prefix_caching=True))
    s.add(seq(25, 0))
    step(s)
    other = seq(25, 1, start=100)
    s.add(other)
    batch = s.schedule()
    assert other.num_cached_tokens == 0 and not kinds(batch, "prefix_hit")


# -- chunked prefill and mixed batches ---------------------------------------------------------------

def test_chunked_prefill_splits_a_long_prompt_to_the_budget():
    s = Scheduler(config(chunked_prefill=True, max_num_batched_tokens=16, max_model_len=60, max_num_seqs=2))
    long = seq(40, 0)
    s.add(long)
    chunks = []
    for _ in range(3):
        batch = step(s)
        chunks.append(batch.num_scheduled_tokens)
    assert chunks == [(16,), (16,), (8,)]
    assert long.num_completion_tokens == 1 and long.num_computed_tokens == 40


def test_partial_prefill_keeps_its_place_ahead_of_later_arrivals():
    s = Scheduler(config(chunked_prefill=True, max_num_batched_tokens=16, max_model_len=60))
    s.add(seq(40, 0))
    step(s)
    s.add(seq(4, 1))
    batch = s.schedule()
    assert [x.seq_id for x in batch.seqs] == [0] and kinds(batch, "chunk")[0].start == 16


def test_mixed_batch_carries_decodes_and_a_prefill_chunk():
    s = Scheduler(config(chunked_prefill=True, mixed_batches=True, max_num_batched_tokens=16, max_model_len=60))
    s.add(seq(3, 0))
    step(s)
    s.add(seq(40, 1))
    batch = s.schedule()
    assert batch.kind == "mixed" and [x.seq_id for x in batch.seqs] == [0, 1]
    assert batch.num_scheduled_tokens == (1, 15)


# -- policies ----------------------------------------------------------------------------------------

def test_smart_preemption_picks_least_progress():
    s = Scheduler(config(num_kvcache_blocks=3, max_num_seqs=3, preemption_policy="smart"))
    a, b, c = seq(10, 0, max_tokens=20), seq(5, 1, max_tokens=2), seq(5, 2, max_tokens=20)
    for x in (a, b, c):
        s.add(x)
    step(s)  # every request has one token: b is at 1/2 of max_tokens, c at 1/20
    batch = s.schedule()
    (pre,) = kinds(batch, "preempted")
    assert (pre.seq_id, pre.for_seq_id, pre.policy) == (2, 0, "smart")


def test_priority_preemption_picks_lowest_priority_and_spares_more_important_ones():
    s = Scheduler(config(num_kvcache_blocks=3, max_num_seqs=3, preemption_policy="priority"))
    a, b, c = seq(10, 0, priority=1), seq(5, 1, priority=5), seq(5, 2, priority=0)
    for x in (a, b, c):
        s.add(x)
    step(s)
    batch = s.schedule()
    (pre,) = kinds(batch, "preempted")
    assert (pre.seq_id, pre.for_seq_id) == (1, 0)


def test_priority_preemption_serves_running_in_priority_order():
    """An important request at the tail of running must not preempt itself while less important ones decode."""
    s = Scheduler(config(num_kvcache_blocks=3, max_num_seqs=3, preemption_policy="priority"))
    low_a, low_b, vip = seq(5, 0, priority=5), seq(5, 1, priority=5), seq(10, 2, priority=0)
    for x in (low_a, low_b, vip):
        s.add(x)
    step(s)  # all three prefilled, pool full; the VIP needs a second block at its first decode
    batch = s.schedule()
    (pre,) = kinds(batch, "preempted")
    assert (pre.seq_id, pre.for_seq_id) == (1, 2)
    assert [x.seq_id for x in batch.seqs] == [2, 0] and vip.status is SequenceStatus.RUNNING


def test_priority_queue_orders_waiting_and_lets_a_vip_preempt():
    s = Scheduler(config(num_kvcache_blocks=2, max_num_seqs=1, queue_policy="priority"))
    s.add(seq(15, 0, priority=5, arrival=0))
    step(s)
    s.add(seq(5, 1, priority=9, arrival=1))
    s.add(seq(5, 2, priority=3, arrival=2))
    assert [x.seq_id for x in s.waiting] == [2, 1]
    batch = s.schedule()
    (pre,) = kinds(batch, "preempted")
    assert (pre.seq_id, pre.for_seq_id, pre.policy) == (0, 2, "priority")
    assert [x.seq_id for x in batch.seqs] == [2] and [x.seq_id for x in s.waiting] == [0, 1]


# -- misuse is refused before anything changes -------------------------------------------------------

def test_add_refuses_a_sequence_already_waiting_or_running():
    s = Scheduler(config(num_kvcache_blocks=4))
    a = seq(15, 0)
    s.add(a)
    with pytest.raises(ValueError, match="already waiting"):
        s.add(a)
    assert list(s.waiting) == [a]
    step(s)
    with pytest.raises(ValueError, match="already running"):
        s.add(a)
    assert list(s.running) == [a] and not s.waiting
    assert [b.ref_count for b in s.block_manager.blocks] == [1, 1, 0, 0]
    run_to_end(s, {})
    assert a.is_done and s.block_manager.num_free_blocks == 4


def test_postprocess_with_the_wrong_number_of_tokens_changes_nothing():
    s = Scheduler(config())
    a, b = seq(5, 0), seq(5, 1)
    s.add(a)
    s.add(b)
    batch = s.schedule()
    with pytest.raises(ValueError, match="1 outputs for a batch of 2"):
        s.postprocess(batch.seqs, [7])
    assert (len(a), a.num_computed_tokens, a.num_scheduled_tokens) == (5, 0, 5)
    s.postprocess(batch.seqs, [7, 8])
    assert (a.token_ids[-1], b.token_ids[-1]) == (7, 8)


def test_a_sequence_refused_by_add_ends_aborted_with_the_reason():
    a = seq(0, 0)
    with pytest.raises(RequestRejected) as refused:
        Scheduler(config()).add(a)
    assert a.status is SequenceStatus.ABORTED and a.finish_reason == str(refused.value)


# -- what the engine asks of the scheduler -----------------------------------------------------------

def test_reconfigure_keeps_the_queues_and_refuses_a_new_pool():
    s = Scheduler(config(enable_prefix_caching=False))
    for i, priority in enumerate((5, 1, 3)):
        s.add(seq(5, i, priority=priority, arrival=i))
    s.reconfigure(config(enable_prefix_caching=True, queue_policy="priority"))
    assert [x.seq_id for x in s.waiting] == [1, 2, 0]
    assert s.block_manager.config is s.config and s.config.enable_prefix_caching
    with pytest.raises(ValueError, match="num_kvcache_blocks"):
        s.reconfigure(config(num_kvcache_blocks=30))
    assert s.config.num_kvcache_blocks == 20


def test_requeue_gives_requests_a_fresh_prefill_and_aborts_those_that_no_longer_fit():
    old = Scheduler(config())
    a, b = seq(15, 0), seq(5, 1)
    old.add(a)
    old.add(b)
    step(old)
    new = Scheduler(config(num_kvcache_blocks=1))
    (aborted,) = new.requeue([a, b])
    assert aborted.seq_id == 0 and a.status is SequenceStatus.ABORTED and "pool has 1" in a.finish_reason
    assert list(new.waiting) == [b] and b.block_table == [] and b.num_computed_tokens == 0 and len(b) == 6
