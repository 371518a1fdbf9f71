"""The "this server" panel: the sessions and the runs they share, what the presets computed at start hold now (a
preset evicted says so), and the roster of open sessions (a closed tab leaves it)."""

import re

import pytest

from engine.run.runner_factory import started_model_worker
from i18n import text
from session.roster import Roster
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
    # AppTest gives every app the same session id and no runtime: one session, open, with its steps so far
    assert re.search(r"\*\*1\*\* sessions with their tabs open", text)
    assert re.search(r"s\d+ · 01_prefill_first · stepped to frame \d+", text)


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
        assert re.search(r"02_preemption (\d+) frames, to its end \(in the run cache now: \1 frames, pinned\)", text)
        assert "no_such_preset not a preset here" in text
    finally:
        precomputed.clear()


def test_the_panel_says_when_a_precomputed_preset_was_evicted(monkeypatch):
    monkeypatch.setenv("SCHEDLAB_PRECOMPUTE", "02_preemption")
    precomputed.clear()
    try:
        app = fake_model_app(monkeypatch)
        app.run()
        job = precomputed("fake")
        job.thread.join(60)
        address = job.addresses["02_preemption"]
        with shared_run_cache()._lock:  # as if the run had been evicted (pinned runs never are, in the cache's code)
            del shared_run_cache()._runs[address]
        app.run()
        assert re.search(r"02_preemption \d+ frames, to its end \(evicted from the run cache\)", panel_text(app))
    finally:
        precomputed.clear()


def test_the_roster_keeps_the_open_sessions_in_order_and_drops_the_closed():
    roster = Roster()
    first, second, third = (roster.attendee(session) for session in ("a", "b", "c"))
    assert (first.name, second.name, third.name) == ("s1", "s2", "s3") and roster.attendee("b") is second
    second.waits.extend([0.1, 0.2, 0.3, 2.0])
    assert roster.live(lambda session: session != "b") == [first, third]
    assert roster.live(lambda session: True) == [first, third]  # a closed session does not come back
    p50, p95 = second.wait_percentiles()
    assert p50 == pytest.approx(0.25) and 1.0 < p95 <= 2.0 and first.wait_percentiles() is None


@pytest.mark.parametrize("lang, said", [("en", "more than one student's share of this server's run cache"),
                                        ("zh", "超过了每个学生在本服务器运行缓存中的份额")])
def test_a_run_too_large_for_its_share_of_the_cache_is_said_to_its_student(monkeypatch, lang, said):
    cache = shared_run_cache()
    monkeypatch.setattr(cache, "share_bytes", 4096)  # a few frames of the fake model's run outgrow it
    app = fake_model_app(monkeypatch)
    app.query_params.update({"lang": lang, "scenario": "03_decode_first"})  # no test pins it
    app.run()
    step(app, 5)
    assert no_errors(app) and lab(app).kept_out
    assert any(said in info.value for info in app.info)


def test_a_lecturer_with_the_key_pins_the_run_shown_and_a_wrong_key_pins_nothing(monkeypatch):
    monkeypatch.setenv("SCHEDLAB_LECTURER_KEY", "s3cret")
    app = fake_model_app(monkeypatch)
    app.query_params.update({"scenario": "06_priority"})
    app.run()
    cache = shared_run_cache()
    address = lab(app)._run.address

    def pin_with(key: str):  # the form's widgets as this run drew them (an element of an earlier run is stale)
        next(i for i in app.sidebar.text_input if i.label == text("en", "server.lecturer_key")).input(key)
        next(b for b in app.sidebar.button if b.label == "Pin the run shown").click().run()

    pin_with("guess")
    assert address not in cache.pinned and "not the lecturer key" in app.sidebar.error[0].value
    pin_with("s3cret")
    assert address in cache.pinned  # (the wrong guess is still reported: the limit counts it)
    cache.unpin(lab(app)._run)
