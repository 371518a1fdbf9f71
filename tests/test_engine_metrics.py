"""Metrics against values computed by hand on a tiny run: one request per step, two requests."""

import pytest

from engine.run.engine import Engine
from engine.run.metrics import request_metrics, run_metrics
from engine.run.recipe import CostModel, Request, RunSpec
from scheduler import Config


@pytest.fixture(scope="module")
def engine():
    # max_num_seqs=1: step 1 prefills 0, step 2 prefills 1, steps 3-4 decode 0, steps 5-6 decode 1.
    config = Config(max_num_seqs=1, max_num_batched_tokens=16, max_model_len=16, num_kvcache_blocks=10,
                    kvcache_block_size=4)
    workload = [Request(prompt_token_ids=(1, 2, 3), max_tokens=3, ignore_eos=True) for _ in range(2)]
    cost = CostModel(step_s=0.01, token_s=0.001, schedule_s=0.0, postprocess_s=0.0)
    engine = Engine(RunSpec(config, workload, cost=cost))
    assert engine.run() == "finished"
    return engine


def test_the_run_goes_as_planned(engine):
    assert [f.batch.seq_ids for f in engine.frames] == [(), (0,), (1,), (0,), (0,), (1,), (1,)]
    assert [round(f.sim_time_s, 6) for f in engine.frames] == [0, 0.013, 0.026, 0.037, 0.048, 0.059, 0.070]


def test_request_metrics_by_hand(engine):
    first, second = request_metrics(engine.frames)
    assert (first.first_token_step, first.finish_step, first.num_output_tokens) == (1, 4, 3)
    assert first.ttft.steps == 1 and first.ttft.s == pytest.approx(0.013)
    assert first.tpot.steps == 1.5 and first.tpot.s == pytest.approx((0.048 - 0.013) / 2)
    assert first.e2e.steps == 4 and first.e2e.s == pytest.approx(0.048)
    assert first.queueing.steps == 0 and first.queueing.s == 0
    assert (second.first_scheduled_step, second.first_token_step, second.finish_step) == (2, 2, 6)
    assert second.ttft.steps == 2 and second.ttft.s == pytest.approx(0.026)
    assert second.tpot.steps == 2 and second.tpot.s == pytest.approx((0.070 - 0.026) / 2)
    assert second.queueing.steps == 1 and second.queueing.s == pytest.approx(0.013)
    assert first.e2e.wall_s > 0 and second.e2e.wall_s > first.ttft.wall_s


def test_run_metrics_by_hand(engine):
    run, requests = run_metrics(engine.frames)
    assert len(requests) == 2
    assert (run.num_steps, run.num_finished, run.num_aborted, run.num_output_tokens) == (6, 2, 0, 6)
    assert run.throughput_tokens_per_step == 1
    assert run.throughput_tokens_per_s == pytest.approx(6 / 0.070)
    # Blocks held after each step (of 10): 1, 2, 2, 1 (request 0 took a 2nd block, then finished), 1, 0.
    assert run.mean_kv_usage == pytest.approx((0.1 + 0.2 + 0.2 + 0.1 + 0.1 + 0.0) / 6)
    assert run.mean_ttft.steps == 1.5 and run.mean_e2e.steps == 5
    assert run.prefix_hit_rate == 0 and run.num_preemptions == 0


def test_prefix_hit_rate_counts_cached_blocks():
    config = Config(max_num_seqs=4, max_num_batched_tokens=64, max_model_len=32, num_kvcache_blocks=20,
                    kvcache_block_size=4)
    prompt = tuple(range(1, 10))  # 9 tokens: 2 full blocks are looked up per admission
    workload = [Request(prompt_token_ids=prompt, max_tokens=2), Request(arrival=2, prompt_token_ids=prompt,
                                                                        max_tokens=2)]
    engine = Engine(RunSpec(config, workload))
    engine.run()
    run, _ = run_metrics(engine.frames)
    assert run.prefix_hit_rate == pytest.approx(2 / 4)
