"""Overlapped scheduling and adaptive batch size through the app's sidebar (AppTest): each applies from the
frame shown, is refused in words under its control when impossible, and shows in the stage."""


from tests.helpers.app import (
    back,
    button,
    figure,
    figures,
    lab,
    no_errors,
    player_message,
    show,
    shown_view,
    step,
)


def steps(at, n: int):
    at.number_input(key="run_n").set_value(n).run()
    button(at, "Run N steps ▶▶").click().run()


def test_overlap_applies_from_the_next_step_and_shows_in_the_stage(app):
    app.run()
    step(app)
    app.toggle(key="opt_overlap").set_value(True).run()
    assert no_errors(app) and lab(app).engine.overlap
    steps(app, 3)
    frames = lab(app).history()
    assert not frames[2].timing.overlapped and frames[3].timing.overlapped and frames[4].timing.overlapped
    view = shown_view(app)
    assert any(line.startswith("Overlapped scheduling: this batch was decided while the model") for line in
               view["narration"]) and view["overlapped"]
    assert player_message(app)["model"] == ("fake model · decided by the article's scheduler · overlapped scheduling "
                                             "(vLLM's async scheduling, --async-scheduling)")
    app.segmented_control(key="lower_view").set_value("charts").run()
    timeline = figure(app, "Scheduling and model work")
    schedule, _, model = timeline["data"]
    assert list(model["customdata"]) == [1, 2, 3, 4]
    assert schedule["base"][3] < model["base"][2] + model["x"][2]  # step 4 decided during step 3's model


def test_overlap_and_speculation_refuse_each_other_under_the_control(app):
    app.run()
    app.toggle(key="opt_overlap").set_value(True).run()
    app.number_input(key="cfg_num_speculative_tokens").set_value(2).run()
    assert not app.exception
    assert any("Not applied" in e.value and "needs num_speculative_tokens=0" in e.value for e in app.error)
    assert lab(app).config_in_effect().num_speculative_tokens == 0 and lab(app).engine.overlap
    app.number_input(key="cfg_num_speculative_tokens").set_value(0).run()
    app.toggle(key="opt_overlap").set_value(False).run()
    app.number_input(key="cfg_num_speculative_tokens").set_value(2).run()
    app.toggle(key="opt_overlap").set_value(True).run()
    assert not app.exception and not lab(app).engine.overlap
    assert any("Not applied" in e.value and "overlapped scheduling" in e.value for e in app.error)


def test_the_adaptive_controller_stays_within_the_bounds_set_in_the_sidebar(app):
    app.run()
    app.selectbox(key="scenario_choice").set_value("08_chat_poisson").run()
    steps(app, 2)
    app.toggle(key="opt_adaptive").set_value(True).run()
    app.number_input(key="opt_min_seqs").set_value(2).run()
    app.number_input(key="opt_max_seqs").set_value(3).run()
    app.number_input(key="opt_low_ms").set_value(100.0).run()  # every step is fast: it grows to the bound
    assert no_errors(app)
    controller = lab(app).engine.adaptive
    assert (controller.low_s, controller.min_seqs, controller.max_seqs) == (0.1, 2, 3)
    steps(app, 30)
    limits = [f.config.max_num_seqs for f in lab(app).history()[3:]]
    assert set(limits) <= {2, 3} and 3 in limits
    app.segmented_control(key="lower_view").set_value("charts").run()
    assert figure(app, "Adaptive batch size")
    app.number_input(key="opt_high_ms").set_value(50.0).run()  # below the low end: impossible
    assert not app.exception and any("Not applied: latency band" in e.value for e in app.error)
    assert lab(app).engine.adaptive == controller
    app.number_input(key="opt_high_ms").set_value(400.0).run()
    app.toggle(key="opt_adaptive").set_value(False).run()
    assert no_errors(app) and lab(app).engine.adaptive is None


def test_switching_at_an_earlier_frame_branches_the_run(app):
    app.run()
    steps(app, 6)
    show(app, 2)
    app.toggle(key="opt_overlap").set_value(True).run()
    assert no_errors(app) and lab(app).last == 2 and lab(app).engine.config_changes == [(2, {"overlap": True})]
    step(app)
    assert lab(app).frame.timing is not None and lab(app).engine.overlap


def test_the_overlap_preset_opens_overlapped_and_its_key_frames_hold(app):
    app.run()
    app.selectbox(key="scenario_choice").set_value("10_overlap").run()
    assert no_errors(app) and app.toggle(key="opt_overlap").value
    for key_step in lab(app).key_steps:
        show(app, key_step)
        assert no_errors(app)
        assert all(k.holds(lab(app).frames) for k in lab(app).key_frames_at(key_step))
    show(app, 5)
    view = shown_view(app)
    assert any(line.startswith("Request 1 finished one step late") for line in view["narration"])
    assert [1, "finished late"] in view["done"]


def header(at) -> str:
    return player_message(at)["model"]


def test_the_toggles_show_the_options_of_the_frame_shown(app):
    app.run()
    steps(app, 3)
    app.toggle(key="opt_overlap").set_value(True).run()
    steps(app, 3)
    app.toggle(key="opt_adaptive").set_value(True).run()
    app.number_input(key="opt_max_seqs").set_value(5).run()
    steps(app, 2)
    assert no_errors(app) and app.toggle(key="opt_overlap").value and app.toggle(key="opt_adaptive").value
    show(app, 4)  # after overlap was switched on, before adaptive
    assert app.toggle(key="opt_overlap").value and not app.toggle(key="opt_adaptive").value
    assert "overlapped scheduling" in header(app) and "adaptive" not in header(app)
    back(app)
    back(app)  # frame 2: before either
    assert not app.toggle(key="opt_overlap").value and not app.toggle(key="opt_adaptive").value
    assert "overlapped" not in header(app)
    app.segmented_control(key="lower_view").set_value("charts").run()
    assert not any(f["layout"]["title"]["text"].startswith("Adaptive") for f in figures(app))
    show(app, 7)
    assert app.toggle(key="opt_adaptive").value and app.number_input(key="opt_max_seqs").value == 5
    assert figure(app, "Adaptive batch size")  # the chart's band is the controller of the frame shown
    assert no_errors(app) and lab(app).last == 8  # moving never branched the run
