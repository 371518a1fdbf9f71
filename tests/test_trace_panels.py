"""The version step of the schedulers' panels (engine/traces/panels.py): a trace before version 4 wrote vLLM's
SchedulerOutput as a frame's `output` and SGLang's radix tree as its `view`; such a trace still opens, each into the
one slot a frame has for its scheduler's panels, and a view that does not say its kind is refused, naming where."""

import json

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.run.engine import Engine
from engine.traces.panels import LEGACY_OUTPUT, LEGACY_VIEW, panels_as_legacy
from engine.traces.trace import TRACE_VERSION, TraceError, read_trace, trace_dict
from scheduler.factory import scheduler_info
from tools.golden_deltas import sglang_tree_run


def _vllm_run() -> Engine:
    engine = Engine(load_scenario(SCENARIOS_DIR / "vllm_resume_cached.toml").spec)
    engine.run(12)
    return engine


def _as_version_3(engine: Engine) -> dict:
    """The run's trace as version 3 wrote it: its panels under `output` and `view`."""
    data = trace_dict(engine)
    return {**data, "version": 3, "frames": [panels_as_legacy(frame) for frame in data["frames"]]}


@pytest.mark.parametrize("run, legacy_key", [(_vllm_run, LEGACY_OUTPUT), (sglang_tree_run, LEGACY_VIEW)])
def test_a_version_3_trace_opens_with_its_panels_in_their_slot(run, legacy_key):
    engine = run()
    old = _as_version_3(engine)
    assert TRACE_VERSION >= 4 and all("panels" not in frame for frame in old["frames"])
    assert sum(legacy_key in frame for frame in old["frames"]) >= len(old["frames"]) - 1  # frame 0 may have none
    store, _ = read_trace(json.dumps(old))
    assert [f.panels for f in store] == [f.panels for f in engine.frames]
    declared = {p.id for p in scheduler_info(engine.spec.scheduler).panels}
    assert set().union(*(f.panels for f in store)) == declared


def test_a_version_3_view_without_its_kind_is_refused():
    old = _as_version_3(sglang_tree_run())
    del old["frames"][2][LEGACY_VIEW]["kind"]
    with pytest.raises(TraceError) as refused:
        read_trace(json.dumps(old))
    assert "frames[2].view" in str(refused.value)
