"""The sidebar through AppTest: scenario switch, every scheduler setting, model inputs, adding a request,
opening a trace; invalid inputs show a message next to the control and keep the state."""

import json

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario, preset_paths
from engine.traces.trace import trace_dict
from tests.helpers.app import button, control, lab, no_errors, player_message, show, shown_view, step

VALID_CHANGES = [
    ("max_num_seqs", 2), ("num_kvcache_blocks", 50), ("kvcache_block_size", 8), ("max_num_batched_tokens", 128),
    ("max_model_len", 20), ("prefill_first", False), ("enable_prefix_caching", True), ("chunked_prefill", True),
    ("mixed_batches", True), ("preemption_policy", "smart"), ("queue_policy", "priority"),
    ("num_speculative_tokens", 3), ("prompt_lookup_min", 2), ("prompt_lookup_max", 4),
]


@pytest.mark.parametrize(("field", "value"), VALID_CHANGES, ids=[f for f, _ in VALID_CHANGES])
def test_each_setting_applies_to_the_next_step(app, field, value):
    app.run()
    step(app)
    control(app, field).set_value(value).run()
    assert no_errors(app)
    assert lab(app).config_in_effect().value(field) == value
    step(app)
    assert no_errors(app) and lab(app).frame.config.value(field) == value


def test_an_impossible_setting_is_explained_by_the_control_and_changes_nothing(app):
    app.run()
    step(app)
    before = lab(app).config_in_effect()
    control(app, "max_num_batched_tokens").set_value(2).run()
    assert not app.exception
    assert any("Not applied: max_num_batched_tokens=2" in e.value for e in app.error)
    assert lab(app).config_in_effect() == before and lab(app).cursor == 1
    control(app, "max_num_batched_tokens").set_value(64).run()
    assert not app.error


def test_a_change_at_an_earlier_frame_branches_the_run(app):
    app.run()
    app.number_input(key="run_n").set_value(6).run()
    button(app, "Run N steps ▶▶").click().run()
    show(app, 2)
    control(app, "max_num_seqs").set_value(1).run()
    assert no_errors(app) and lab(app).last == 2 and lab(app).cursor == 2
    step(app)
    assert lab(app).frame.config.max_num_seqs == 1 and len(lab(app).frame.batch.seq_ids) <= 1


def test_switching_scenario_starts_its_run(app):
    app.run()
    step(app)
    app.selectbox(key="scenario_choice").set_value("02_preemption").run()
    assert no_errors(app)
    assert lab(app).inputs.scenario_name == "02_preemption" and lab(app).cursor == 0
    assert lab(app).config_in_effect().num_kvcache_blocks == 3
    assert control(app, "num_kvcache_blocks").value == 3
    assert app.query_params["scenario"] == "02_preemption"
    assert len(shown_view(app)["blocks"]) == 3


def test_every_preset_opens_and_steps(app):
    app.run()
    for path in preset_paths():
        app.selectbox(key="scenario_choice").set_value(path.stem).run()
        step(app)
        assert no_errors(app) and lab(app).cursor == 1, path.stem


def test_a_custom_setup_runs_its_own_workload(app):
    app.run()
    app.selectbox(key="scenario_choice").set_value("custom").run()
    next(b for b in app.button if b.label == "Start custom run").click().run()
    assert no_errors(app) and lab(app).title == "Custom setup" and len(lab(app).inputs.spec.workload) == 8
    step(app)
    assert lab(app).frame.batch.seq_ids


def test_seed_and_temperature_restart_the_run(app):
    app.run()
    step(app)
    app.number_input(key="seed").set_value(7).run()
    assert lab(app).cursor == 0 and lab(app).inputs.spec.seed == 7
    app.number_input(key="temperature").set_value(0.8).run()
    assert {r.temperature for r in lab(app).inputs.spec.workload} == {0.8}
    assert app.radio(key="runner_choice").value in ("fake", "model")


def test_adding_a_request_joins_the_next_step(app):
    app.run()
    step(app)
    app.text_area[0].input("why do blocks help?")
    app.number_input(key="request_max_tokens").set_value(3)
    next(b for b in app.button if b.label == "Add request").click().run()
    assert no_errors(app)
    new_id = len(lab(app).frame.requests)
    step(app)
    arrived = [e for e in lab(app).frame.events_of("arrived") if e.seq_id == new_id]
    assert arrived and arrived[0].prompt_len == 5
    assert lab(app).frame.requests[new_id].max_tokens == 3


