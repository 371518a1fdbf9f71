"""vLLM's own knobs in the sidebar (AppTest): under the vLLM twin they apply from the frame shown and travel in the
link; under the article's scheduler, which does not read them, they are greyed and their help says why."""

from tests.helpers.app import lab, no_errors


def opened(at, params: dict):
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def test_under_the_twin_a_watermark_applies_and_travels_in_the_link(app):
    opened(app, {"scenario": "vllm_vs_article", "frame": "0"})
    assert lab(app).scheduler == "vllm" and not app.number_input(key="cfg_watermark").disabled
    assert not app.text_input(key="request_stop_token_ids").disabled
    app.number_input(key="cfg_watermark").set_value(0.5).run()
    app.toggle(key="cfg_scheduler_reserve_full_isl").set_value(False).run()
    assert no_errors(app)
    config = lab(app).config_in_effect()
    assert (config.value("watermark"), config.value("scheduler_reserve_full_isl")) == (0.5, False)
    assert app.query_params["watermark"] == "0.5" and app.query_params["scheduler_reserve_full_isl"] == "0"


def test_under_the_article_scheduler_the_knobs_are_not_offered(app):
    opened(app, {"scenario": "02_preemption", "scheduler": "article", "frame": "0"})
    assert lab(app).scheduler == "article"
    keys = {w.key for w in (*app.number_input, *app.toggle)}
    assert not keys & {"cfg_watermark", "cfg_max_num_scheduled_tokens", "cfg_long_prefill_token_threshold",
                       "cfg_scheduler_reserve_full_isl"}  # vLLM's own: the vLLM twin declares them
    assert not app.number_input(key="cfg_max_num_seqs").disabled
    assert app.text_input(key="request_stop_token_ids").disabled and app.number_input(key="request_min_tokens").disabled
    assert any("does not read them" in c.value for c in app.caption)
