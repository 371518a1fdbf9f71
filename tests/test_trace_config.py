"""A saved trace keeps the config the run started with, and the changes made mid-run."""

import json

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.run.frame import AdmittedAfterRebuild, PoolRebuilt
from engine.run.recipe import CostModel
from engine.traces.trace import read_trace, trace_dict


def test_the_trace_keeps_the_first_config_and_every_change():
    engine = load_scenario(SCENARIOS_DIR / "02_preemption.toml").engine()
    engine.run(5)
    engine.set_config(num_kvcache_blocks=6, cost=CostModel(step_s=0.02))
    engine.run(2)
    engine.set_config(max_num_seqs=2)
    engine.run(2)
    data = json.loads(json.dumps(trace_dict(engine)))
    assert data["config"]["num_kvcache_blocks"] == 3 and data["config"]["max_num_seqs"] == 3  # not the last
    assert data["config_changes"] == [
        {"after_step": 5, "changes": {"num_kvcache_blocks": 6, "cost": {**CostModel(step_s=0.02).__dict__}}},
        {"after_step": 7, "changes": {"max_num_seqs": 2}}]
    frames, _ = read_trace(json.dumps(data).encode())  # frames are deltas: read back, each has its config
    assert frames[6].config.num_kvcache_blocks == 6 and frames[5].config.num_kvcache_blocks == 3


def test_a_pool_rebuild_and_the_admissions_it_causes_survive_a_trace():
    engine = load_scenario(SCENARIOS_DIR / "02_preemption.toml").engine()
    engine.run(5)
    engine.set_config(num_kvcache_blocks=6)
    engine.run(1)
    events = engine.frames[6].events
    assert events[0] == PoolRebuilt(-1, 6, 10, (0, 1, 2, 3, 4), 1)
    admitted = {e.seq_id: e for e in events if e.kind == "admitted"}
    assert isinstance(admitted[0], AdmittedAfterRebuild)  # 0 was running: the rebuild, not a preemption
    assert not isinstance(admitted[1], AdmittedAfterRebuild) and admitted[1].recompute  # 1 had been preempted
    data = json.loads(json.dumps(trace_dict(engine)))
    frames, _ = read_trace(json.dumps(data).encode())
    assert frames[6].events == events


def test_the_vllm_release_is_written_only_when_set_and_reads_back():
    """A run of the twin at its default release writes no vllm_version (as every older trace), one set to 0.33
    writes it in its config and in the frame that changed it."""
    engine = load_scenario(SCENARIOS_DIR / "vllm_vs_article.toml").engine()
    engine.run(3)
    assert "vllm_version" not in json.dumps(trace_dict(engine))
    engine.set_config(vllm_version="0.33")
    engine.run(2)
    data = json.loads(json.dumps(trace_dict(engine)))
    assert data["config"].get("vllm_version") is None
    assert data["config_changes"] == [{"after_step": 3, "changes": {"vllm_version": "0.33"}}]
    frames, _ = read_trace(json.dumps(data).encode())
    assert frames[3].config.value("vllm_version") == "0.32" and frames[4].config.value("vllm_version") == "0.33"