def test_an_empty_prompt_is_refused_with_a_message(app):
    app.run()
    next(b for b in app.button if b.label == "Add request").click().run()
    assert not app.exception and any("Type a prompt first" in e.value for e in app.error)
    assert lab(app).engine.spec.changes == ()


def test_a_trace_opens_read_only(app):
    scenario = load_scenario(preset_paths()[1])
    engine = scenario.engine("fake")
    engine.run(4)
    app.run()
    app.file_uploader[0].set_value(("t.json", json.dumps(trace_dict(engine, "demo")).encode(), "application/json"))
    app.run()
    assert no_errors(app) and lab(app).is_trace and lab(app).last == 4
    show(app, 3)
    assert shown_view(app)["step"] == 3 and lab(app).cursor == 3
    show(app, 4)
    step(app)
    message = player_message(app)
    assert message["over"] and "recorded trace" in message["end_note"] and lab(app).cursor == lab(app).last == 4


def test_the_policy_labs_json_export_opens_one_run_at_a_time(app):
    """The lab's JSON holds each run as a trace: "Open a trace" opens the one chosen by its label."""
    from engine.analysis.compare import compare, variants_for
    from engine.analysis.export import comparison_json

    spec = load_scenario(SCENARIOS_DIR / "07_smart_preemption.toml").spec
    runs = compare(variants_for("tail vs smart preemption", spec.config, "en"), spec.workload, seed=spec.seed)
    app.run()
    app.file_uploader[0].set_value(("comparison.json", comparison_json(runs, "07").encode(), "application/json"))
    app.run()
    assert no_errors(app) and lab(app).is_trace and lab(app).last == runs[0].run.num_steps
    assert [f.batch for f in lab(app).frames] == [f.batch for f in runs[0].frames]
    app.selectbox(key="comparison_run").set_value(1).run()
    assert no_errors(app) and [f.batch for f in lab(app).frames] == [f.batch for f in runs[1].frames]
    assert "smart preemption" in lab(app).title


def test_a_broken_trace_is_refused_with_a_message(app):
    app.run()
    app.file_uploader[0].set_value(("bad.json", b"{not json", "application/json"))
    app.run()
    assert not app.exception and any("bad.json is not a trace" in e.value for e in app.error)
    assert not lab(app).is_trace


def test_presentation_mode_tells_the_player(app):
    app.run()
    step(app)
    assert player_message(app)["present"] is False
    app.toggle(key="presentation").set_value(True).run()
    assert player_message(app)["present"] is True
    assert app.query_params["present"] == "1"


def test_a_scenario_variant_runs_its_comparison_config_with_its_key_frames(app):
    app.run()
    app.selectbox(key="scenario_choice").set_value("04_chunked_prefill").run()
    assert [k.variant for k in lab(app).key_frames] == [False]
    app.toggle(key="variant_choice").set_value(True).run()
    assert no_errors(app) and lab(app).inputs.variant and lab(app).config_in_effect().chunked_prefill
    assert app.query_params["variant"] == "1"
    assert lab(app).key_frames and all(k.variant for k in lab(app).key_frames)
    for key_step in lab(app).key_steps:
        show(app, key_step)
        assert all(k.holds(lab(app).frames) for k in lab(app).key_frames_at(key_step))
    app.selectbox(key="scenario_choice").set_value("01_prefill_first").run()
    assert no_errors(app) and not lab(app).inputs.variant


def test_the_sidebar_names_the_model_the_run_is_on(app, monkeypatch):
    """A session on the real model opening the article's preemption demo (the notebook's bug runs on the fake model
    only): the sidebar's model choice shows the fake model, says why, and the header names it too."""
    monkeypatch.setattr("ui.state.default_runner", lambda: "model")
    monkeypatch.setattr("ui.state.ensure_model", lambda runner: (runner, "cpu"))
    monkeypatch.setattr("ui.sidebar.real_model_installed", lambda: True)
    app.query_params.update({"scenario": "article_2_preemption"})
    app.run()
    assert no_errors(app) and app.session_state["runner"] == "model" and lab(app).inputs.runner == "fake"
    assert app.radio(key="runner_choice").value == "fake"
    assert any("notebook's block-size bug on the fake model" in c.value for c in app.caption)
    assert player_message(app)["model"] == "fake model · decided by the article's scheduler"
