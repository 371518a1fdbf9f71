"""Fixtures shared by the test modules (helpers without fixtures are in tests/helpers/)."""

import pytest

from engine.engine import Engine
from engine.scenario import SCENARIOS_DIR, load_scenario


@pytest.fixture
def app(monkeypatch):
    """The app in AppTest, on the fake model (fast); each test runs it itself."""
    from tests.helpers.app import fake_model_app  # Streamlit's testing module only where a test drives the app

    return fake_model_app(monkeypatch)


@pytest.fixture(scope="module")
def preemption_preset() -> Engine:
    """Preset 02_preemption run to its end on the fake model (read, never changed, by the module's tests)."""
    engine = load_scenario(SCENARIOS_DIR / "02_preemption.toml", runner="fake").engine()
    engine.run()
    return engine
