"""The recorded frames equal a full snapshot of the live scheduler at every step, under every mode."""

import random

import pytest

from engine.inputs.workload import random_workload
from engine.run.engine import Engine
from engine.run.recipe import Request, RunSpec
from engine.run.recorder import request_view
from scheduler import Config
from scheduler.block_pool_view import NO_HASH


def live_snapshot(engine: Engine) -> dict:
    sched, bm = engine.scheduler, engine.scheduler.block_manager
    return {
        "requests": tuple(request_view(r.seq, r.history) for r in engine.requests),
        "blocks": tuple((b.block_id, b.ref_count, None if b.hash == NO_HASH else b.hash,
                         tuple(b.token_ids) if b.hash != NO_HASH else ()) for b in bm.blocks),
        "free_block_ids": tuple(bm.free_block_ids),
        "waiting": tuple(s.seq_id for s in sched.waiting),
        "running": tuple(s.seq_id for s in sched.running),
    }


def frame_snapshot(frame) -> dict:
    return {
        "requests": frame.requests,
        "blocks": tuple((b.id, b.ref_count, b.hash, b.token_ids) for b in frame.blocks),
        "free_block_ids": frame.free_block_ids,
        "waiting": frame.waiting,
        "running": frame.running,
    }


MODES = [
    dict(),
    dict(prefill_first=False),
    dict(chunked_prefill=True, max_num_batched_tokens=24),
    dict(chunked_prefill=True, mixed_batches=True, max_num_batched_tokens=24, preemption_policy="smart"),
    dict(queue_policy="priority", preemption_policy="priority"),
    dict(enable_prefix_caching=False),
    dict(num_speculative_tokens=3, prompt_lookup_min=1),
]


def shared_prefix_workload(seed: int) -> list[Request]:
    rng = random.Random(seed)
    prefix = [rng.randint(1, 999) for _ in range(12)]
    requests = []
    for _ in range(30):
        tail = [rng.randint(1, 999) for _ in range(rng.randint(1, 10))]
        prompt = (prefix if rng.random() < 0.6 else []) + tail
        requests.append(Request(arrival=rng.randint(0, 20), prompt_token_ids=tuple(prompt),
                                max_tokens=rng.randint(1, 12), priority=rng.randint(0, 3), ignore_eos=True))
    return requests


@pytest.mark.parametrize("mode", MODES, ids=lambda m: ",".join(f"{k}={v}" for k, v in m.items()) or "basic")
def test_every_frame_equals_the_live_state(mode):
    config = Config(**{**dict(max_num_seqs=4, max_num_batched_tokens=64, max_model_len=40, num_kvcache_blocks=14,
                              kvcache_block_size=4), **mode})
    engine = Engine(RunSpec(config, shared_prefix_workload(1)))
    snapshots = [live_snapshot(engine)]
    while not engine.is_finished:
        engine.step()
        snapshots.append(live_snapshot(engine))
        assert frame_snapshot(engine.frames[-1]) == snapshots[-1], f"step {engine.step_count}"
    assert engine.scheduler.num_preemptions > 0  # the workload exercises preemption in every mode
    order = list(range(len(snapshots)))
    random.Random(0).shuffle(order)
    for k in order:  # random access rebuilds from keyframes and deltas
        assert frame_snapshot(engine.frames[k]) == snapshots[k], f"frame {k}"


def test_recording_keeps_memory_to_what_changes():
    config = Config(max_num_seqs=8, max_num_batched_tokens=64, max_model_len=64, num_kvcache_blocks=100,
                    kvcache_block_size=16)
    engine = Engine(RunSpec(config, random_workload(40, seed=3, max_tokens=30, ignore_eos=True)))
    engine.run()
    records = engine.frames._records
    assert len(records) == engine.step_count + 1
    # After frame 0 (the whole pool), a step stores only the blocks it touched, not the pool.
    assert sum(len(r.blocks) for r in records[1:]) < config.num_kvcache_blocks * len(records) / 20
    # A request's view is stored when it arrives, is admitted, finishes, or takes a new block, not every step.
    views_per_request = 4 + config.max_model_len // config.kvcache_block_size
    assert sum(len(r.requests) for r in records) <= views_per_request * len(engine.requests)
    assert sum(len(r.header.batch.seq_ids) for r in records) > 2 * views_per_request * len(engine.requests)


@pytest.mark.parametrize("change", [dict(num_kvcache_blocks=30), dict(num_kvcache_blocks=5, kvcache_block_size=8),
                                    dict(max_num_seqs=2, preemption_policy="smart")])
def test_frames_stay_true_across_a_config_change(change):
    config = Config(max_num_seqs=4, max_num_batched_tokens=64, max_model_len=40, num_kvcache_blocks=14,
                    kvcache_block_size=4)
    engine = Engine(RunSpec(config, shared_prefix_workload(2)))
    engine.run(steps=6)
    engine.set_config(**change)
    snapshots = {}
    while not engine.is_finished:
        engine.step()
        snapshots[engine.step_count] = live_snapshot(engine)
        assert frame_snapshot(engine.frames[-1]) == snapshots[engine.step_count], f"step {engine.step_count}"
    for k, snapshot in snapshots.items():
        assert frame_snapshot(engine.frames[k]) == snapshot
