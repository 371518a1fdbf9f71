"""A class through the app (AppTest, in one process: the sessions share the class registry): the lecturer starts a
class in the sidebar, a student opening its link names themselves and follows the lecturer's run and frame, breaks
away and follows again; names are bound to their browser and look-alikes refused; the lecturer's reload keeps the
lectern; a follower goes no further than the lecturer while a question is open; wrong codes and keys are limited;
a link's bad values are echoed inert. (Waking a follower's page from the lecturer's step needs a real server:
tests/test_browser_class.py.)"""


import pytest

from session import limits
from session.class_error import ClassError
from session.classroom import LECTURER_ENV, Registry, classes
from session.names import name_key
from tests.helpers.app import (
    button,
    control,
    fake_model_app,
    lab,
    named,
    no_errors,
    player_message,
    show,
    start_class,
    started,
    student_of,
)

pytestmark = pytest.mark.usefixtures("own_sessions")


@pytest.fixture(autouse=True)
def fresh_limits(monkeypatch):
    """Each test's classes, and its counts of wrong guesses (kept in the classes' store), from nothing."""
    monkeypatch.setattr("session.classroom._registry", Registry())


def test_the_lecturer_starts_a_class_and_a_student_follows_their_run_and_frame(app, monkeypatch):
    room = started(app)
    assert no_errors(app) and "key" not in app.query_params  # the address bar is projected: no secret in it
    assert any(room.code in m.value for m in app.markdown)
    app.toggle(key="class_show_secret").set_value(True).run()
    assert room.secret in [c.value for c in app.code] and all(f"key={room.secret}" not in c.value for c in app.code)
    show(app, 4)
    assert room.lead.frame == 4 and room.lead.scenario == "02_preemption"
    student = student_of(room, monkeypatch, "Ada Lovelace")
    assert no_errors(student) and lab(student).shared_run is lab(app).shared_run and lab(student).cursor == 4
    assert any(c.value == "You are **Ada Lovelace** in this class." for c in student.caption)
    assert student.selectbox(key="scenario_choice").value == "02_preemption"  # the sidebar shows the lecturer's
    assert "key" not in student.query_params and student.query_params["class"] == room.code
    assert any(f"Following the lecturer (class {room.code})" in i.value for i in student.info)
    labels = {b.label for b in student.button}  # the lecturer moves a follower's stage: no Run N, Reset or desk
    assert not labels & {"Run N steps ▶▶", "⟲ Reset", "Bring everyone back"}, labels
    assert {"Run N steps ▶▶", "⟲ Reset", "Bring everyone back"} <= {b.label for b in app.button}
    button(student, "Break away").click().run()
    assert {"Run N steps ▶▶", "⟲ Reset"} <= {b.label for b in student.button}  # on their own again
    show(student, 1)
    show(app, 6)
    student.run()
    assert lab(student).cursor == 1  # on their own: the lecturer's steps leave them where they are
    app.run()
    assert any("1 student named, 1 tab open, 0 students following you" in c.value for c in app.caption)
    button(app, "Bring everyone back").click().run()
    student.run()
    assert lab(student).cursor == 6
    control(app, "max_num_seqs").set_value(1).run()  # the lecturer changes a setting mid-run: a branch
    student.run()
    assert lab(student).shared_run is lab(app).shared_run and lab(student).cursor == 6
    assert control(student, "max_num_seqs").value == 1  # the sidebar shows the lecturer's settings


def test_a_name_is_bound_to_its_browser_and_a_look_alike_is_refused(app, monkeypatch):
    room = started(app)
    alices = classes().tokens.issue()  # her browser's token, as the server issued it
    alice = student_of(room, monkeypatch, "Alice Smith", browser=alices)
    for look_alike in ("alice smith", "Alice\u200bSmith", "\u0410lice Smith", "Ａｌｉｃｅ Smith"):
        other = named(student_of(room, monkeypatch), look_alike)
        assert other.error[-1].value.startswith("Alice Smith is already in this class, from another browser")
    again = student_of(room, monkeypatch, browser=alices)  # Alice's reload: her browser's cookie
    assert any(c.value == "You are **Alice Smith** in this class." for c in again.caption)
    assert room.names.all() == {name_key("Alice Smith"): "Alice Smith"} and no_errors(alice)
    for name in ("प्रिया शर्मा", "สมศักดิ์ ใจดี", "محمد عَلي", "E\u0301mile"):  # every script, its marks kept
        page = student_of(room, monkeypatch, name)
        assert no_errors(page)
    assert sorted(room.names.all().values()) == sorted(["Alice Smith", "प्रिया शर्मा", "สมศักดิ์ ใจดี", "محمد عَلي", "Émile"])


