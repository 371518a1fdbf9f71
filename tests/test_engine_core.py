"""The engine's promises: runs end, nothing is lost, replay is exact, branches and config changes work."""

import pytest

from engine.inputs.workload import random_workload
from engine.run.engine import Engine
from engine.run.metrics import request_metrics
from engine.run.recipe import CostModel, Request, RunSpec
from scheduler import Batch, Config, ConfigError
from tests.helpers.engines import comparable

SMALL = Config(max_num_seqs=3, max_num_batched_tokens=64, max_model_len=15, num_kvcache_blocks=6,
               kvcache_block_size=4, enable_prefix_caching=False)


def test_a_rejected_request_is_recorded_as_aborted_with_the_reason():
    workload = [Request(prompt_token_ids=tuple(range(1, 21)), max_tokens=2), Request(prompt_token_ids=(1, 2))]
    engine = Engine(RunSpec(SMALL, workload))
    assert engine.run() == "finished"
    first = engine.frames[0]  # refused as it arrives, at the start
    (aborted,) = first.events_of("aborted")
    assert aborted.seq_id == 0 and "max_model_len" in aborted.reason
    assert first.requests[0].status == "aborted" and first.requests[0].finish_reason == aborted.reason
    assert engine.frames[-1].requests[1].status == "finished"


def test_a_workload_rejected_entirely_still_ends():
    engine = Engine(RunSpec(SMALL, [Request(prompt_token_ids=tuple(range(1, 40))) for _ in range(3)]))
    assert engine.run() == "finished"
    assert engine.step_count == 0
    assert [r.status for r in engine.frames[-1].requests] == ["aborted"] * 3


def test_idle_steps_wait_for_a_late_arrival():
    engine = Engine(RunSpec(SMALL, [Request(arrival=5, prompt_token_ids=(1, 2), max_tokens=2)]))
    assert engine.run() == "finished"
    kinds = [f.batch.kind for f in engine.frames]
    assert kinds[1:6] == ["idle"] * 5 and kinds[6] == "prefill"
    assert engine.frames[5].events_of("arrived")[0].seq_id == 0  # queued at the end of step 5, run from step 6


def test_run_stops_after_the_requested_steps_and_calls_back():
    engine = Engine(RunSpec(SMALL, random_workload(5, max_tokens=8)))
    seen = []
    assert engine.run(steps=3, on_step=seen.append) == "steps"
    assert seen == [1, 2, 3] and len(engine.frames) == 4
    assert engine.run(on_step=seen.append) == "finished"
    assert seen[-1] == engine.step_count


def test_max_steps_bounds_a_run():
    engine = Engine(RunSpec(SMALL, random_workload(5, max_tokens=8), max_steps=4))
    assert engine.run() == "max_steps" and engine.step_count == 4


def test_a_request_added_by_hand_joins_at_the_next_step():
    engine = Engine(RunSpec(SMALL, random_workload(2, max_tokens=4)))
    engine.run(steps=2)
    engine.add_request(Request(prompt_token_ids=(5, 6, 7), max_tokens=2, arrival=99))
    engine.step()
    frame = engine.frames[3]
    assert [e.seq_id for e in frame.events_of("arrived")] == [2]
    assert frame.requests[2].arrival == 2
    engine.run()
    assert engine.requests[2].seq.completion_token_ids and request_metrics(engine.frames)[2].finish_step is not None


def test_arrivals_leave_the_pending_queue_from_its_head_in_constant_time():
    """A list's pop(0) made admitting n arrivals cost n^2 / 2 moves; a deque pops its head in O(1). Hand-added
    requests still join behind the workload's arrivals of their step."""
    engine = Engine(RunSpec(SMALL, random_workload(3, max_tokens=2) + [Request(prompt_token_ids=(1, 2), max_tokens=2,
                                                                       arrival=1)]))
    assert hasattr(engine._pending, "popleft")
    engine.add_request(Request(prompt_token_ids=(3, 4), max_tokens=2))
    engine.step()
    engine.step()
    assert [e.seq_id for f in engine.frames for e in f.events_of("arrived")] == [0, 1, 2, 3, 4]
    assert [r.request.arrival for r in engine.requests] == [0, 0, 0, 0, 1]


