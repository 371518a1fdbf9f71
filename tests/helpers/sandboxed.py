"""Running a learner's file in the sandbox for the tests (tests/test_sandbox*.py): a small preset's spec, a
learner's file made of a body under the article's scheduler, and the server's registry of kinds restored after."""

from __future__ import annotations

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from sandbox import jail, kinds

SMART_PRESET = SCENARIOS_DIR / "07_smart_preemption.toml"
NEEDS_JAIL = pytest.mark.skipif(not jail.available(), reason="bubblewrap is absent (make install installs it)")
HEADER = "from scheduler.article import Scheduler\n\n\n"
DECLARED = 'class Mine(Scheduler):\n    info = Scheduler.info.derive("mine")\n'


def preset_spec(runner: str = "fake"):
    return load_scenario(SMART_PRESET, runner=runner).spec


def learner(body: str = "", *, before: str = "") -> str:
    """A learner's file: `before` at its top (after the import of the article's scheduler), then the class Mine
    with `body` (indented lines) under its declaration."""
    return HEADER + before + DECLARED + body


@pytest.fixture
def registry(kinds_restored, monkeypatch):
    """The kinds the sandbox registers on the server leave the factory's registry and the catalogues as they were
    (tests/conftest.py `kinds_restored`), and the sandbox's own count of them. Its workers run as the tests' peers
    (sandbox/jail.py YIELDING): on a machine busy with other tests, a yielding worker waits past its deadline."""
    monkeypatch.setattr(jail, "YIELDING", False)
    registered = set(kinds._registered)
    yield
    kinds._registered.clear()
    kinds._registered.update(registered)