def test_a_lecturers_reload_keeps_the_lectern_and_the_class_stays_where_it_was(app, monkeypatch):
    lecturers = classes().tokens.issue()
    monkeypatch.setattr("ui.class_identity._cookies", lambda: {"schedlab_browser": lecturers})
    room = started(app)
    show(app, 5)
    app.toggle(key="predict_mode").set_value(True).run()
    version = room.lead.version
    reloaded = fake_model_app(monkeypatch)  # F5: a new session, the same browser (its cookie)
    reloaded.query_params["class"] = room.code
    reloaded.run()
    assert no_errors(reloaded) and lab(reloaded).cursor == 5 and lab(reloaded).shared_run is lab(app).shared_run
    assert reloaded.selectbox(key="scenario_choice").value == "02_preemption"
    assert reloaded.toggle(key="predict_mode").value
    assert room.lead.frame == 5 and room.lead.version == version  # nobody was moved
    assert any(f"You lead class **{room.code}**" in c.value for c in reloaded.caption)


def test_a_follower_goes_no_further_than_the_lecturer_while_a_question_is_open(app, monkeypatch):
    room = started(app)
    student = student_of(room, monkeypatch, "Bo")
    app.toggle(key="predict_mode").set_value(True).run()  # the question is about a frame ahead of the lecturer's
    student.run()
    asked = room.open_poll()
    assert asked is not None and asked.step > room.lead.frame == 0
    show(student, asked.step)  # the student's player asks for the answer's frame
    message = player_message(student)
    assert message["bound"] == 0 and message["last"] == 0 and lab(student).cursor == 0
    student.radio(key=f"class_choice_{asked.step}").set_value(0)
    button(student, "Send my answer").click().run()
    assert room.polls.at(asked.title, asked.step).votes == {"bo": 0}
    other_tab = student_of(room, monkeypatch)  # a second tab of no name votes nothing
    assert any("Give your name above the stage to answer." in c.value for c in other_tab.caption)
    button(app, "Reveal for everyone").click().run()
    assert room.open_poll() is None or room.open_poll().step > asked.step
    app.run()
    assert any(": **1**" in m.value and "✅" in m.value for m in app.markdown)  # the counts stay, beside the answer
    student.run()
    assert lab(student).cursor == asked.step


def test_wrong_codes_and_keys_are_limited_and_the_real_code_still_works_for_another(app, monkeypatch):
    room = started(app)
    guesser = fake_model_app(monkeypatch)
    guesser.run()
    for n in range(limits.PER_SESSION + 2):
        guesser.text_input(key="class_join_code").set_value(f"ZZZZ{n}")
        button(guesser, "Join the class").click().run()
    assert guesser.error[-1].value.startswith("Too many wrong class codes from this browser or its network: wait")
    guesser.text_input(key="class_join_code").set_value(room.code)
    button(guesser, "Join the class").click().run()
    assert guesser.error[-1].value.startswith("Too many wrong class codes")  # refused unchecked, even the real one
    assert "class" not in guesser.query_params
    real = student_of(room, monkeypatch, "Cy")  # another student, meanwhile
    assert no_errors(real) and real.query_params["class"] == room.code
    monkeypatch.setenv(LECTURER_ENV, "a-strong-key")
    lecturer = fake_model_app(monkeypatch)
    lecturer.run()
    for _ in range(limits.PER_SESSION):
        lecturer.text_input(key="class_key_given").set_value("guess")
        button(lecturer, "Start a class").click().run()
        assert lecturer.error[-1].value == "That is not the server key."
    lecturer.text_input(key="class_key_given").set_value("a-strong-key")
    button(lecturer, "Start a class").click().run()
    assert lecturer.error[-1].value.startswith("Too many wrong keys")
    assert "class" not in lecturer.query_params


def test_a_wrong_code_is_a_message_and_a_links_values_are_echoed_inert(app, monkeypatch):
    app.query_params["class"] = "**Z** [win](http://evil.example)"
    app.run()
    assert any(w.value.startswith("There is no class with this code") for w in app.warning)
    page = fake_model_app(monkeypatch)
    page.query_params["scenario"] = "**bold** [x](http://evil.example) :red[x]"
    page.run()
    warning = page.warning[0].value
    assert "`scenario='**bold** [x](http://evil.example) :red[x]'`" in warning  # in a code span: shown, not rendered


