"""Shareable links through the app (AppTest): the URL follows a custom setup, and opening that URL in a new
session gives the same run at the same frame; a link that cannot be opened says what to fix."""

from urllib.parse import urlencode

import pytest

from session.lab import CustomSetup
from session.link_changes import pack
from tests.helpers.app import button, fake_model_app, lab, no_errors, player_message

CUSTOM_LINK = {"scenario": "custom", "requests": "6", "prompts": "random", "max_tokens": "5", "arrivals": "poisson",
               "seed": "3", "max_num_seqs": "2", "num_kvcache_blocks": "12", "frame": "7"}



def opened(at, params: dict):
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def widget(at, kind: str, label: str):
    return next(w for w in getattr(at, kind) if w.label == label)


def test_a_custom_setup_link_opens_that_run_at_its_frame(app):
    opened(app, CUSTOM_LINK)
    assert no_errors(app)  # its 12 blocks of 16 hold less than max_model_len=256: the sidebar's one warning says so
    pool = "max_model_len = 256, but the KV pool holds 192 tokens"
    assert [w.value for w in app.warning if pool not in w.value] == []
    assert lab(app).inputs.custom == CustomSetup(6, "random", 5, "poisson") and lab(app).inputs.spec.seed == 3
    assert lab(app).cursor == 7 and player_message(app)["cursor"] == 7 and player_message(app)["last"] == 7
    assert app.selectbox(key="scenario_choice").value == "custom"
    assert app.number_input(key="cfg_max_num_seqs").value == 2 and app.number_input(key="seed").value == 3
    assert widget(app, "number_input", "requests").value == 6 and widget(app, "radio", "arrivals").value == "poisson"
    assert app.query_params == CUSTOM_LINK  # the URL read back unchanged


def test_a_custom_setup_started_in_the_sidebar_reopens_from_its_url(app, monkeypatch):
    app.run()
    app.selectbox(key="scenario_choice").set_value("custom").run()
    app.number_input(key="cfg_num_kvcache_blocks").set_value(10).run()
    widget(app, "number_input", "requests").set_value(5)
    widget(app, "radio", "arrivals").set_value("poisson")
    button(app, "Start custom run").click().run()
    app.number_input(key="run_n").set_value(4).run()
    button(app, "Run N steps ▶▶").click().run()
    assert no_errors(app) and lab(app).cursor == 4
    link = dict(app.query_params)
    assert link["scenario"] == "custom" and link["arrivals"] == "poisson" and link["frame"] == "4"
    assert link["num_kvcache_blocks"] == "10" and link["requests"] == "5"
    again = opened(fake_model_app(monkeypatch), link)
    assert no_errors(again) and lab(again).inputs == lab(app).inputs and lab(again).cursor == 4
    assert [f.batch for f in lab(again).history()] == [f.batch for f in lab(app).history()]


def test_a_link_that_cannot_be_opened_says_what_to_fix(app):
    opened(app, {"scenario": "custom", "requests": "lots", "frame": "3"})
    assert not app.exception and lab(app).inputs.custom.requests == 8 and lab(app).cursor == 3  # the rest of it
    assert any("requests='lots'" in w.value and "whole number from 1 to 200" in w.value
               and "Opened the link without requests= instead" in w.value for w in app.warning)


@pytest.mark.parametrize("frame", ["-1", "x", "100001"])
def test_a_bad_frame_opens_the_named_scenario_at_frame_0(app, frame):
    opened(app, {"scenario": "02_preemption", "frame": frame, "max_num_seqs": "2"})
    assert not app.exception and lab(app).inputs.scenario_name == "02_preemption" and lab(app).cursor == 0
    assert lab(app).config_in_effect().max_num_seqs == 2
    assert any(f"frame='{frame}'" in w.value and "Opened the link without frame= instead" in w.value
               for w in app.warning)


def test_a_preset_link_carries_a_setting_changed_at_frame_0(app):
    opened(app, {"scenario": "02_preemption", "max_num_seqs": "1", "frame": "3"})
    assert no_errors(app) and lab(app).cursor == 3
    assert all(len(lab(app).frames[k].batch.seq_ids) <= 1 for k in range(4))
    assert app.number_input(key="cfg_max_num_seqs").value == 1 and app.query_params["max_num_seqs"] == "1"


def test_a_mid_run_change_travels_in_the_url_and_a_reload_reproduces_it(app, monkeypatch):
    opened(app, {"scenario": "02_preemption", "frame": "5"})
    app.number_input(key="cfg_max_num_seqs").set_value(1).run()
    app.number_input(key="run_n").set_value(3).run()
    button(app, "Run N steps ▶▶").click().run()
    assert no_errors(app) and lab(app).cursor == 8 and lab(app).config_in_effect(5).max_num_seqs == 1
    link = dict(app.query_params)
    assert link["frame"] == "8" and link["changes"].startswith("v1.") and "max_num_seqs" not in link
    copied = next(c.value for c in app.code if "changes=" in c.value)  # "Copy link to this frame"
    assert copied.endswith("?" + urlencode(link))
    again = opened(fake_model_app(monkeypatch), link)  # a reload, or the link opened elsewhere
    assert no_errors(again) and not again.warning and lab(again).cursor == 8
    assert lab(again).config_in_effect(4).max_num_seqs != 1 and lab(again).config_in_effect(5).max_num_seqs == 1
    assert [f.batch for f in lab(again).history()] == [f.batch for f in lab(app).history()]
    assert dict(again.query_params) == link


def test_a_bad_changes_value_is_refused_naming_it_and_the_rest_opens(app):
    opened(app, {"scenario": "02_preemption", "changes": pack([[3, {"max_num_seqs": "0"}]]), "frame": "4"})
    assert not app.exception and lab(app).inputs.scenario_name == "02_preemption" and lab(app).cursor == 4
    assert not lab(app).shared_run.spec.changes
    assert any("the change at frame 3 has `max_num_seqs='0'`" in w.value
               and "Opened the link without changes= instead" in w.value for w in app.warning)
