"""The V0 twin against the scheduler contract (scheduler/contract.py) as far as today's contract holds it (it is not
in the factory yet, so tests/test_scheduler_contract.py does not reach it): it fits SchedulerProtocol, its GPU
and CPU pools fit KVPoolView, and over V0's random workloads of every mode, after every step, each GPU block is
held by as many running requests as its count says, the free order lists exactly the free and cached blocks once
each, a swapped request holds CPU blocks only, and no request has computed more tokens than it knows."""

import random

import pytest

from scheduler import Config, RequestRejected, SamplingParams, Sequence, SequenceStatus
from scheduler.contract import KVPoolView, SchedulerProtocol, UnitState
from scheduler.vllm_v0 import CpuSwapSpaceError, V0Config, VllmV0Scheduler
from tools.refcheck.vllm_v0 import ADAPTER
from tools.refcheck.vllm_v0.workloads import FakeModel


def test_it_fits_the_protocols_and_reads_the_engines_config_under_v0s_names():
    sched = VllmV0Scheduler(Config(num_kvcache_blocks=8, kvcache_block_size=4, chunked_prefill=True,
                                   max_num_batched_tokens=64, queue_policy="priority"))
    assert isinstance(sched, SchedulerProtocol)
    assert isinstance(sched.pool, KVPoolView) and isinstance(sched.cpu_pool, KVPoolView)
    v0 = sched.v0
    assert (v0.num_gpu_blocks, v0.block_size, v0.enable_chunked_prefill, v0.batched_tokens, v0.policy) == \
        (8, 4, True, 64, "priority")
    assert v0.preemption_mode is None and sched.cpu_pool.num_units == v0.cpu_blocks > 0
    pool = sched.pool
    assert pool.num_units == 8 and list(pool.free_order()) == list(range(8)) and pool.num_free_units == 8
    assert not pool.cached_keys() and pool.reserved_unit_ids == ()
    assert sched.info.kind == "vllm_v0" and sched.info.version == "0.10.2"


def test_a_request_is_refused_as_v0s_engine_refuses_it_and_an_abort_frees_its_blocks():
    sched = VllmV0Scheduler(V0Config(num_gpu_blocks=4, block_size=2, max_model_len=8, max_num_batched_tokens=8,
                                     max_num_seqs=4))
    too_long = Sequence(list(range(1, 10)), seq_id=0)  # V0's engine refuses a prompt over max_model_len
    with pytest.raises(RequestRejected):
        sched.add(too_long)
    assert too_long.status is SequenceStatus.ABORTED and not sched.groups
    kept = Sequence([1, 2, 3], SamplingParams(max_tokens=4), seq_id=1)
    sched.add(kept)
    sched.schedule()
    assert kept.block_table == [0, 1] and sched.pool.num_free_units == 2
    aborted = sched.abort(kept, "user")
    assert (aborted.seq_id, kept.status) == (1, SequenceStatus.ABORTED)
    assert sched.pool.num_free_units == 4 and sched.is_finished()


def check_pools(sched: VllmV0Scheduler):
    pool, cpu = sched.pool, sched.cpu_pool
    holders = {}
    for seq in sched.running_seqs:
        for block in seq.block_table:
            holders[block] = holders.get(block, 0) + 1
        assert seq.num_computed_tokens <= len(seq.token_ids)
    for seq in (*sched.waiting_seqs, *sched.swapped_seqs):
        assert not seq.block_table and seq.num_computed_tokens <= len(seq.token_ids)
    free = [u for u in pool.unit_ids if pool.state(u) is not UnitState.USED]
    for unit in pool.unit_ids:
        assert pool.unit_state(unit)[0] == holders.get(unit, 0), unit
        if pool.state(unit) is UnitState.CACHED:
            assert unit in pool.cached_keys()
    order = list(pool.free_order())
    assert sorted(order) == free and len(order) == pool.num_free_units
    for seq in sched.swapped_seqs:
        assert all(cpu.state(b) is UnitState.USED for b in sched.cpu_block_table(seq))


@pytest.mark.parametrize("mode", ADAPTER.modes)
def test_the_pools_stay_whole_step_after_step(mode):
    rng = random.Random(f"contract:{mode}")
    for _ in range(8):
        workload = ADAPTER.random_workload(rng, mode)
        sched, model = VllmV0Scheduler(V0Config(**workload["config"])), FakeModel(workload)
        pending = [Sequence(r["prompt"], SamplingParams(max_tokens=r["max_tokens"], ignore_eos=r["ignore_eos"]),
                            priority=r["priority"], arrival=r["arrival"], seq_id=i)
                   for i, r in enumerate(workload["requests"])]
        for step in range(1, 200):
            while pending and pending[0].arrival < step:
                sched.add(pending.pop(0))
            try:
                batch = sched.schedule()
            except CpuSwapSpaceError:
                break
            check_pools(sched)
            sched.postprocess(batch.seqs, [model.sample(s.seq_id, len(s), [])[0]
                                           if s.num_computed_tokens + n >= len(s) else None
                                           for s, n in zip(batch.seqs, batch.num_scheduled_tokens, strict=True)])
            check_pools(sched)
            if not pending and sched.is_finished():
                break


def test_reconfigure_keeps_the_queues_and_refuses_a_change_of_pool():
    config = Config(num_kvcache_blocks=8, kvcache_block_size=4, max_num_seqs=2)
    sched = VllmV0Scheduler(config)
    sched.add(Sequence([1, 2, 3], SamplingParams(max_tokens=2), seq_id=0))
    sched.reconfigure(Config(num_kvcache_blocks=8, kvcache_block_size=4, max_num_seqs=4))
    assert sched.v0.max_num_seqs == 4 and [s.seq_id for s in sched.waiting_seqs] == [0]
    for changed in ({"num_kvcache_blocks": 9}, {"enable_prefix_caching": False}):
        with pytest.raises(ValueError, match="change V0's block pools"):
            sched.reconfigure(Config(**{"num_kvcache_blocks": 8, "kvcache_block_size": 4, **changed}))
