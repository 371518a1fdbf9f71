"""Adaptive batch size: the controller's rule, its bounds under light and heavy load, and exact replay."""

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, ScenarioError, load_scenario
from engine.run.adaptive import AdaptiveBatch, step_latencies
from engine.run.engine import Engine
from engine.run.recipe import CostModel, Request, RunSpec
from scheduler import Config
from tests.helpers.engines import comparable

CONTROLLER = AdaptiveBatch(low_s=0.050, high_s=0.200, step=2, min_seqs=2, max_seqs=9)
CONFIG = Config(max_num_seqs=4, max_num_batched_tokens=256, max_model_len=64, num_kvcache_blocks=200,
                kvcache_block_size=8, enable_prefix_caching=False)


@pytest.mark.parametrize("latency_s, batch_size, expected", [
    (0.010, 5, 7),  # fast and full: grow by step
    (0.010, 4, 5),  # fast but not full: a bigger limit would change nothing
    (0.100, 5, 5),  # in the band
    (0.050, 5, 5),  # the band's edges belong to it
    (0.200, 5, 5),
    (0.300, 5, 3),  # slow: shrink
])
def test_the_rule(latency_s, batch_size, expected):
    assert CONTROLLER.next_max_num_seqs(5, latency_s, batch_size) == expected


def test_the_bounds_clamp():
    assert CONTROLLER.next_max_num_seqs(8, 0.0, 8) == 9
    assert CONTROLLER.next_max_num_seqs(3, 1.0, 3) == 2


@pytest.mark.parametrize("bad", [{"low_s": 0.2, "high_s": 0.1}, {"step": 0}, {"min_seqs": 0},
                                 {"min_seqs": 5, "max_seqs": 4}])
def test_an_impossible_controller_is_refused(bad):
    with pytest.raises(ValueError):
        AdaptiveBatch(**bad)


def run(cost: CostModel) -> Engine:
    workload = [Request(prompt_token_ids=(i + 1,) * 4, max_tokens=20, ignore_eos=True) for i in range(30)]
    engine = Engine(RunSpec(CONFIG, workload, cost=cost, adaptive=CONTROLLER))
    assert engine.run() == "finished"
    return engine


def limits(engine: Engine) -> list[int]:
    return [f.config.max_num_seqs for f in engine.frames]


def test_light_load_grows_to_the_upper_bound_and_no_further():
    engine = run(CostModel(step_s=0.001, token_s=0.0001))
    assert max(limits(engine)) == 9 and limits(engine)[:3] == [4, 4, 6]
    assert all(2 <= n <= 9 for n in limits(engine))


def test_heavy_load_shrinks_to_the_lower_bound_and_no_further():
    engine = run(CostModel(step_s=0.300, token_s=0.0))
    assert limits(engine)[:4] == [4, 4, 2, 2] and min(limits(engine)) == 2


def test_the_recorded_latency_is_the_one_the_controller_saw():
    engine = run(CostModel(step_s=0.010, token_s=0.010))
    frames = list(engine.frames)[1:]
    latencies = [engine.cost.step_time(f.batch.total_tokens) for f in frames]
    assert step_latencies(engine.frames) == pytest.approx(latencies)
    for frame, latency, after in zip(frames, latencies, engine.adaptive_sizes, strict=True):
        if frame.batch.seq_ids:
            assert after == CONTROLLER.next_max_num_seqs(frame.config.max_num_seqs, latency,
                                                         len(frame.batch.seq_ids))


def test_replay_and_branch_stay_exact_with_the_controller_on():
    engine = load_scenario(SCENARIOS_DIR / "09_adaptive_batch.toml").engine()
    engine.run()
    again = engine.replay(45)
    assert [comparable(f) for f in again.frames] == [comparable(engine.frames[k]) for k in range(46)]
    again.run()
    assert [comparable(f) for f in again.frames] == [comparable(f) for f in engine.frames]
    branch = engine.branch(30, max_num_seqs=1)
    branch.run()
    assert limits(branch)[31] == 1 and limits(branch)[32] == 2  # the controller takes over from the change
    assert [comparable(f) for f in branch.replay(60).frames] == [comparable(branch.frames[k]) for k in range(61)]


def test_replay_repeats_the_recorded_choices_rather_than_deciding_again():
    """What makes a real-model run, whose latencies are wall times, replay exactly."""
    engine = run(CostModel())
    engine.adaptive_sizes[2] = 3  # chosen after step 3, as if the wall clock had said otherwise
    assert engine.replay(5).frames[4].config.max_num_seqs == 3


def test_a_scenario_with_a_bad_controller_names_the_key(tmp_path):
    path = tmp_path / "bad.toml"
    text = (SCENARIOS_DIR / "09_adaptive_batch.toml").read_text()
    path.write_text(text.replace("min_seqs = 1", "min_seqs = 20"))
    with pytest.raises(ScenarioError, match="adaptive"):
        load_scenario(path)
