"""Tokens the server issued (issue 47, finding 8 and point 5; session/tokens.py, session/class_lead.py): a token the
server never issued is refused and that browser gets an issued one; every process sharing a store accepts the
others' tokens; a ticket hands a token to its page once; a lecturer revokes a device and rotates the class's secret
(the old lecturer tokens lose their rights, students keep seats and names); a copied lecturer token, revoked or
rotated away, cannot end the class. (The cookie and the websocket's origin through a real server:
tests/test_browser_tokens.py.)"""

import pytest

from session.class_store import MemoryStore
from session.classroom import Registry, classes
from session.tokens import SECRET_ENV, TICKET_S, Tokens, device_id
from tests.helpers.app import button, fake_model_app, start_class
from tests.helpers.class_stores import store_of

pytestmark = pytest.mark.usefixtures("own_sessions")


def test_a_token_the_server_never_issued_is_refused(new_registry):
    tokens = new_registry().tokens
    issued = tokens.issue()
    assert tokens.issued(issued)
    body, signature = issued.split(".")
    forged = [None, "", "A" * 32, "A" * 24 + "." + "A" * 22, body + "." + signature[::-1], body[::-1] + "." + signature,
              issued + "x", issued.replace(".", "")]
    assert not any(tokens.issued(token) for token in forged)
    assert not Tokens(MemoryStore()).issued(issued)  # another server's secret


def test_every_process_sharing_the_store_accepts_the_tokens_of_the_others(new_registry, request):
    first = new_registry()
    kind = request.node.callspec.params["new_registry"]
    url = request.getfixturevalue("redis_server").url if kind == "redis" else None
    # a second process: its own registry over the same Redis (the memory store is one process: the same store)
    second = Registry(store=first.store if kind == "memory" else store_of(kind, url))
    try:
        assert second.tokens.issued(first.tokens.issue()) and first.tokens.issued(second.tokens.issue())
    finally:
        if second.store is not first.store:
            second.store.close()


def test_the_operators_secret_signs_the_tokens(monkeypatch):
    monkeypatch.setenv(SECRET_ENV, "the operator's own")
    token = Tokens(MemoryStore()).issue()
    assert Tokens(MemoryStore()).issued(token)  # any process given the same secret, whatever its store
    monkeypatch.setenv(SECRET_ENV, "another")
    assert not Tokens(MemoryStore()).issued(token)


def test_a_ticket_hands_its_token_to_one_page_once(new_registry):
    tokens = new_registry().tokens
    token = tokens.issue()
    ticket = tokens.ticket(token)
    assert token not in ticket
    assert tokens.redeem(ticket) == token
    assert tokens.redeem(ticket) is None  # used
    assert tokens.redeem("x" * 32) is None and tokens.redeem(None) is None and tokens.redeem("../" * 20) is None


def test_tickets_not_redeemed_expire_and_leave_the_memory_store(monkeypatch):
    store = MemoryStore()
    tokens = Tokens(store)
    now = [1000.0]
    monkeypatch.setattr("session.class_store.time.monotonic", lambda: now[0])
    late = tokens.ticket(tokens.issue())
    for _ in range(50):
        tokens.ticket(tokens.issue())
    now[0] += TICKET_S + 1
    fresh = tokens.ticket(tokens.issue())
    assert tokens.redeem(late) is None and tokens.redeem(fresh) is not None
    assert len(store._strings) == 0  # the 50 unredeemed, expired, went with the next ticket; the fresh one redeemed


def test_a_revoked_device_loses_the_lecturers_rights(new_registry):
    registry = new_registry()
    lecturer, tablet = registry.tokens.issue(), registry.tokens.issue()
    room = registry.start(lecturer, "Firefox · Linux")
    assert room.lectern.take_lectern(tablet, room.secret, "Safari · iPadOS")
    devices = room.lectern.devices()
    assert [(d.agent, d.how) for d in devices.values()] == [("Firefox · Linux", "started"),
                                                            ("Safari · iPadOS", "secret")]
    assert set(devices) == {device_id(lecturer), device_id(tablet)} and lecturer not in str(devices)
    student = registry.tokens.issue()
    assert not room.lectern.revoke(student, device_id(tablet))  # only a lecturer revokes
    assert not room.lectern.revoke(lecturer, device_id(lecturer))  # not its own device: rotating is for that
    assert room.lectern.revoke(lecturer, device_id(tablet))
    assert not room.lectern.is_lecturer(tablet) and room.lectern.is_lecturer(lecturer)
    assert list(room.lectern.devices()) == [device_id(lecturer)]


