"""The engine on the real model (slow: loads SmolLM2 on the CPU)."""

from dataclasses import replace

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.traces.trace import request_summaries


@pytest.mark.model
def test_the_prefix_caching_preset_on_the_real_model():
    scenario = load_scenario(SCENARIOS_DIR / "05_prefix_caching.toml")
    engine = scenario.engine()
    assert engine.runner_kind == "model" and engine.config.eos == engine.runner.eos_token_id
    assert engine.run() == "finished"
    frames = engine.frames
    problems = [p for kf in scenario.key_frames for p in kf.mismatches(frames[kf.step], frames[kf.step - 1])]
    assert not problems, "\n".join(problems)
    for summary in request_summaries(engine):
        assert summary["finish_reason"] in ("eos", "max_tokens")
        assert summary["output_text"].strip(), f"request {summary['id']} wrote nothing readable"
    last = engine.frames[-1].requests[0]
    assert "".join(last.pieces[:last.num_prompt_tokens]).count("Ada") == 1  # pieces rebuild the prompt text


@pytest.mark.model
def test_overlapped_scheduling_writes_the_synchronous_tokens_on_the_real_model():
    scenario = load_scenario(SCENARIOS_DIR / "05_prefix_caching.toml")
    runs = {}
    for overlap in (False, True):
        engine = replace(scenario, spec=replace(scenario.spec, overlap=overlap)).engine()
        assert engine.run() == "finished"
        runs[overlap] = [(r.seq.completion_token_ids, r.seq.finish_reason) for r in engine.requests]
        assert any(f.timing.overlapped for f in list(engine.frames)[1:]) == overlap
    assert runs[True] == runs[False]
