"""Limits that stop guessers, not the class (issue 47, findings 1, 2, 9, 10): the client identity as the
deployment sees it (never a header a client sets), wrong guesses counted per session, identity and class with
back-off, and what is never refused because others guessed: a browser the class knows (the lecturer's reload, a
named student), the room the class was entered from (a student's link, their personal link), a strong key, an
ended class's link. Then names bounded per class and per identity, the roster paged, students counted as people,
and what the lecturer keeps after ending the class. Through the app (AppTest) and the session layer."""

import pytest

from session import class_door, limits
from session.class_error import ClassError
from session.class_store import MemoryStore
from session.classroom import LECTURER_ENV, Registry, classes
from session.client_identity import LOOPBACK, client_identity, trusted_proxies
from tests.helpers.app import button, fake_model_app, named, no_errors, start_class, started, student_of
from tests.helpers.guesses import waits_as_used_up
from ui.class_desk import PUBLIC_URL_ENV

pytestmark = pytest.mark.usefixtures("own_sessions")
OUTSIDE = "203.0.113.7"
STRONG_KEY = "k" * class_door.STRONG_KEY_CHARS


@pytest.fixture(autouse=True)
def fresh_limits(monkeypatch):
    """Each test's classes, and its counts of wrong guesses (kept in the classes' store), from nothing."""
    monkeypatch.setattr("session.classroom._registry", Registry())


def from_identity(monkeypatch, identity: str):
    """The pages run from now on connect from `identity` (as session/client_identity.py would find it)."""
    monkeypatch.setattr("ui.class_identity.client_identity", lambda *_: identity)


def guessers(monkeypatch, codes, field: str = "class"):
    """A fresh page (a new session, a new browser) per guess: `field` "class" opens ?class=CODE, "key" types the
    server key and starts a class. The pages, for their messages."""
    pages = []
    for code in codes:
        page = fake_model_app(monkeypatch)
        if field == "class":
            page.query_params["class"] = code
            page.run()
        else:
            page.run()
            page.text_input(key="class_key_given").set_value(code)
            button(page, "Start a class").click().run()
        pages.append(page)
    return pages


def told(page) -> str:
    return " ".join(m.value for m in [*page.warning, *page.error])


# -- the client identity -------------------------------------------------------------------------------------


def test_every_connection_of_this_machine_is_one_identity_and_a_clients_header_is_never_believed():
    proxies = trusted_proxies("")
    assert client_identity(None, [], proxies) == LOOPBACK  # Streamlit reports no address for loopback (finding 2)
    # uvicorn took 203.0.113.7 from a header a local script set: undone, the connection is this machine's
    assert client_identity(OUTSIDE, [OUTSIDE], proxies) == LOOPBACK
    assert client_identity("198.51.100.9", ["10.9.9.9"], proxies) == "198.51.100.9"  # a remote peer's own header


def test_behind_a_declared_proxy_the_client_is_the_address_the_proxy_names():
    proxies = trusted_proxies("127.0.0.1, ::1, 10.0.0.0/8, not-an-address")
    assert len(proxies) == 3
    assert client_identity(OUTSIDE, [OUTSIDE], proxies) == OUTSIDE  # nginx on this machine set the header
    # an appending proxy: what the client claimed stays left of the address the trusted proxy saw
    assert client_identity("198.51.100.2", ["6.6.6.6, 198.51.100.2"], proxies) == "198.51.100.2"
    assert client_identity("6.6.6.6", ["6.6.6.6, 10.1.2.3"], proxies) == "6.6.6.6"  # two trusted hops
    assert client_identity("10.1.2.3", ["bogus, 10.1.2.3"], proxies) == "10.1.2.3"
    assert client_identity("198.51.100.9", ["6.6.6.6"], proxies) == "198.51.100.9"  # not from a proxy: its own


def test_the_nginx_configs_set_the_forwarded_address_from_the_connection():
    from tools.app_server import ROOT

    for conf in ("nginx_schedlab.conf", "nginx_schedlab_hall.conf"):
        text = (ROOT / "tools" / conf).read_text()
        assert "proxy_set_header X-Forwarded-For $remote_addr;" in text, conf  # overwrites what a client sent


# -- guessing: back-off, and who is never refused ----------------------------------------------------------------


