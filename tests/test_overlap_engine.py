"""Overlapped scheduling inside the Engine: the same tokens as a synchronous run in every preset, EOS found one
step late in a frame, pending tokens until they land, exact replays and branches, the simulated step time,
and speculation refused with the field to fix."""

from dataclasses import replace

import pytest

from engine.inputs.scenario import load_scenario, preset_paths
from engine.run.adaptive import step_latencies
from engine.run.engine import Engine
from engine.run.frame import PENDING_TEXT
from engine.run.metrics import request_metrics
from engine.run.recipe import CostModel, Request, RunSpec
from runner.fake import FakeRunner
from scheduler import Config, ConfigError
from scheduler.sequence import PLACEHOLDER
from tests.helpers.engines import comparable

CONFIG = Config(max_num_seqs=3, max_num_batched_tokens=64, max_model_len=40, num_kvcache_blocks=12,
                kvcache_block_size=4, enable_prefix_caching=False)
WORKLOAD = [Request(prompt_token_ids=(i + 1,) * (3 + i), max_tokens=10 + i) for i in range(6)]
EOS = FakeRunner(40).token_at(1, 4 + 2)  # request 1 (4 prompt tokens) writes it as its third token


def outputs(engine: Engine):
    return [(r.seq.token_ids, r.seq.finish_reason) for r in engine.requests]


@pytest.mark.parametrize("path", preset_paths(), ids=lambda p: p.stem)
def test_overlap_never_changes_what_a_preset_writes(path):
    scenario = load_scenario(path, runner="fake")
    if scenario.spec.config.num_speculative_tokens:
        pytest.skip("overlapped scheduling refuses speculative decoding (engine/run/overlap.py)")
    sync, over = (replace(scenario, spec=replace(scenario.spec, overlap=overlap)).engine() for overlap in (False, True))
    # vllm_pool_too_small stalls by design: a request that outgrew its pool waits for good under the vLLM twin
    assert sync.run() == over.run() == ("stalled" if path.stem == "vllm_pool_too_small" else "finished")
    assert outputs(over) == outputs(sync)
    frames = list(over.frames)
    # a step overlaps the one before exactly when that one handed a batch to the model
    assert [f.timing.overlapped for f in frames[1:]] == [bool(f.batch.seq_ids) for f in frames[:-1]]
    assert not any(f.timing.overlapped for f in list(sync.frames)[1:])
    assert over.scheduler.pool.num_free_units == over.config.num_kvcache_blocks


def test_eos_is_found_one_step_late_and_the_request_leaves_that_batch():
    config = replace(CONFIG, eos=EOS)
    sync, over = Engine(RunSpec(config, WORKLOAD)), Engine(RunSpec(config, WORKLOAD, overlap=True))
    sync.run(), over.run()
    assert outputs(over) == outputs(sync) and sync.requests[1].seq.finish_reason == "eos"
    k = next(f.step for f in sync.frames if any(e.kind == "finished" and e.seq_id == 1 for e in f.events))
    late = over.frames[k + 1]
    assert [e.seq_id for e in late.events_of("finished_late")] == [1]
    assert 1 not in late.batch.seq_ids and 1 in over.frames[k].batch.seq_ids
    assert late.requests[1].status == "finished" and late.requests[1].finish_reason == "eos"
    finish = {name: {m.id: m.finish_step for m in request_metrics(engine.frames)}[1]
              for name, engine in (("over", over), ("sync", sync))}
    assert finish == {"over": k + 1, "sync": k}
    assert over.frames[-1].metrics.num_free_blocks == config.num_kvcache_blocks


def test_the_live_frame_shows_its_tokens_pending_until_the_next_step_lands_them():
    engine = Engine(RunSpec(CONFIG, [Request(prompt="the cache holds keys", max_tokens=5)], overlap=True))
    engine.run(2)
    request = engine.frames[2].requests[0]
    assert request.token_ids[-1] == PLACEHOLDER and request.pieces[-1] == PENDING_TEXT
    engine.step()
    request = engine.frames[2].requests[0]
    assert PLACEHOLDER not in request.token_ids and request.pieces[-1] != PENDING_TEXT
    engine.run()
    assert PLACEHOLDER not in engine.requests[0].seq.token_ids  # the last step landed before the last frame


def test_replay_and_branch_of_an_overlapped_run_give_the_same_frames():
    engine = Engine(RunSpec(replace(CONFIG, eos=EOS), WORKLOAD, overlap=True))
    engine.run()
    again = engine.replay(9)
    again.step()  # frame 9's tokens land (a replay, like a live run, ends with its last step in flight)
    assert [comparable(again.frames[k]) for k in range(10)] == [comparable(engine.frames[k]) for k in range(10)]
    again.run()
    assert [comparable(f) for f in again.frames] == [comparable(f) for f in engine.frames]
    branch = engine.branch(4, overlap=False, max_num_seqs=2)
    branch.run()
    assert branch.frames[4].timing.overlapped and not branch.frames[6].timing.overlapped
    assert outputs(branch) == outputs(engine)
    replayed = branch.replay(12)
    replayed.step()
    assert [comparable(replayed.frames[k]) for k in range(13)] == [comparable(branch.frames[k]) for k in range(13)]
    assert branch.config_changes == [(4, {"max_num_seqs": 2, "overlap": False})]


def test_the_simulated_step_takes_the_longer_of_scheduler_and_model_plus_the_handoff():
    cost = CostModel(step_s=0.010, token_s=0.0, schedule_s=0.003, postprocess_s=0.001, handoff_s=0.0005)
    workload = [Request(prompt_token_ids=(1, 2), max_tokens=20, ignore_eos=True)]
    sync, over = (Engine(RunSpec(CONFIG, workload, cost=cost, overlap=overlap)) for overlap in (False, True))
    sync.run(), over.run()
    def steps(engine):
        return [round(s, 9) for s in step_latencies(engine.frames)]

    assert set(steps(sync)) == {0.014} and set(steps(over)[1:]) == {0.0105}
    slow_cpu = replace(cost, schedule_s=0.02)
    assert Engine(RunSpec(CONFIG, workload, cost=slow_cpu, overlap=True)).run() == "finished"
    assert slow_cpu.step_time(1, overlapped=True) == pytest.approx(0.0215)
    first = over.frames[2].timing
    assert first.schedule[0] < over.frames[1].timing.model[1] <= first.model[0]  # decided during step 1


def test_speculation_is_refused_with_the_field_to_fix():
    with pytest.raises(ConfigError, match="overlapped scheduling needs num_speculative_tokens=0"):
        Engine(RunSpec(replace(CONFIG, num_speculative_tokens=2), WORKLOAD, overlap=True))
    engine = Engine(RunSpec(CONFIG, WORKLOAD, overlap=True))
    engine.run(2)
    with pytest.raises(ConfigError) as refused:
        engine.set_config(num_speculative_tokens=2)
    assert refused.value.field == "num_speculative_tokens" and engine.config_changes == []
    speculating = Engine(RunSpec(replace(CONFIG, num_speculative_tokens=2), WORKLOAD))
    with pytest.raises(ConfigError):
        speculating.set_config(overlap=True)
    assert not speculating.overlap
