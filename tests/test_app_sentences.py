"""What the learner reads on the page agrees with what the page shows: key-frame notes on a branched run,
mid-run changes, help and glossary."""

import pytest

from tests.test_app_controls import control
from tests.test_app_support import button, fake_model_app, lab, no_errors


@pytest.fixture
def app(monkeypatch):
    return fake_model_app(monkeypatch)


def at_frame(app, scenario: str, frame: int):
    app.query_params["scenario"] = scenario
    app.query_params["frame"] = str(frame)
    app.run()
    assert no_errors(app) and lab(app).cursor == frame
    return app


def test_a_key_frame_note_a_branch_no_longer_shows_is_greyed(app):
    at_frame(app, "02_preemption", 5)
    assert any("now the tail of running, is preempted for it" in i.value for i in app.info)
    button(app, "◀ Back").click().run()
    control(app, "num_kvcache_blocks").set_value(6).run()
    button(app, "Step ▶").click().run()
    assert no_errors(app) and lab(app).cursor == 5
    assert not any("now the tail of running, is preempted for it" in i.value for i in app.info)
    greyed = [m.value for m in app.markdown if "does not hold on this run" in m.value]
    assert greyed and "now the tail of running, is preempted for it" in greyed[0]
