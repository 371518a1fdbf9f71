"""Stepping, scrubbing, playing and the URL, through Streamlit's AppTest on the fake model."""


from tests.helpers.app import (
    back,
    button,
    figure,
    lab,
    no_errors,
    player_message,
    show,
    shown_view,
    step,
)
from viz.frame_payload import player_views


def test_opens_at_frame_zero_of_the_first_preset(app):
    app.run()
    assert no_errors(app)
    assert lab(app).cursor == 0 and lab(app).inputs.scenario_name == "01_prefill_first"
    assert app.query_params["scenario"] == "01_prefill_first" and app.query_params["frame"] == "0"


def test_step_sends_the_player_the_frame_it_asked_for(app):
    app.run()
    assert player_message(app)["frames"][0]["step"] == 0
    step(app)
    assert no_errors(app) and lab(app).cursor == 1
    view, frame = shown_view(app), lab(app).frame
    assert view == list(player_views(lab(app).frames, lang="en"))[frame.step]
    assert (view["running"], view["waiting"]) == (list(frame.running), list(frame.waiting))
    assert [b[0] for b in view["blocks"]] == [b.ref_count for b in frame.blocks] and any(b[0] for b in view["blocks"])
    assert view["narration"][0].startswith("Step 1 ran a prefill batch")
    assert app.query_params["frame"] == "1"


def test_three_steps_asked_at_once_are_three_frames(app):
    app.run()
    step(app, 3)
    assert lab(app).last == 3 and lab(app).cursor == 3
    assert [f["step"] for f in player_message(app)["frames"]] == [1, 2, 3]


def test_back_moves_the_cursor_and_refuses_at_frame_zero(app):
    app.run()
    step(app)
    step(app)
    back(app)
    assert lab(app).cursor == 1 and lab(app).last == 2
    back(app)
    back(app)  # the player's Back is disabled at frame 0; a report of frame -1 changes nothing
    assert lab(app).cursor == 0 and not app.exception


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
    step(app)
    assert player_message(app)["over"] and "The run is over" in player_message(app)["end_note"]


def test_the_slider_scrubs_recorded_frames(app):
    app.run()
    app.number_input(key="run_n").set_value(5).run()
    button(app, "Run N steps ▶▶").click().run()
    show(app, 1)
    assert lab(app).cursor == 1 and lab(app).last == 5 and app.query_params["frame"] == "1"
    assert shown_view(app) == list(player_views(lab(app).frames, lang="en"))[1]


def test_a_key_frame_jump_computes_up_to_it_and_the_player_has_the_note(app):
    app.run()
    key_frame = lab(app).key_frames[1]
    assert [key_frame.step, key_frame.note, True] in player_message(app)["key_frames"]
    show(app, key_frame.step)
    assert lab(app).cursor == key_frame.step == lab(app).last
    assert key_frame.holds(lab(app).frames)


def test_playing_asks_ahead_in_chunks_and_keeps_the_cursor(app):
    app.run()
    message = player_message(app)
    app.session_state["player_request"] = {"run": message["run"], "have": 0, "want": 20, "seq": 1}
    app.run()
    assert lab(app).last == 20 and lab(app).cursor == 0
    assert len(player_message(app)["frames"]) == 20 and player_message(app)["answered"] == 1


def test_a_request_for_another_run_gets_this_run_from_frame_zero(app):
    app.run()
    app.session_state["player_request"] = {"run": 999, "have": 7, "want": 9, "seq": 1}
    app.run()
    assert no_errors(app) and lab(app).last == 0 and player_message(app)["from"] == 0


def test_a_request_that_cannot_be_read_is_explained(app):
    app.run()
    app.session_state["player_request"] = {"run": "x"}
    app.run()
    assert not app.exception and "could not be read" in player_message(app)["error"]


def test_a_request_past_the_step_limit_says_so_and_keeps_the_frames(app, monkeypatch):
    monkeypatch.setattr("session.lab.MAX_APP_STEPS", 12)
    app.run()
    app.session_state["player_request"] = {"run": player_message(app)["run"], "have": 0, "want": 30, "seq": 1}
    app.run()
    message = player_message(app)
    assert not app.exception and "reached 12 steps" in message["error"]
    assert message["last"] == 12 and [f["step"] for f in message["frames"]] == list(range(1, 13))
    assert lab(app).cursor == 0  # the player stays on the frame it showed


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
    assert any("`scenario='nope'` is not a preset here" in w.value and "Opened the first preset" in w.value
               for w in app.warning)


def test_charts_and_metrics_views_draw_the_run_so_far(app):
    app.run()
    app.number_input(key="run_n").set_value(4).run()
    button(app, "Run N steps ▶▶").click().run()
    app.segmented_control(key="lower_view").set_value("charts").run()
    assert no_errors(app)
    queues = figure(app, "Queue lengths and KV usage")
    assert queues["data"][1]["x"] == [0, 1, 2, 3, 4]
    assert figure(app, "Request timeline")["data"]
    app.segmented_control(key="lower_view").set_value("metrics").run()
    assert no_errors(app)
    assert list(app.dataframe[0].value[""])[:2] == ["throughput", "mean TTFT"]
    assert len(app.dataframe[1].value) == len(lab(app).frame.requests)


def test_the_player_is_told_the_run_and_the_model(app):
    app.run()
    step(app)
    step(app)
    message = player_message(app)
    assert message["title"] == lab(app).title and message["model"] == "fake model" and message["last"] == 2


def test_after_a_branch_each_frame_is_titled_by_the_settings_it_ran_under(app):
    """A change at frame 5 runs from step 6: the player titles frames 0-5 with the scenario's title and frames 6 on
    with the change, wherever the cursor was when the title was sent (it moves among held frames on its own)."""
    app.query_params.update({"scenario": "02_preemption", "frame": "5"})
    app.run()
    app.number_input(key="cfg_max_num_seqs").set_value(2).run()
    step(app, 3)
    plain = lab(app).title
    changed = f"{plain} · now with max_num_seqs (requests per batch) 2 (the scenario's: 3)"
    assert player_message(app)["titles"] == [[0, plain], [6, changed]]
    back(app)
    assert player_message(app)["titles"] == [[0, plain], [6, changed]]


def test_frame_0_shows_the_requests_that_arrive_at_the_start(app):
    """The story says five requests arrive at the start: frame 0 shows them waiting and says they arrived."""
    app.query_params.update({"scenario": "02_preemption"})
    app.run()
    frame_0 = shown_view(app)
    assert frame_0["waiting"] == [0, 1, 2, 3, 4] and frame_0["running"] == []
    assert any("Requests 0, 1, 2, 3 and 4 arrived" in line for line in frame_0["narration"])


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
    app.segmented_control(key="lower_view").set_value("charts").run()
    assert no_errors(app)
    engine = lab(app).engine
    assert engine.adaptive is not None and len(set(engine.adaptive_sizes)) > 1, "the limit must move"
    limits = [f.config.max_num_seqs for f in list(lab(app).history())[1:]]
    assert figure(app, "Adaptive batch size")["data"][1]["y"] == limits

