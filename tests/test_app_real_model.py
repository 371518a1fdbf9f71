"""The app's default on a machine with the real model: SmolLM2 loads once per process, its device is shown,
and token boxes carry text pieces."""

from streamlit.testing.v1 import AppTest

from session.lab import RUNNER_ENV
from tests.helpers.app import APP, lab, player_message, shown_view, step
from tests.helpers.real_model import NEEDS_MODEL
from viz.glossary import model_caveat

pytestmark = NEEDS_MODEL


def test_the_real_model_is_the_default_and_shows_text(monkeypatch):
    monkeypatch.delenv(RUNNER_ENV, raising=False)
    app = AppTest.from_file(APP, default_timeout=300)
    app.query_params["scenario"] = "02_preemption"
    app.run()
    assert not app.exception and not app.error
    assert lab(app).inputs.runner == "model"
    assert player_message(app)["model"].startswith(("SmolLM2-135M on cpu", "SmolLM2-135M on cuda"))
    step(app)
    assert not app.exception and lab(app).cursor == 1
    frame, view = lab(app).frame, shown_view(app)
    assert view["wall_ms"] == round(1000 * (frame.wall_schedule_s + frame.wall_model_s), 1) > 0
    # its answers are not to be trusted, its scheduling is
    assert any(c.value == model_caveat(lang="en") for c in app.caption)
    request = frame.requests[0]
    assert request.pieces is not None and view["pieces"][0] == list(request.pieces)
