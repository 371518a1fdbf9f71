"""Issue 13 #2, #6: a session's run is capped in steps, and its charts over time keep summaries, not frames."""

import tracemalloc

import pytest

from engine.analysis.timeline import segments
from engine.inputs.workload import random_workload
from engine.run.recipe import RunSpec
from scheduler import Config
from session.lab import CUSTOM, Lab, LabError, RunInputs


def big_pool_lab(requests: int = 40) -> Lab:
    config = Config(max_num_seqs=2, max_num_batched_tokens=256, max_model_len=128, num_kvcache_blocks=4096,
                    kvcache_block_size=4)
    return Lab(RunInputs("big pool", "", RunSpec(config, random_workload(requests, 0, max_tokens=30)),
                         scenario_name=CUSTOM))


def test_the_app_stops_a_run_at_the_step_cap_with_a_message(monkeypatch):
    monkeypatch.setattr("session.lab.MAX_APP_STEPS", 12)
    lab = big_pool_lab()
    with pytest.raises(LabError, match="reached 12 steps"):
        lab.run(50)
    assert lab.last == 12 and not lab.is_over
    lab.reset()
    assert lab.run(5) == 5  # a reset run steps again


def test_the_charts_history_keeps_summaries_not_frames():
    lab = big_pool_lab()
    lab.run(300)
    tracemalloc.start()
    history = lab.history()
    kept, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(history) == 301 and not hasattr(history[-1], "blocks")
    frame_bytes = len(lab.frame.blocks) * 64  # one materialised frame's pool tuple alone
    assert kept < 10 * frame_bytes  # 300 frames kept would be 300 pools


@pytest.mark.parametrize("cursor", [0, 1, 57, 180, 300])
def test_the_incremental_timeline_matches_the_one_drawn_from_frames(cursor):
    lab = big_pool_lab()
    lab.run(300)
    lab.history()  # taken in up to the end, then looked at from an earlier frame
    lab.goto(cursor)
    assert lab.timeline() == segments([lab.frames[k] for k in range(cursor + 1)])


def test_the_metrics_are_computed_once_per_frame_shown():
    lab = big_pool_lab()
    lab.run(20)
    first = lab.metrics()
    assert lab.metrics() is first and first[0].num_steps == 20
    lab.back()
    assert lab.metrics()[0].num_steps == 19
