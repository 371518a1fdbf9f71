"""Property-based tests: for random configs, workloads and every policy combination, the block pool stays
consistent after every step, no request is lost, and every run ends."""

from collections import Counter

from hypothesis import HealthCheck, event, given, settings

from engine.check.strategies import configs, requests
from scheduler import Sequence, SequenceStatus
from scheduler.article import Scheduler
from tests.helpers.scheduler_loop import run_to_end

CONFIGS = configs(block_sizes=(1, 2, 3, 4, 8, 16), speculative=(0, 0, 1, 4))
WORKLOADS = requests(most=12, lengths=(0, 50), most_tokens=30, last_arrival=12)


def check_invariants(scheduler: Scheduler, step: int, every_seq: list[Sequence], rejected: list[Sequence]):
    bm = scheduler.block_manager
    holders = Counter(b for s in scheduler.running for b in s.block_table)
    for block in bm.blocks:
        assert block.ref_count == holders[block.block_id], f"block {block.block_id} ref count"
    assert all(bm.blocks[b].ref_count == 0 for b in bm.free_block_ids)
    used = sum(1 for b in bm.blocks if b.ref_count > 0)
    assert used + bm.num_free_blocks == bm.num_blocks
    waiting_ids = [s.seq_id for s in scheduler.waiting]
    running_ids = [s.seq_id for s in scheduler.running]
    assert len(set(waiting_ids + running_ids)) == len(waiting_ids) + len(running_ids), "a request is in two queues"
    assert all(s.block_table == [] and s.status is SequenceStatus.WAITING for s in scheduler.waiting)
    for s in scheduler.running:
        assert s.status is SequenceStatus.RUNNING
        assert len(s.block_table) == bm.blocks_for(s.num_computed_tokens), "blocks cover exactly the computed tokens"
        assert len(s) <= scheduler.config.max_model_len
    for block_hash, block_id in bm.hash_to_block_id.items():
        assert bm.blocks[block_id].hash == block_hash
    live = set(waiting_ids + running_ids)
    added = [s for s in every_seq if s.arrival <= step and s not in rejected]
    assert all(s.seq_id in live or s.is_done for s in added), "a request was lost"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=CONFIGS, workload=WORKLOADS)
def test_pool_stays_consistent_and_every_request_ends(config, workload):
    scheduler, arrivals, rejected = Scheduler(config), {}, []
    for arrival, seq in workload:
        arrivals.setdefault(arrival, []).append(seq)
    every_seq = [seq for _, seq in workload]

    def after_step(step, batch, events):
        check_invariants(scheduler, step, every_seq, rejected)
        for e in events:
            event(e.kind)

    run_to_end(scheduler, arrivals, max_steps=20_000, on_step=after_step, rejected=rejected)
    for seq in rejected:
        n = len(seq)
        assert n == 0 or n >= config.max_model_len or -(-n // config.kvcache_block_size) > config.num_kvcache_blocks
    for seq in every_seq:
        if seq not in rejected:
            assert seq.is_done and seq.finish_reason, f"{seq} ended without a reason"
