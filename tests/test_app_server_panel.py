"""The "this server" panel counts the sessions and the runs they share."""

import re

from engine.runners import started_model_worker
from session.run_cache import shared_run_cache
from tests.test_app_support import fake_model_app, lab, no_errors, step


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
