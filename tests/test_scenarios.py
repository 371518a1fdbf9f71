"""Every preset loads, runs to its end on the fake runner, and shows each key frame's observation."""

import pytest

from engine.scenario import load_scenario, preset_paths

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
    for engine in runs.values():
        assert engine.run() == "finished"
    problems = []
    for key_frame in scenario.key_frames:
        if key_frame.needs_model:  # depends on what the real model writes; checked only on the model
            continue
        problems += key_frame.mismatches(runs[key_frame.variant].frames[key_frame.step])
    assert not problems, "\n".join(problems)
