"""Driving the app in AppTest: the app on the fake model, its widgets and Plotly figures as data, and the stage
player's side of the conversation (AppTest runs no JavaScript, so these do what player/player.js does)."""

import itertools
import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from session.classroom import classes
from viz.frame_payload import EMPTY_VIEW, decode

APP = str(Path(__file__).resolve().parents[2] / "app.py")
PAGES = Path(__file__).resolve().parents[2] / "app_pages"


def fake_model_app(monkeypatch) -> AppTest:
    """The app, defaulting to the fake model (fast); each test module wraps this in its `app` fixture."""
    monkeypatch.setenv("SCHEDLAB_RUNNER", "fake")
    return AppTest.from_file(APP, default_timeout=60)


def page_app(name: str) -> AppTest:
    """A page of app_pages/ by its file's name ("policy_lab", "tour"), for AppTest (not yet run)."""
    return AppTest.from_file(str(PAGES / f"{name}.py"), default_timeout=60)


def opened_page(name: str) -> AppTest:
    """A page of app_pages/ run once, with no exception."""
    at = page_app(name)
    at.run()
    assert not at.exception
    return at


def figures(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def figure(at: AppTest, title_start: str) -> dict:
    return next(f for f in figures(at) if f["layout"]["title"]["text"].startswith(title_start))


def button(at: AppTest, label: str):
    return next(b for b in at.button if b.label == label)


def control(at: AppTest, field: str):
    """The sidebar's widget for the scheduler setting `field`."""
    key = f"cfg_{field}"
    for kind in ("number_input", "toggle", "selectbox"):
        found = [w for w in getattr(at, kind) if w.key == key]
        if found:
            return found[0]
    raise AssertionError(f"no control for {field}")


def lab(at: AppTest):
    return at.session_state["lab"]


def no_errors(at: AppTest) -> bool:
    return not at.exception and not at.error


_requests = itertools.count(1)


def player_message(at: AppTest) -> dict:
    """The data the stage player was sent in the last run."""
    return json.loads(at.get("bidi_component")[0].proto.json)


def show(at: AppTest, k: int) -> AppTest:
    """The player moves to frame k (slider, Back, a key frame); beyond what it holds it first asks for frames."""
    if k > lab(at).last:
        message = player_message(at)
        at.session_state["player_request"] = {"run": message["run"], "have": message["last"], "want": k,
                                              "seq": next(_requests)}
    at.session_state["player_frame"] = k
    return at.run()


def start_class(at: AppTest, scenario: str = "02_preemption") -> str:
    """The lecturer's page opened on `scenario` and a class started from its sidebar; returns the class's code."""
    at.query_params["scenario"] = scenario
    at.run()
    button(at, "Start a class").click().run()
    return at.query_params["class"]


def started(app: AppTest):
    """The class the lecturer's page `app` started (`start_class`)."""
    return classes().get(start_class(app))


def student_of(room, monkeypatch, name: str | None = None, browser: str | None = None):
    """A student's page on the class's link (`browser`: the token its cookie carries), named `name`."""
    if browser is not None:
        monkeypatch.setattr("ui.class_identity._cookies", lambda: {"schedlab_browser": browser})
    page = fake_model_app(monkeypatch)
    page.query_params["class"] = room.code
    page.run()
    monkeypatch.setattr("ui.class_identity._cookies", lambda: {})
    if name is not None:
        named(page, name)
    return page


def named(page, name: str):
    """`name` typed in the class's name box (a roster class's: a personal code) and sent."""
    page.text_input(key="class_name_typed").set_value(name)
    labels = [b.label for b in page.button]
    page.button[labels.index("Use this code" if "Use this code" in labels else "Use this name")].click().run()
    return page


def step(at: AppTest, times: int = 1) -> AppTest:
    return show(at, lab(at).cursor + times)


def back(at: AppTest) -> AppTest:
    return show(at, lab(at).cursor - 1)


def player_views(at: AppTest) -> list[dict]:
    """Every frame the player would hold after asking for the whole run again."""
    at.session_state["player_request"] = {"run": player_message(at)["run"], "have": -1, "want": 0,
                                          "seq": next(_requests)}
    at.run()
    views, previous = [], EMPTY_VIEW
    for delta in player_message(at)["frames"]:
        previous = decode(previous, delta)
        views.append(previous)
    return views


def shown_view(at: AppTest) -> dict:
    """The frame the player shows, as it was sent."""
    return player_views(at)[lab(at).cursor]