def test_rotating_the_secret_drops_every_old_lecturer_token_and_students_keep_their_seats(new_registry):
    registry = new_registry()
    lecturer, tablet, copy = registry.tokens.issue(), registry.tokens.issue(), registry.tokens.issue()
    room = registry.start(lecturer)
    old = room.secret
    assert room.lectern.take_lectern(tablet, old) and room.lectern.take_lectern(copy, old)
    alice = registry.tokens.issue()
    room.names.claim(alice, "Alice Smith")
    room.seats.sit("alice-tab", alice, lambda: True)
    elsewhere = Registry(store=registry.store).get(room.code)  # found by another process before the rotation
    fresh = registry.tokens.issue()
    assert room.lectern.rotate(alice, fresh) is None  # a student cannot
    new = room.lectern.rotate(lecturer, fresh)
    assert new and new != old and room.secret == new
    assert not any(room.is_lecturer(t) for t in (lecturer, tablet, copy)) and room.is_lecturer(fresh)
    assert list(room.lectern.devices()) == [device_id(fresh)]
    assert elsewhere.secret == new and not elsewhere.lectern.take_lectern(copy, old)
    assert room.lectern.take_lectern(tablet, new)
    assert room.names.name_of(alice) == "Alice Smith" and room.seats.seat("alice-tab").token == alice


def browser(monkeypatch, token: str):
    monkeypatch.setattr("ui.class_identity._cookies", lambda: {"schedlab_browser": token})


def test_an_unissued_token_is_refused_and_the_browser_is_issued_one(app, monkeypatch):
    code = start_class(app)
    browser(monkeypatch, "A" * 32)
    first = fake_model_app(monkeypatch)
    first.query_params["class"] = code
    first.run()
    first.text_input(key="class_name_typed").set_value("Alice Smith")
    button(first, "Use this name").click().run()
    held = first.session_state["browser_token"]
    assert held != "A" * 32 and classes().tokens.issued(held)
    again = fake_model_app(monkeypatch)  # another browser sending the same made-up token is not Alice
    again.query_params["class"] = code
    again.run()
    assert not any("Alice Smith" in c.value for c in again.caption)
    assert classes().get(code).names.name_of("A" * 32) is None


def lecturer_and_copy(app, monkeypatch, copied: str):
    """A class whose lecturer's page is `app`, and a page of another browser whose cookie carries `copied`."""
    browser(monkeypatch, copied)
    copy = fake_model_app(monkeypatch)
    copy.query_params["class"] = app.query_params["class"]
    copy.run()
    assert button(copy, "End it now")  # the copy leads: its desk is drawn
    return copy


def test_a_copied_lecturer_token_rotated_away_cannot_end_the_class(app, monkeypatch):
    lecturers = classes().tokens.issue()
    browser(monkeypatch, lecturers)
    room = classes().get(start_class(app))
    copy = lecturer_and_copy(app, monkeypatch, lecturers)
    button(app, "Rotate the secret").click().run()
    assert app.session_state["browser_token"] != lecturers and room.is_lecturer(app.session_state["browser_token"])
    button(copy, "End it now").click().run()
    assert not room.ended and not room.lectern.is_lecturer(lecturers, fresh=True)
    assert any("no longer has the lecturer's rights" in e.value for e in copy.error)
    button(app, "End it now").click().run()  # the lecturer still can
    assert room.ended


def test_a_copied_lecturer_token_revoked_cannot_end_the_class(app, monkeypatch):
    lecturers, tablets = classes().tokens.issue(), classes().tokens.issue()
    browser(monkeypatch, lecturers)
    room = classes().get(start_class(app))
    assert room.lectern.take_lectern(tablets, room.secret)
    copy = lecturer_and_copy(app, monkeypatch, tablets)
    app.run()
    revoke = [b for b in app.button if b.label == "Revoke"]
    assert len(revoke) == 1  # the tablet's; not this device's own
    revoke[0].click().run()
    button(copy, "End it now").click().run()
    assert not room.ended and not room.is_lecturer(tablets)
