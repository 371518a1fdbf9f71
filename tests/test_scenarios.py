"""Every preset loads, runs to its end on the fake runner, and shows each key frame's observation."""

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, ScenarioError, load_scenario, preset_paths
from scheduler.vllm_v1.launch import vllm_would_start
from tests.helpers.engines import GOOD

PRESETS = preset_paths()


def test_the_presets_are_there():
    assert len(PRESETS) >= 8


@pytest.mark.parametrize("path", PRESETS, ids=lambda p: p.stem)
def test_preset_key_frames_happen(path):
    scenario = load_scenario(path, runner="fake")
    assert scenario.key_frames, "a preset teaches through its key frames"
    runs = {False: scenario.engine()}
    if scenario.variant:
        runs[True] = scenario.engine(variant=True)
    # the one run that may not finish: the vLLM twin on a pool smaller than max_model_len, where vLLM's scheduler
    # keeps a request that outgrew the pool waiting for good (vllm_pool_too_small)
    ends = {"finished", "stalled"} if scenario.spec.scheduler == "vllm" and not vllm_would_start(scenario.spec.config) \
        else {"finished"}
    for engine in runs.values():
        assert engine.run() in ends
    problems = []
    for key_frame in scenario.key_frames:
        if key_frame.needs_model:  # depends on what the real model writes; checked only on the model
            continue
        frames = runs[key_frame.variant].frames
        problems += key_frame.mismatches(frames[key_frame.step], frames[key_frame.step - 1])
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("edit, key, fix", [
    ("colour = 1\n" + GOOD, "colour", "unknown key"),
    (GOOD.replace("max_num_seqs = 2", "max_num_seqs = 'two'"), "config.max_num_seqs", "must be an integer"),
    (GOOD.replace("max_num_seqs = 2", "max_num_seqs = 64"), "config.max_num_batched_tokens", "at least max_num_seqs"),
    (GOOD.replace("max_num_seqs = 2", "max_num_seqs = 2\nspeed = 3"), "config.speed", "allowed here"),
    (GOOD.replace("[1, 2, 3]", "[" + ", ".join(["1"] * 20) + "]"), "workload request 0", "can never run"),
    (GOOD.replace('title = "t"\n', ""), "title", "missing"),
    (GOOD + '[[key_frames]]\nstep = 1\nnote = "x"\nexpect = { batch_knd = "prefill" }\n',
     "key_frames[0].expect.batch_knd", "unknown key"),
    (GOOD + '[[workload.generate]]\nkind = "chat"\ncount = 2\nnames = ["nope"]\n', "workload.generate[0].names",
     "unknown prompt"),
    (GOOD + '[[workload.generate]]\nkind = "poem"\ncount = 2\n', "workload.generate[0].kind", "use one of"),
    ('runner = "gpu"\n' + GOOD, "runner", "use one of"),
    (GOOD.replace("title", "title = ", 1), "syntax", "not valid TOML"),
])
def test_a_malformed_scenario_names_the_file_the_key_and_the_fix(tmp_path, edit, key, fix):
    path = tmp_path / "bad.toml"
    path.write_text(edit)
    with pytest.raises(ScenarioError) as error:
        load_scenario(path)
    assert error.value.key == key
    assert str(path) in str(error.value) and fix in str(error.value)


def test_a_good_scenario_loads(tmp_path):
    path = tmp_path / "good.toml"
    path.write_text(GOOD)
    scenario = load_scenario(path)
    assert scenario.spec.config.max_num_seqs == 2 and scenario.spec.runner == "fake"
    assert scenario.spec.workload[0].prompt_token_ids == (1, 2, 3)


def test_a_real_model_scenario_runs_on_the_fake_runner_by_override():
    scenario = load_scenario(SCENARIOS_DIR / "05_prefix_caching.toml", runner="fake")
    assert scenario.spec.runner == "fake"
    assert load_scenario(SCENARIOS_DIR / "05_prefix_caching.toml").spec.runner == "model"
    engine = scenario.engine()
    engine.run()
    assert all(r.pieces is not None for r in engine.frames[-1].requests)  # text prompts get text pieces