def test_a_roster_names_each_student_by_their_personal_link_and_refuses_other_names(app, monkeypatch):
    room = started(app)
    codes = room.names.set_roster(["王小明", "Ada Lovelace"])
    student = fake_model_app(monkeypatch)
    student.query_params.update({"class": room.code, "me": codes["王小明"], "lang": "zh"})
    student.run()
    assert any(c.value == "你在这堂课中的名字是 **王小明**。" for c in student.caption)
    assert "me" not in student.query_params  # the personal code leaves the address bar
    assert not student.warning  # a personal link is the class's, no unknown parameter of a run's link
    other = student_of(room, monkeypatch)
    assert [b.label for b in other.button if b.label.startswith("Use this")] == ["Use this code"]  # not a name
    other = named(other, "Eve")  # no personal code: in a roster class, refused
    assert other.error[-1].value.startswith("That is not a personal code of this class.")
    app.run()
    assert any("2 students named" in c.value for c in app.caption)  # the roster's names, given or not yet


def test_another_device_leads_with_the_classs_secret_and_the_lecturer_ends_the_class(app, monkeypatch):
    room = started(app)
    student = student_of(room, monkeypatch, "Bo")
    device = fake_model_app(monkeypatch)
    device.run()
    device.text_input(key="class_join_code").set_value(room.code)
    device.text_input(key="class_join_secret").set_value("not it")
    button(device, "Join the class").click().run()
    assert device.error[-1].value == "That is not this class's lecturer secret."
    device.text_input(key="class_join_secret").set_value(room.secret)
    button(device, "Join the class").click().run()
    assert any(f"You lead class **{room.code}**" in c.value for c in device.caption)
    app.button(key="class_end").click().run()
    assert room.ended and classes().find(room.code) is None
    student.run()
    assert any(w.value == f"Class {room.code} has ended." for w in student.warning)
    assert "class" not in student.query_params


def test_a_followers_predictions_toggle_is_the_lecturers_and_a_student_asks_the_class_nothing(app, monkeypatch):
    room = started(app)
    student = student_of(room, monkeypatch, "Bo")
    assert student.toggle(key="predict_mode").disabled and not student.toggle(key="predict_mode").value
    student.session_state["predict_mode"] = True  # sent all the same, as a crafted page would
    student.run()
    assert room.polls.all() == [] and not student.toggle(key="predict_mode").value
    assert "Send my answer" not in {b.label for b in student.button} and room.polls.tallies_csv().count("\n") == 1
    app.toggle(key="predict_mode").set_value(True).run()  # the lecturer's switch
    student.run()
    assert student.toggle(key="predict_mode").value and len(room.polls.all()) == 1
    assert "Send my answer" in {b.label for b in student.button}


def test_the_lecturer_frees_and_removes_names_from_the_desk_and_their_students_are_told(app, monkeypatch):
    room = started(app)
    bo = student_of(room, monkeypatch, "Bo")
    cyrillic = student_of(room, monkeypatch, "\u0410da")  # Cyrillic А: shown spelled out on the desk
    app.run()
    assert "Аda (letters of other scripts: А U+0410)" in list(app.table[0].value.index)
    app.selectbox(key="class_name_managed").set_value(name_key("Bo"))
    button(app, "Free it").click().run()
    assert any(c.value == "Bo is free; a student takes it by typing it." for c in app.caption)
    bo.run()
    assert bo.warning[-1].value.startswith("The lecturer freed the name Bo from this browser")
    named(bo, "Bo")  # typed again: theirs again, the notice gone
    assert room.names.name_of(bo.session_state["browser_token"]) == "Bo" and not bo.warning
    app.selectbox(key="class_name_managed").set_value(name_key("\u0410da"))
    button(app, "Remove from the class").click().run()
    assert sorted(room.names.all().values()) == ["Bo"]
    cyrillic.run()
    assert cyrillic.warning[-1].value.startswith("The lecturer removed Аda from this class")
    codes = room.names.set_roster(["Bo", "Cy"])
    app.run()
    assert list(app.table[0].value["personal code"]) == [codes["Bo"], codes["Cy"], ""]  # and the tab without a name
    app.selectbox(key="class_name_managed").set_value(name_key("Bo"))
    button(app, "Free it").click().run()
    new_code = room.names.roster_codes()["Bo"]
    assert new_code != codes["Bo"] and any(c.value.startswith(f"Bo's new personal code: {new_code}")
                                           for c in app.caption)
    assert list(app.table[0].value["personal code"]) == [new_code, codes["Cy"], "", ""]  # Bo's tab: no name now
    bo.run()
    assert bo.warning[-1].value.startswith("The lecturer freed the name Bo from this browser: this class takes names "
                                           "from its roster only")  # not "type your own name": none can be typed


