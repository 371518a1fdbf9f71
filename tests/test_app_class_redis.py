"""The page of a lecture hall's class when its Redis stops answering (AppTest; the class in a Redis of the test's
own): the lecturer and a student (in Chinese) read plainly that the class cannot be reached, no error box; the
lecturer's own stage keeps stepping; once Redis is back the class picks up where the lecturer is."""

import time

import pytest

from i18n import text
from session.class_store import StoreUnavailable
from session.classroom import Registry
from session.redis_store import RedisStore
from tests.helpers.app import fake_model_app, lab, no_errors, show, start_class

pytestmark = pytest.mark.usefixtures("own_sessions")
BACK_WITHIN_S = 20.0  # the most the test waits for the class to be reached again after Redis came back


@pytest.fixture
def hall_registry(redis_server, monkeypatch):
    """The process's classes in the test's Redis (as with $SCHEDLAB_REDIS_URL set)."""
    registry = Registry(store=RedisStore(redis_server.url))
    monkeypatch.setattr("session.classroom._registry", registry)
    yield registry
    registry.store.close()


def warnings(at) -> list[str]:
    return [w.value for w in at.warning]


def test_an_unreachable_redis_is_said_plainly_the_lecturers_stage_goes_on_and_the_class_picks_up(
        app, monkeypatch, hall_registry, redis_server):
    lecturers = hall_registry.tokens.issue()
    monkeypatch.setattr("ui.class_identity._cookies", lambda: {"schedlab_browser": lecturers})
    room = hall_registry.get(start_class(app))
    show(app, 2)
    monkeypatch.setattr("ui.class_identity._cookies", lambda: {})
    student = fake_model_app(monkeypatch)
    student.query_params.update({"class": room.code, "lang": "zh"})
    student.run()
    assert no_errors(student) and lab(student).cursor == 2

    redis_server.stop()
    show(app, 5)  # the lecturer steps on while the class cannot be reached
    assert no_errors(app) and lab(app).cursor == 5
    assert text("en", "class.store_down") in warnings(app)
    student.run()
    assert no_errors(student) and text("zh", "class.store_down") in warnings(student)

    redis_server.start()
    deadline = time.monotonic() + BACK_WITHIN_S
    while not lead_at(room, 5) and time.monotonic() < deadline:
        time.sleep(0.3)
        app.run()  # the lecturer's next page run publishes where they are
    app.run()  # the run that published may have begun while the store was still being reached again
    assert room.lead.frame == 5 and text("en", "class.store_down") not in warnings(app) and no_errors(app)
    student.run()
    assert lab(student).cursor == 5 and text("zh", "class.store_down") not in warnings(student)


def lead_at(room, frame: int) -> bool:
    """Whether the class's lead stands at `frame` (False while its store cannot be reached)."""
    try:
        return room.lead is not None and room.lead.frame == frame
    except StoreUnavailable:
        return False
