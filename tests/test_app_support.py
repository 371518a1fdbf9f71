"""Shared helpers of the AppTest tests: the app on the fake model, and its Plotly figures as data. No tests."""

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def fake_model_app(monkeypatch) -> AppTest:
    """The app, defaulting to the fake model (fast); each test module wraps this in its `app` fixture."""
    monkeypatch.setenv("SCHEDLAB_RUNNER", "fake")
    return AppTest.from_file(APP, default_timeout=60)


def figures(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def figure(at: AppTest, title_start: str) -> dict:
    return next(f for f in figures(at) if f["layout"]["title"]["text"].startswith(title_start))


def block_grid_z(at: AppTest) -> list:
    return figure(at, "KV cache")["data"][0]["z"]


def button(at: AppTest, label: str):
    return next(b for b in at.button if b.label == label)


def lab(at: AppTest):
    return at.session_state["lab"]


def no_errors(at: AppTest) -> bool:
    return not at.exception and not at.error