def test_a_tab_that_ran_ahead_and_followed_again_before_the_question_cannot_answer_it(app, monkeypatch):
    """Issue 47's peek edge, through the pages: one tab of Ada's browser breaks away, steps on (its last page
    run's steps reach its player after that run), and follows again before the lecturer asks; her other tab is
    told its answer is closed, and the server refuses one sent all the same."""
    room = started(app)
    adas = classes().tokens.issue()  # her browser's token, as the server issued it
    answering = student_of(room, monkeypatch, "Ada", browser=adas)
    ahead = student_of(room, monkeypatch, browser=adas)
    button(ahead, "Break away").click().run()
    lab(ahead).run(20)
    button(ahead, "Follow again").click().run()
    assert all(following for _, following, _ in room.seats.every())
    app.toggle(key="predict_mode").set_value(True).run()
    answering.run()
    asked = room.open_poll()
    assert asked.step <= 20 < lab(ahead).last + 1
    assert any("went past the lecturer's frame on its own" in c.value for c in answering.caption)
    assert "Send my answer" not in {b.label for b in answering.button}
    with pytest.raises(ClassError) as refused:  # sent all the same (a crafted message)
        room.vote(answering.session_state["test_session_id"], asked.title, asked.step, 0)
    assert refused.value.message_id == "class.vote_closed" and room.polls.at(asked.title, asked.step).votes == {}


def test_the_lecturer_closes_a_question_and_asks_it_again(app, monkeypatch):
    room = started(app)
    student = student_of(room, monkeypatch, "Bo")
    app.toggle(key="predict_mode").set_value(True).run()
    student.run()
    asked = room.open_poll()
    student.radio(key=f"class_choice_{asked.step}").set_value(1)
    button(student, "Send my answer").click().run()
    button(app, "Close the question").click().run()
    asked = room.polls.at(asked.title, asked.step)  # the poll as the class's store holds it now
    assert asked.closed and asked.counts()[1] == 1  # no more answers; the counts kept
    student.run()
    assert any(c.value == "The lecturer has closed this question." for c in student.caption)
    button(app, "Ask again").click().run()
    asked = room.polls.at(asked.title, asked.step)
    assert asked.open and asked.votes == {}
    student.run()
    assert button(student, "Send my answer") is not None


def test_the_limit_is_said_in_chinese_too(app, monkeypatch):
    app.query_params["lang"] = "zh"
    app.run()
    for n in range(limits.PER_SESSION + 1):
        app.text_input(key="class_join_code").set_value(f"ZZZZ{n}")
        button(app, "加入课堂").click().run()
    assert app.error[-1].value.startswith("来自这个浏览器或其所在网络的错误课堂代码太多：请等待")


def test_a_follower_at_an_open_question_has_no_run_to_the_end_nor_a_later_key_frame(app, monkeypatch):
    room = classes().get(start_class(app, "assignment_1_vip_deadline"))
    show(app, 3)
    app.toggle(key="predict_mode").set_value(True).run()  # "Step 5: which running request is preempted?"
    student = student_of(room, monkeypatch, "Bo")
    assert room.open_poll().step == 5 and lab(student).cursor == 3
    message = player_message(student)  # the key frame at step 5's note (its button's hover text) is the answer
    assert [k[0] for k in message["key_frames"]] == [3] and all(start <= 3 for start, _ in message["titles"])
    assert "Run to the end" not in {b.label for b in student.button}  # breaking away first closes the vote
    assert "This server" not in [e.label for e in student.expander]  # other sessions' frames, the runs' lengths
    lab(student).run(40)  # whatever moved the follower's stage on (a control, a crafted message)
    student.run()
    assert lab(student).cursor == 3 and player_message(student)["cursor"] == 3
    assert not any("finished at step" in m.value for m in student.markdown)
    student.switch_page("app_pages/policy_lab.py").run()  # another page runs any preset to its end: breaking away
    (token, following, _), = room.seats.every()
    assert not following and room.vote_closed(token, room.open_poll().title, 5)
