"""Stepping, scrubbing, playing and the URL, through Streamlit's AppTest on the fake model."""

import pytest

from tests.test_app_support import block_grid_z, button, fake_model_app, figure, lab, no_errors


@pytest.fixture
def app(monkeypatch):
    return fake_model_app(monkeypatch)


def test_opens_at_frame_zero_of_the_first_preset(app):
    app.run()
    assert no_errors(app)
    assert lab(app).cursor == 0 and lab(app).inputs.scenario_name == "01_prefill_first"
    assert app.query_params["scenario"] == "01_prefill_first" and app.query_params["frame"] == "0"


def test_step_fills_the_queues_and_the_block_grid(app):
    app.run()
    empty_grid = block_grid_z(app)
    button(app, "Step ▶").click().run()
    assert no_errors(app) and lab(app).cursor == 1
    frame = lab(app).frame
    assert figure(app, "Running queue")["layout"]["meta"]["ids"] == list(frame.running)
    assert figure(app, "Waiting queue")["layout"]["meta"]["ids"] == list(frame.waiting)
    assert block_grid_z(app) != empty_grid
    owners = figure(app, "KV cache")["layout"]["meta"]["owners"]
    assert owners == [list(frame.block_owners(b.id)) for b in frame.blocks] and any(owners)
    assert any("Step 1 ran a prefill batch" in m.value for m in app.markdown)
    assert app.query_params["frame"] == "1"


def test_back_moves_the_cursor_and_refuses_at_frame_zero(app):
    app.run()
    button(app, "Step ▶").click().run()
    button(app, "Step ▶").click().run()
    button(app, "◀ Back").click().run()
    assert lab(app).cursor == 1 and lab(app).last == 2
    button(app, "◀ Back").click().run()
    button(app, "◀ Back").click().run()
    assert lab(app).cursor == 0 and not app.exception
    assert any("Already at frame 0" in w.value for w in app.warning)


def test_run_n_steps_and_reset(app):
    app.run()
    app.number_input(key="run_n").set_value(6).run()
    button(app, "Run N steps ▶▶").click().run()
    assert no_errors(app) and lab(app).cursor == 6
    button(app, "⟲ Reset").click().run()
    assert lab(app).cursor == 0 and lab(app).last == 0


def test_running_past_the_end_stops_with_a_message(app):
    app.run()
    app.number_input(key="run_n").set_value(500).run()
    button(app, "Run N steps ▶▶").click().run()
    assert lab(app).is_over and not app.exception
    assert any("the run is over" in w.value for w in app.warning)
    button(app, "Step ▶").click().run()
    assert any("The run is over" in w.value for w in app.warning)


def test_the_slider_scrubs_recorded_frames(app):
    app.run()
    app.number_input(key="run_n").set_value(5).run()
    button(app, "Run N steps ▶▶").click().run()
    late_grid = block_grid_z(app)
    app.slider(key="frame_slider").set_value(1).run()
    assert lab(app).cursor == 1 and lab(app).last == 5
    assert figure(app, "KV cache")["layout"]["meta"]["step"] == 1
    assert block_grid_z(app) != late_grid or lab(app).frames[1].blocks == lab(app).frames[5].blocks


def test_key_frame_buttons_jump_and_show_the_note(app):
    app.run()
    key_frame = lab(app).key_frames[1]
    button(app, f"step {key_frame.step}").click().run()
    assert lab(app).cursor == key_frame.step
    assert any(key_frame.note[:30] in i.value for i in app.info)
    assert key_frame.holds(lab(app).frames)


def test_play_and_pause_switch(app):
    app.run()
    app.toggle(key="playing").set_value(True).run()
    assert app.session_state["playing"] is True and not app.exception
    assert lab(app).cursor >= 1  # the first tick steps at once
    app.toggle(key="playing").set_value(False).run()
    paused_at = lab(app).cursor
    app.run()
    assert app.session_state["playing"] is False and lab(app).cursor == paused_at


def test_play_stops_by_itself_at_the_end_of_the_run(app):
    app.run()
    lab(app).run(500)
    app.toggle(key="playing").set_value(True).run()
    assert app.session_state["playing"] is False
    assert any("Paused: the run is over" in w.value for w in app.warning)


def test_the_url_opens_a_scenario_at_a_frame(app):
    app.query_params["scenario"] = "02_preemption"
    app.query_params["frame"] = "5"
    app.run()
    assert no_errors(app)
    assert lab(app).inputs.scenario_name == "02_preemption" and lab(app).cursor == 5
    assert app.selectbox(key="scenario_choice").value == "02_preemption"


def test_a_bad_url_falls_back_to_the_first_preset_with_a_message(app):
    app.query_params["scenario"] = "nope"
    app.query_params["frame"] = "x"
    app.run()
    assert not app.exception and lab(app).cursor == 0
    assert any("scenario='nope' is not a preset here" in w.value and "Opened the first preset" in w.value
               for w in app.warning)


def test_charts_and_metrics_views_draw_the_run_so_far(app):
    app.run()
    app.number_input(key="run_n").set_value(4).run()
    button(app, "Run N steps ▶▶").click().run()
    app.segmented_control(key="lower_view").set_value("Charts over time").run()
    assert no_errors(app)
    queues = figure(app, "Queue lengths and KV usage")
    assert queues["data"][1]["x"] == [0, 1, 2, 3, 4]
    assert figure(app, "Request timeline")["data"]
    app.segmented_control(key="lower_view").set_value("Metrics").run()
    assert no_errors(app)
    assert list(app.dataframe[0].value[""])[:2] == ["throughput", "mean TTFT"]
    assert len(app.dataframe[1].value) == len(lab(app).frame.requests)


def test_the_header_names_the_frame_just_stepped_to(app):
    app.run()
    button(app, "Step ▶").click().run()
    button(app, "Step ▶").click().run()
    assert any(c.value.startswith("Frame **2** of 2") for c in app.caption)


def test_the_url_opens_a_variant(app):
    app.query_params["scenario"] = "04_chunked_prefill"
    app.query_params["variant"] = "1"
    app.query_params["frame"] = "5"
    app.run()
    assert no_errors(app) and lab(app).inputs.variant and lab(app).cursor == 5
    assert lab(app).key_frames_at(5)[0].holds(lab(app).frames)


def test_an_adaptive_scenario_runs_its_controller_and_charts_it(app):
    app.query_params["scenario"] = "09_adaptive_batch"
    app.run()
    app.number_input(key="run_n").set_value(12).run()
    button(app, "Run N steps ▶▶").click().run()
    app.segmented_control(key="lower_view").set_value("Charts over time").run()
    assert no_errors(app)
    engine = lab(app).engine
    assert engine.adaptive is not None and len(set(engine.adaptive_sizes)) > 1, "the limit must move"
    limits = [f.config.max_num_seqs for f in list(lab(app).history())[1:]]
    assert figure(app, "Adaptive batch size")["data"][1]["y"] == limits