def test_each_time_the_allowance_is_used_up_again_the_wait_doubles(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr("session.limits.clock", lambda: clock[0])
    guesses = limits.Guesses("codes", MemoryStore(), per_session=2, window_s=60)
    who = limits.Guesser("s", "10.0.0.1")
    assert waits_as_used_up(guesses, who, clock, allowance=2, rounds=4) == [60, 120, 240, 480]
    clock[0] += limits.QUIET_S + 1  # quiet for long: from one window again
    guesses.take(who), guesses.take(who)
    assert guesses.wait_s(who, shared=False) == 60


def test_guessers_behind_the_class_address_lock_out_neither_the_lecturer_nor_the_class(app, monkeypatch):
    """Finding 1: 20 wrong codes from one address refused every join and reload there."""
    room = started(app)  # the lecturer's browser, on this machine (the room)
    adas = classes().tokens.issue()  # her browser's token, as the server issued it
    known = student_of(room, monkeypatch, "Ada", browser=adas)
    codes = room.names.set_roster(["Bo Li"])
    pages = guessers(monkeypatch, [f"ZZZ{n:02}" for n in range(limits.PER_IDENTITY + 5)])
    assert "Too many wrong class codes" in told(pages[-1])  # the guessers wait (finding 2: none did on loopback)
    app.run()  # the lecturer's page, and their reload: the desk stays
    reload = fake_model_app(monkeypatch)
    monkeypatch.setattr("ui.class_identity._cookies", lambda: {"schedlab_browser": app.session_state.browser_token})
    reload.query_params["class"] = room.code
    reload.run()
    assert no_errors(reload) and any(f"You lead class **{room.code}**" in c.value for c in reload.caption)
    monkeypatch.setattr("ui.class_identity._cookies", lambda: {})
    again = student_of(room, monkeypatch, browser=adas)  # a named student's reload
    assert no_errors(again) and any(c.value == "You are **Ada** in this class." for c in again.caption)
    linked = fake_model_app(monkeypatch)  # a student's personal link, a new browser in the room
    linked.query_params.update({"class": room.code, "me": codes["Bo Li"]})
    linked.run()
    assert no_errors(linked) and any(c.value == "You are **Bo Li** in this class." for c in linked.caption)
    assert no_errors(known)


def test_a_guesser_elsewhere_waits_even_with_the_right_code_and_is_told_how_long(app, monkeypatch):
    room = started(app)
    monkeypatch.setattr("session.limits.clock", lambda: 1000.0)  # the waits said are exact
    from_identity(monkeypatch, OUTSIDE)
    guessers(monkeypatch, [f"ZZZ{n:02}" for n in range(limits.PER_IDENTITY)])
    right = guessers(monkeypatch, [room.code])[0]
    assert "wait 60 s" in told(right) and "class" not in right.query_params  # refused unchecked
    zh = fake_model_app(monkeypatch)
    zh.query_params.update({"class": "ZZZ99", "lang": "zh"})
    zh.run()
    assert "来自这个浏览器或其所在网络的错误课堂代码太多：请等待 60 秒" in told(zh)
    from_identity(monkeypatch, "198.51.100.1")  # another network: its own allowance
    assert no_errors(guessers(monkeypatch, [room.code])[0])


def test_an_ended_classs_link_is_no_wrong_guess(app, monkeypatch):
    """Finding 1: 20 opens of an ended class's link locked out the next class."""
    code = start_and_end(app)
    from_identity(monkeypatch, OUTSIDE)
    pages = guessers(monkeypatch, [code] * (limits.PER_IDENTITY + 5))
    assert all(f"Class {code} has ended." in told(page) for page in pages)
    next_class = classes().get(start_class(fake_model_app(monkeypatch)))  # the next class, from elsewhere
    assert no_errors(guessers(monkeypatch, [next_class.code])[0])


def start_and_end(app) -> str:
    room = started(app)
    button(app, "End it now").click().run()
    return room.code


def test_a_strong_server_key_is_never_refused_because_others_guessed(app, monkeypatch):
    monkeypatch.setenv(LECTURER_ENV, STRONG_KEY)
    pages = guessers(monkeypatch, ["guess"] * (limits.PER_IDENTITY + 2), field="key")
    assert told(pages[-1]) == "That is not the server key."  # checked: a strong key cannot be found by guessing
    right = guessers(monkeypatch, [STRONG_KEY], field="key")[0]
    assert no_errors(right) and "class" in right.query_params
    monkeypatch.setenv(LECTURER_ENV, STRONG_KEY[:-1])  # a short key could be found: it waits with the others
    assert "Too many wrong keys" in told(guessers(monkeypatch, [STRONG_KEY[:-1]], field="key")[0])


def test_a_class_counts_wrong_personal_codes_from_every_network_together():
    registry = Registry()
    room = registry.start("L", identity="10.0.0.1")
    room.names.set_roster(["Ada", "Bo"])
    for n in range(limits.PER_CLASS):
        with pytest.raises(ClassError):
            class_door.claim_personal_code(room, f"T{n}", "WRONG", limits.Guesser(f"s{n}", f"198.51.{n}.1"))
    with pytest.raises(limits.TooManyGuesses):  # a botnet of one guess per address: the class waits
        class_door.claim_personal_code(room, "T", "WRONG", limits.Guesser("s", "198.51.200.1"))
    code = room.names.roster_codes()["Ada"]
    assert class_door.claim_personal_code(room, "A", code, limits.Guesser("a", "10.0.0.1")) == "Ada"  # the room


# -- names bounded, people counted, what an ended class leaves -----------------------------------------------------


def test_a_class_takes_as_many_names_as_its_lecturer_expects():
    """Finding 9: 500 names for any class, filled by a flood in half a minute."""
    from session.class_names import DEFAULT_NAMES

    room = Registry().start("L")
    assert room.names.most() == DEFAULT_NAMES
    room.names.set_most(3)
    for n in range(3):
        room.names.claim(f"T{n}", f"Student {n}")
    with pytest.raises(ClassError) as refused:
        room.names.claim("T9", "Student 9")
    assert refused.value.message_id == "class.too_many_names" and refused.value.message.values["most"] == 3
    other = Registry().start("L")
    other.names.set_roster([f"Name {n}" for n in range(7)])
    assert other.names.most() == 7  # a roster's size


def test_new_names_from_one_identity_wait_after_the_allowance(monkeypatch):
    """Finding 9: 200 distinct names from 200 browsers of one address in 13 s."""
    room = Registry().start("L")
    room.names.set_most(500)
    flood = [limits.Guesser(f"s{n}", LOOPBACK) for n in range(limits.NEW_NAMES + 1)]
    for n, who in enumerate(flood[:-1]):
        class_door.claim_name(room, f"T{n}", f"Made Up {n}", who)
    with pytest.raises(limits.TooManyGuesses) as refused:
        class_door.claim_name(room, "T-last", "Made Up Last", flood[-1])
    assert refused.value.message_id == "limit.names"
    assert class_door.claim_name(room, "T0", "Made Up 0", flood[-1]) == "Made Up 0"  # a known browser: no new name
    assert class_door.claim_name(room, "T-else", "Else", limits.Guesser("x", OUTSIDE)) == "Else"


def test_students_are_people_and_tabs_are_tabs(app, monkeypatch):
    """Finding 10: "3 of 60 students following have answered" counted tabs."""
    room = started(app)
    adas = classes().tokens.issue()  # her browser's token, as the server issued it
    ada = student_of(room, monkeypatch, "Ada", browser=adas)
    for _ in range(2):  # Ada's two more tabs
        student_of(room, monkeypatch, browser=adas)
    app.run()
    assert any("1 student named, 3 tabs open, 1 student following you" in c.value for c in app.caption)
    app.toggle(key="predict_mode").set_value(True).run()
    ada.run()
    app.run()
    assert any(c.value == "0 of 1 named students following have answered." for c in app.caption)


def test_the_roster_is_paged(app, monkeypatch):
    from ui.class_desk import ROSTER_PAGE

    room = started(app)
    room.names.set_roster([f"Student {n:03}" for n in range(ROSTER_PAGE + 5)])
    app.run()
    assert any(c.value == f"Students 1–{ROSTER_PAGE} of {ROSTER_PAGE + 5}" for c in app.caption)
    first = set(app.table[0].value.index)
    app.number_input(key="class_roster_page").set_value(2).run()
    assert any(c.value == f"Students {ROSTER_PAGE + 1}–{ROSTER_PAGE + 5} of {ROSTER_PAGE + 5}" for c in app.caption)
    second = set(app.table[0].value.index)
    assert len(first) == ROSTER_PAGE and len(second) == 5 and first | second == {
        f"Student {n:03}" for n in range(ROSTER_PAGE + 5)}


def test_after_the_end_the_sidebar_says_so_and_keeps_what_the_class_had(app, monkeypatch):
    """Finding 10: after "End the class" the sidebar kept the code and exported a header only."""
    room = started(app)
    named(student_of(room, monkeypatch), "Ada")
    monkeypatch.setenv(PUBLIC_URL_ENV, "https://class.example")
    gradebook = room.gradebook_csv("https://class.example")
    button(app, "End it now").click().run()
    assert any(w.value.startswith(f"Class {room.code} has ended.") for w in app.warning)
    assert not any(room.code in m.value for m in app.markdown)  # the code is no longer offered
    kept = app.session_state["class_ended"]
    assert kept[0] == room.code and kept[2] == gradebook and "Ada" in kept[2]
    button(app, "Close").click().run()
    assert not any(w.value.startswith(f"Class {room.code}") for w in app.warning)


def test_the_lecturer_sets_the_most_names_in_the_class_panel(app, monkeypatch):
    room = started(app)
    assert app.number_input(key="class_most_names").value == room.names.most()
    app.number_input(key="class_most_names").set_value(1).run()
    assert room.names.most() == 1
    named(student_of(room, monkeypatch), "Ada")
    late = named(student_of(room, monkeypatch), "Bo")
    assert late.error[-1].value == ("This class takes no more names (its lecturer expects 1): ask the lecturer to "
                                    "raise “Names this class takes”.")  # what to do, in the control's own words
