"""What a kind declares beyond the queues and the pool every scheduler has (scheduler/contract.py: its `queues`, its
`side_pools`, its `panels`) and the blocks a step copies between pools (`Batch.block_copies`) reach the frames, the
frame store, traces and the stage's payload however many it declares: shown with a kind that exists only in tests
(tests/helpers/swap_demo.py), which swaps a request out to a CPU pool and back as V0 will."""

import json
from dataclasses import replace
from typing import cast

import pytest

from engine.run.engine import Engine
from engine.run.frame_store import FrameStore
from engine.run.recipe import RunSpec
from engine.traces.trace import TraceError, read_trace, trace_dict
from runner.kv_pools import EMPTY_SLOT
from scheduler import factory
from scheduler.contract import (
    GPU_POOL,
    QUEUES,
    KeepsQueues,
    KeepsSidePools,
    SchedulerProtocol,
    SidePoolView,
)
from scheduler.interface import BlockCopy
from tests.helpers import swap_demo
from tests.helpers.node_decode import NODE, decoded_in_node
from tests.helpers.swap_demo import (
    CONFIG,
    CPU_BLOCKS,
    CPU_POOL,
    KIND,
    SWAP_IN_AT,
    SWAP_LOG,
    SWAP_OUT_AT,
    SWAPPED,
    WORKLOAD,
)
from viz.frame_payload import EMPTY_VIEW, decode, encode, player_views


@pytest.fixture
def swap_kind():
    with swap_demo.registered():  # in the factory's registry: a trace of it opens too
        yield


def _run(**spec) -> Engine:
    engine = Engine(RunSpec(CONFIG, WORKLOAD, scheduler=KIND, **spec))
    engine.run()
    return engine


def test_frames_hold_the_third_queue_the_cpu_pool_and_the_copies(swap_kind):
    frames = list(_run().frames)
    out, back = frames[SWAP_OUT_AT], frames[SWAP_IN_AT]
    (swapped,) = out.queue(SWAPPED)
    assert swapped not in out.running and out.requests[swapped].block_table == ()
    copied_out = [c for c in out.block_copies]
    assert copied_out and all(c.src_pool == GPU_POOL and c.dst_pool == CPU_POOL for c in copied_out)
    assert [c.src_block for c in copied_out] == list(frames[SWAP_OUT_AT - 1].requests[swapped].block_table)
    cpu = out.side_pools[CPU_POOL]
    assert len(cpu) == CPU_BLOCKS and [u for u, holder in enumerate(cpu) if holder == swapped] == \
        [c.dst_block for c in copied_out]
    assert out.panel(SWAP_LOG.id) == {"out": [c.src_block for c in copied_out], "in": []}
    assert back.queue(SWAPPED) == () and swapped in back.running and set(back.side_pools[CPU_POOL]) == {None}
    assert [(c.src_pool, c.src_block, c.dst_block) for c in back.block_copies] == \
        [(CPU_POOL, c.dst_block, b) for c, b in zip(copied_out, back.requests[swapped].block_table, strict=False)]
    assert all(f.queue(SWAPPED) == (swapped,) for f in frames[SWAP_OUT_AT:SWAP_IN_AT])
    # swapped back, it goes on from the tokens it had computed: nothing is recomputed
    assert back.batch.num_tokens[back.batch.seq_ids.index(swapped)] == 1


def test_the_store_rebuilds_them_at_every_frame_and_a_trace_gives_them_back(swap_kind):
    engine = _run()
    frames = list(engine.frames)
    small = FrameStore(keyframe_every=3, decided_by=engine.frames.decided_by)
    for frame in frames:
        small.append_frame(frame)
    store, _ = read_trace(json.dumps(trace_dict(engine)))
    for rebuilt in (list(small), list(store)):
        assert [(f.queues, f.side_pools, f.block_copies, f.panels) for f in rebuilt] == \
            [(f.queues, f.side_pools, f.block_copies, f.panels) for f in frames]


@pytest.mark.parametrize("where, bad", [("side_pools", {CPU_POOL: [0, 99]}), ("block_copies", [["gpu", 1, "cpu"]]),
                                        ("queues", {"running": [0, 3, [], 0]})])
def test_a_trace_whose_declared_parts_do_not_fit_is_refused(swap_kind, where, bad):
    data = trace_dict(_run())
    data["frames"][SWAP_OUT_AT][where] = bad
    with pytest.raises(TraceError) as refused:
        read_trace(json.dumps(data))
    assert f"frames[{SWAP_OUT_AT}].{where}" in str(refused.value)


