import json

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.run.recipe import ChangeError
from engine.traces.trace import trace_dict
from scheduler import ConfigError
from session.lab import Lab, LabError, RunInputs, default_runner, open_trace


def preemption_lab() -> Lab:
    return Lab(RunInputs.from_scenario(load_scenario(SCENARIOS_DIR / "02_preemption.toml"), "fake"))


def test_moving_never_reruns_what_is_recorded():
    lab = preemption_lab()
    assert lab.run(6) == 6
    engine = lab.engine
    lab.goto(2)
    lab.step()
    assert lab.cursor == 3 and lab.engine is engine and lab.last == 6
    with pytest.raises(LabError, match="not recorded yet"):
        lab.goto(99)


def test_adding_a_request_at_an_earlier_frame_branches_there():
    lab = preemption_lab()
    lab.run(6)
    lab.goto(2)
    lab.add_request("one more please", max_tokens=2, priority=1)
    assert lab.last == 2
    lab.step()
    arrived = lab.frame.events_of("arrived")
    assert [e.prompt_len for e in arrived] == [3] and arrived[0].priority == 1


def test_an_invalid_config_changes_nothing():
    lab = preemption_lab()
    lab.run(4)
    lab.goto(1)
    engine = lab.engine
    with pytest.raises(ConfigError):
        lab.set_config(max_num_batched_tokens=1)
    assert lab.engine is engine and lab.last == 4
    with pytest.raises(ChangeError, match="Unknown setting"):
        lab.set_config(speed=3)


def test_the_history_is_rebuilt_once_and_dropped_on_branch():
    lab = preemption_lab()
    lab.run(5)
    first = lab.history()
    assert [f.step for f in first] == list(range(6)) and lab.history()[3] is first[3]
    lab.goto(2)
    lab.set_config(max_num_seqs=1)
    lab.step()
    assert lab.history()[3].config.max_num_seqs == 1


def test_traces_are_read_only():
    engine = load_scenario(SCENARIOS_DIR / "02_preemption.toml").engine("fake")
    engine.run(3)
    lab = open_trace(json.dumps(trace_dict(engine)).encode(), "t.json")
    assert lab.is_trace and lab.last == 3 and not lab.is_over
    lab.goto(3)
    assert lab.is_over
    with pytest.raises(LabError, match="recorded trace"):
        lab.add_request("hi", 2)
    with pytest.raises(LabError, match="not a trace"):
        open_trace(b"[]", "list.json")


def test_the_runner_default_follows_the_environment(monkeypatch):
    monkeypatch.setenv("SCHEDLAB_RUNNER", "fake")
    assert default_runner() == "fake"


def test_a_variant_changes_the_config_and_keeps_its_own_key_frames():
    scenario = load_scenario(SCENARIOS_DIR / "04_chunked_prefill.toml")
    variant = RunInputs.from_scenario(scenario, "fake", variant=True)
    assert variant.config.chunked_prefill and all(k.variant for k in variant.key_frames)
    assert "variant: " in variant.title
    with pytest.raises(LabError, match="no variant"):
        RunInputs.from_scenario(load_scenario(SCENARIOS_DIR / "02_preemption.toml"), "fake", variant=True)