def test_replay_gives_the_same_frames_again():
    engine = Engine(RunSpec(SMALL, random_workload(8, max_tokens=10, arrivals=[0, 0, 0, 1, 3, 3, 6, 9])))
    engine.run(steps=4)
    engine.add_request(Request(prompt_token_ids=(9, 9), max_tokens=3))
    engine.set_config(max_num_seqs=2)
    engine.run()
    assert engine.scheduler.num_preemptions > 0
    again = engine.replay(7)
    assert [comparable(f) for f in again.frames] == [comparable(engine.frames[k]) for k in range(8)]
    again.run()
    assert [comparable(f) for f in again.frames] == [comparable(f) for f in engine.frames]


def test_a_branch_keeps_the_past_and_changes_the_future():
    engine = Engine(RunSpec(SMALL, random_workload(8, max_tokens=10)))
    engine.run()
    branch = engine.branch(5, prefill_first=False)
    assert [comparable(f) for f in branch.frames] == [comparable(engine.frames[k]) for k in range(6)]
    branch.run()
    assert branch.frames[6].config.value("prefill_first") is False
    assert engine.frames[6].config.value("prefill_first") is True
    assert [comparable(f) for f in branch.frames] != [comparable(f) for f in engine.frames]
    assert all(r.seq.is_done for r in branch.requests)


def test_a_branch_can_change_the_cost_model():
    engine = Engine(RunSpec(SMALL, random_workload(4, max_tokens=6)))
    engine.run()
    branch = engine.branch(2, cost=CostModel(step_s=1.0, token_s=0.0, schedule_s=0.0, postprocess_s=0.0))
    branch.run()
    assert branch.frames[2].sim_time_s == engine.frames[2].sim_time_s
    assert branch.frames[3].sim_time_s == pytest.approx(engine.frames[2].sim_time_s + 1.0)
    assert branch.replay(4).frames[3].sim_time_s == branch.frames[3].sim_time_s


def test_a_pool_change_requeues_running_requests_for_recompute():
    engine = Engine(RunSpec(SMALL, random_workload(4, max_tokens=10)))
    engine.run(steps=3)
    running = engine.frames[3].running
    assert running
    engine.set_config(num_kvcache_blocks=20)
    engine.step()
    frame = engine.frames[4]
    assert len(frame.blocks) == 20
    assert engine.config.num_kvcache_blocks == frame.config.num_kvcache_blocks == 20
    assert frame.batch.kind == "prefill"
    assert {e.seq_id for e in frame.events_of("admitted") if e.recompute} >= set(running[:1])
    assert engine.run() == "finished"
    assert len(engine.frames[2].blocks) == 6  # the past keeps its pool


def test_a_request_that_no_longer_fits_a_smaller_pool_is_aborted():
    engine = Engine(RunSpec(SMALL, [Request(prompt_token_ids=tuple(range(1, 10)), max_tokens=4)]))
    engine.step()
    engine.set_config(num_kvcache_blocks=2)
    engine.step()
    (aborted,) = engine.frames[2].events_of("aborted")
    assert aborted.seq_id == 0 and "KV blocks" in aborted.reason
    assert engine.frames[2].requests[0].status == "aborted" and engine.is_finished


def test_a_bad_config_change_leaves_the_engine_unchanged():
    engine = Engine(RunSpec(SMALL, random_workload(3)))
    with pytest.raises(ConfigError):
        engine.set_config(max_num_seqs=0)
    with pytest.raises(ValueError, match="Unknown setting"):
        engine.set_config(colour="blue")
    assert engine.config == SMALL and engine.config_changes == []


def test_switching_to_the_priority_queue_sorts_the_waiting_requests():
    workload = [Request(prompt_token_ids=(1, 2, 3), max_tokens=4, priority=p) for p in (3, 2, 1, 0)]
    engine = Engine(RunSpec(Config(**{**SMALL.__dict__, "max_num_seqs": 1}), workload))
    engine.step()
    assert engine.frames[1].waiting == (1, 2, 3)
    engine.set_config(queue_policy="priority")
    engine.step()
    assert engine.frames[2].batch.seq_ids == (3,)


def test_a_run_that_can_never_progress_is_reported_stalled():
    engine = Engine(RunSpec(SMALL, random_workload(2)))
    engine.scheduler.schedule = lambda: Batch([], (), "idle")  # a scheduler that never schedules anything
    assert engine.run() == "stalled"
    assert engine.step_count == 1 and engine.frames[1].waiting == (0, 1)