def test_the_fake_models_kv_comes_back_as_it_went_out(swap_kind):
    """The fake model keeps the token each slot was computed from: the request's blocks hold the same tokens in the
    CPU pool after the swap-out and in their new GPU blocks after the swap-in."""
    engine = Engine(RunSpec(CONFIG, WORKLOAD, scheduler=KIND))
    engine.advance_to(SWAP_OUT_AT - 1)
    (rid,) = engine.frames[-1].running[-1:]
    left = engine.frames[-1].requests[rid].block_table
    held = [engine.runner.kv.block(GPU_POOL, b) for b in left]
    engine.advance_to(SWAP_OUT_AT)
    cpu = [c.dst_block for c in engine.frames[-1].block_copies]
    assert [engine.runner.kv.block(CPU_POOL, u) for u in cpu] == held
    engine.advance_to(SWAP_IN_AT)
    gpu = [c.dst_block for c in engine.frames[-1].block_copies]
    assert gpu != list(left)  # other blocks than those it left
    back = [engine.runner.kv.block(GPU_POOL, b) for b in gpu]  # after this step's decode, which wrote one slot more
    changed = [h for held_block, back_block in zip(held, back, strict=True)
               for h, b in zip(held_block, back_block, strict=True) if h != b]
    assert changed in ([], [EMPTY_SLOT]) and any(EMPTY_SLOT not in block for block in back)


def test_a_run_with_swaps_writes_the_tokens_of_one_without(swap_kind):
    """Swapped out and in, a request writes what it would have: the fake model's tokens, computed once each."""
    swapped = [r.seq.token_ids for r in _run().requests]
    plain = Engine(RunSpec(CONFIG, WORKLOAD))
    plain.run()
    assert swapped == [r.seq.token_ids for r in plain.requests]


def test_the_payload_carries_the_declared_queues_pools_moves_and_panel(swap_kind, tmp_path):
    engine = _run()
    views = list(player_views(engine.frames, "en"))
    out = views[SWAP_OUT_AT]
    assert out["cfg"]["queues"] == ["running", "waiting", SWAPPED] and out["cfg"]["side_pools"] == [CPU_POOL]
    assert out["queues"] == {SWAPPED: list(engine.frames[SWAP_OUT_AT].queue(SWAPPED))}
    assert out["side"] == {CPU_POOL: list(engine.frames[SWAP_OUT_AT].side_pools[CPU_POOL])}
    assert out["moves"] == [list(c) for c in engine.frames[SWAP_OUT_AT].block_copies]
    assert out["panels"] == [[SWAP_LOG.id, engine.frames[SWAP_OUT_AT].panel(SWAP_LOG.id)]]
    deltas = [encode(previous, view) for previous, view in zip([EMPTY_VIEW, *views], views, strict=False)]
    sent = json.loads(json.dumps(views))
    assert [decode(previous, delta) for previous, delta in zip([EMPTY_VIEW, *sent], deltas, strict=False)] == sent
    if NODE is not None:  # the player's own decoder rebuilds them too
        assert decoded_in_node(tmp_path, {"swap": deltas}, [])["runs"]["swap"] == sent
    plain = next(player_views(Engine(RunSpec(CONFIG, WORKLOAD)).frames, "en"))
    assert "queues" not in plain["cfg"] and "side_pools" not in plain["cfg"]  # a kind that declares none: as before


def test_the_runner_refuses_a_copy_outside_its_pools(swap_kind):
    runner = _run().runner
    for bad in (BlockCopy(GPU_POOL, 0, "disk", 0), BlockCopy(GPU_POOL, 0, CPU_POOL, CPU_BLOCKS)):
        with pytest.raises(ValueError, match="disk|outside"):
            runner.copy_blocks([bad])
    runner.copy_blocks([BlockCopy(GPU_POOL, 1, CPU_POOL, 0)])
    assert runner.kv.block(CPU_POOL, 0) == runner.kv.block(GPU_POOL, 1)


def test_overlapped_the_copies_are_made_too(swap_kind):
    sync, overlapped = _run(), _run(overlap=True)
    assert [f.block_copies for f in overlapped.frames] == [f.block_copies for f in sync.frames]
    assert [r.seq.token_ids for r in overlapped.requests] == [r.seq.token_ids for r in sync.requests]
    assert overlapped.runner.kv.slots == sync.runner.kv.slots


def test_a_copy_between_pools_of_a_kind_without_side_pools_is_refused():
    engine = Engine(replace(RunSpec(CONFIG, WORKLOAD)))
    with pytest.raises(ValueError, match="no KV pool 'cpu'"):
        engine.runner.copy_blocks([BlockCopy(GPU_POOL, 0, CPU_POOL, 0)])


def test_every_kind_that_declares_more_fits_the_protocols_that_read_it(swap_kind):
    """Over the factory (the swap kind in it): a kind declaring a queue beyond running and waiting offers `queue`, one
    declaring side pools offers `side_pool`, each a SidePoolView of the units it declares."""
    for cls in factory.SCHEDULERS.values():
        scheduler, info = cls(CONFIG), cls.info
        assert isinstance(scheduler, SchedulerProtocol)
        assert info.queues == QUEUES or isinstance(scheduler, KeepsQueues)
        for pool in info.side_pools:
            view = cast(KeepsSidePools, scheduler).side_pool(pool.name)
            assert isinstance(view, SidePoolView) and len(view.unit_ids) == pool.units(CONFIG)
    assert any(cls.info.side_pools and cls.info.queues != QUEUES for cls in factory.SCHEDULERS.values())
