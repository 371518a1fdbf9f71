"""The "this server" panel counts the sessions and the runs they share."""

import re

from engine.run.runner_factory import started_model_worker
from session.run_cache import shared_run_cache
from tests.helpers.app import fake_model_app, lab, no_errors, step
from ui.state import precomputed


def panel_text(at) -> str:
    return " ".join(m.value for m in at.sidebar.markdown) + " ".join(c.value for c in at.sidebar.caption)


def test_a_second_session_on_the_same_preset_opens_the_first_ones_run(monkeypatch):
    first = fake_model_app(monkeypatch)
    first.run()
    step(first)
    hits = shared_run_cache().stats()["hits"]
    second = fake_model_app(monkeypatch)
    second.run()
    assert no_errors(first) and no_errors(second)
    assert lab(second).engine is lab(first).engine
    text = panel_text(second)
    assert f"{hits + 1} opened or branched from the cache" in text
    assert ("not loaded" in text) == (started_model_worker() is None)  # an earlier test may have loaded it
    assert int(re.search(r"\*\*(\d+)\*\* sessions", text).group(1)) >= 2


def test_the_panel_says_how_far_the_presets_computed_at_start_got(monkeypatch):
    monkeypatch.setenv("SCHEDLAB_PRECOMPUTE", "02_preemption,no_such_preset")
    precomputed.clear()  # the process's job is made by its first page: here, this test's
    try:
        app = fake_model_app(monkeypatch)
        app.run()
        precomputed("fake").thread.join(60)
        app.run()
        text = panel_text(app)
        assert no_errors(app)
        assert re.search(r"02_preemption \d+ frames, to its end", text)
        assert "no_such_preset not a preset here" in text
    finally:
        precomputed.clear()
