"""Fixtures shared by the test modules (helpers without fixtures are in tests/helpers/), and the tiers: a test that
uses the `browser` or `fake_server` fixture is marked `browser` here; `make test-fast` leaves out the marks
`browser`, `model`, `slow` and `gpu`, and in it ($SCHEDLAB_TEST_TIER=fast) starting Chromium or the app's server,
or loading the real model, fails the test, naming the mark it lacks."""

import functools
import os

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.run.engine import Engine


@pytest.fixture
def app(monkeypatch):
    """The app in AppTest, on the fake model (fast); each test runs it itself."""
    from tests.helpers.app import fake_model_app  # Streamlit's testing module only where a test drives the app

    return fake_model_app(monkeypatch)


@pytest.fixture
def own_sessions(monkeypatch):
    """A session id per page: a server gives each tab its own, AppTest gives every page the same one (for the class
    tests, `pytestmark = pytest.mark.usefixtures("own_sessions")`)."""
    import uuid

    import streamlit as st

    def this_session() -> str:
        return st.session_state.setdefault("test_session_id", uuid.uuid4().hex)
    for module in ("ui.classroom", "ui.class_identity", "ui.class_predict", "ui.class_desk"):
        monkeypatch.setattr(f"{module}.this_session", this_session)


@pytest.fixture(scope="module")
def preemption_preset() -> Engine:
    """Preset 02_preemption run to its end on the fake model (read, never changed, by the module's tests)."""
    engine = load_scenario(SCENARIOS_DIR / "02_preemption.toml", runner="fake").engine()
    engine.run()
    return engine


@pytest.fixture
def kinds_restored():
    """The kinds a test loads from files (or the sandbox declares) leave the factory's registries and the catalogues
    as they were."""
    from i18n import CATALOGUES
    from scheduler.factory import DECLARED, SCHEDULERS

    saved = dict(SCHEDULERS), {lang: dict(c) for lang, c in CATALOGUES.items()}, dict(DECLARED)
    yield
    SCHEDULERS.clear()
    SCHEDULERS.update(saved[0])
    DECLARED.clear()
    DECLARED.update(saved[2])
    for lang, catalogue in CATALOGUES.items():
        catalogue.clear()
        catalogue.update(saved[1][lang])


@pytest.fixture(scope="module")
def fake_server():
    """`streamlit run app.py` on the fake model on a free port, for a module's browser tests; yields its URL."""
    from tools.app_server import app_server

    with app_server("fake") as (url, _process):
        yield url


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium context for a module's pages, so Streamlit's frontend is downloaded and compiled
    once; each page is still its own Streamlit session."""
    from playwright.sync_api import sync_playwright

    from render.chromium import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium.new_context()
        finally:
            chromium.close()


@pytest.fixture
def redis_server():
    """A Redis server of the test's own on a free port (tests/helpers/redis_server.py), stopped after it; the test is
    skipped where Debian's redis-server is not installed (`make test` installs it)."""
    from tests.helpers.redis_server import RedisServer, installed

    if not installed():
        pytest.skip("redis-server is not installed (make test installs it: tools/ensure_debian_packages.py)")
    with RedisServer() as server:
        yield server


@pytest.fixture(params=["memory", "redis"])
def new_registry(request):
    """A test run twice: with registries of classes over this process's memory, and over a Redis of the test's own
    (session/class_store.py): the class logic must not tell them apart."""
    from session.classroom import Registry
    from tests.helpers.class_stores import store_of

    url = request.getfixturevalue("redis_server").url if request.param == "redis" else None
    made = []

    def new(**kwargs) -> Registry:
        made.append(Registry(store=store_of(request.param, url), **kwargs))
        return made[-1]
    yield new
    for registry in made:
        registry.store.close()


BROWSER_FIXTURES = {"browser", "fake_server"}
FAST_TIER = os.environ.get("SCHEDLAB_TEST_TIER") == "fast"


def pytest_configure(config):
    """Under pytest-xdist (`make test-fast`) the workers share the cores: torch in each takes its share of them, set
    before any test module imports torch. By default each would take a thread per core, and threads that outnumber
    the cores wait on each other (the tiny models' tests then took several times their CPU time)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1:
        os.environ.setdefault("OMP_NUM_THREADS", str(max(1, len(os.sched_getaffinity(0)) // workers)))


def pytest_collection_modifyitems(items):
    for item in items:
        if BROWSER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.browser)


def _refused(what: str, mark: str):
    def refuse(*_args, **_kwargs):
        pytest.fail(f"this test {what}, which `make test-fast` leaves out: mark it `{mark}`", pytrace=False)
    return refuse


@pytest.fixture(scope="session", autouse=FAST_TIER)
def fast_tier_guard():
    """In the fast tier, the real model, Chromium and the app's server are refused: a test that reaches one is
    missing its mark, and fails saying which."""
    import playwright.sync_api

    import engine.run.runner_factory
    import tools.app_server

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine.run.runner_factory, "model_worker",
                      functools.cache(_refused("loads the real model", "model")))
        patch.setattr(playwright.sync_api, "sync_playwright", _refused("starts Chromium", "browser"))
        patch.setattr(tools.app_server, "app_server", _refused("starts the app's server", "browser"))
        yield
