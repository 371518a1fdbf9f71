"""Issue 13 in the app: production defaults, hostile titles, a link the engine refuses, an export without a
browser, an unexpected error: each a sentence (and a log line), never a traceback."""

import json
import logging
import tomllib
from pathlib import Path

import pytest

from engine.inputs.scenario import load_scenario, preset_paths
from engine.run.limits import MAX_TRACE_BYTES
from engine.traces.trace import trace_dict
from tests.helpers.app import lab, player_message

CONFIG = Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml"



def test_the_server_hides_tracebacks_and_accepts_uploads_as_large_as_the_app_opens():
    config = tomllib.loads(CONFIG.read_text())
    assert config["client"]["showErrorDetails"] in ("none", False)
    assert config["server"]["maxUploadSize"] * 2**20 == MAX_TRACE_BYTES


def test_a_trace_title_cannot_inject_markdown_into_the_page(app):
    """The title reaches the stage player as data (drawn as text there), never as Markdown in the page."""
    engine = load_scenario(preset_paths()[1]).engine("fake")
    engine.run(2)
    title = "x\n# Owned [click](https://evil.example) ![](https://evil.example/p.png) :red[alarm] <b>bold</b>"
    app.run()
    app.file_uploader[0].set_value(("t.json", json.dumps(trace_dict(engine, title)).encode(), "application/json"))
    app.run()
    assert player_message(app)["title"] == f"Trace: {title}"
    assert not any("evil.example" in m.value for m in app.markdown)


def test_a_link_the_engine_refuses_opens_the_first_preset_with_a_notice(app, monkeypatch):
    def refuse(*_):
        raise ValueError("refused by the engine")
    monkeypatch.setattr("ui.state.run_to_frame", refuse)
    app.query_params.update({"scenario": "02_preemption", "frame": "5"})
    app.run()
    assert not app.exception and lab(app).cursor == 0
    assert any("could not be opened" in w.value for w in app.warning)
    app.run()  # the session is not broken on rerun
    assert not app.exception


def test_an_unexpected_error_is_logged_with_the_session_and_shown_as_a_sentence(app, monkeypatch, caplog):
    def broken():
        raise KeyError("boom")
    monkeypatch.setattr("ui.stage.stage", broken)
    with caplog.at_level(logging.ERROR, logger="schedlab"):
        app.run()
    assert not app.exception
    assert any("it has been logged" in e.value for e in app.error)
    logged = [r for r in caplog.records if r.name == "schedlab"]
    assert logged and "drawing the page" in logged[0].getMessage() and "at frame 0" in logged[0].getMessage()


def test_an_error_inside_the_stage_is_logged_as_the_stage_and_shown_as_a_sentence(app, monkeypatch, caplog):
    def broken(_lab, _request):
        raise KeyError("boom")
    app.run()
    monkeypatch.setattr("session.feed.Feed.serve", broken)
    app.session_state["player_request"] = {"run": 1, "have": 0, "want": 3, "seq": 1}
    with caplog.at_level(logging.ERROR, logger="schedlab"):
        app.run()
    assert not app.exception and any("it has been logged" in e.value for e in app.error)
    logged = [r for r in caplog.records if r.name == "schedlab"]
    assert logged and "stepping the stage" in logged[0].getMessage()


def test_a_gif_without_a_browser_says_why(monkeypatch):
    from render import chromium, images
    engine = load_scenario(preset_paths()[1]).engine("fake")
    engine.run(3)
    monkeypatch.setattr(chromium, "CHROMIUM", "/nonexistent/chromium")
    with pytest.raises(ValueError, match="Chromium is not installed"):
        images.run_gif(list(engine.frames), "run", max_frames=2, lang="en")


def test_no_pages_folder_for_streamlit_to_list_before_the_app_names_its_pages():
    """A `pages/` folder beside app.py is listed by Streamlit itself (the stepper as "app") when a link opens the
    policy lab first; the lab lives in app_pages/, named only by app.py's st.navigation."""
    root = CONFIG.parents[1]
    assert not (root / "pages").exists() and (root / "app_pages" / "policy_lab.py").is_file()
    assert '"app_pages/policy_lab.py"' in (root / "app.py").read_text()


def test_a_long_link_run_stops_when_its_tab_has_gone(app, monkeypatch):
    monkeypatch.setattr("ui.state.session_gone", lambda: True)
    monkeypatch.setattr("ui.state.PROGRESS_EVERY_S", 0.0)
    app.query_params.update({"scenario": "02_preemption", "frame": "25"})
    app.run()
    assert 0 < lab(app).cursor < 25  # stopped at the first look, with the frames run so far kept


def test_a_links_long_run_steps_in_the_background_and_a_player_request_as_the_student(app, monkeypatch):
    from runner.share import current_share
    from session.lab import Lab
    shares, real_step = [], Lab.step
    monkeypatch.setattr(Lab, "step", lambda self: (shares.append(current_share()), real_step(self))[1])
    app.query_params.update({"scenario": "02_preemption", "frame": "6"})
    app.run()
    assert len(shares) == 6 and all(s.background and s.who.startswith("s") for s in shares)
    shares.clear()
    message = player_message(app)
    app.session_state["player_request"] = {"run": message["run"], "have": message["last"], "want": 9, "seq": 1}
    app.run()  # served within its budget as the student (on the fake model: every step)
    assert lab(app).last == 9 and shares and all(not s.background and s.who == shares[0].who for s in shares)
