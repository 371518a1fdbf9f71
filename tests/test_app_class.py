"""A class through the app (AppTest, in one process: the sessions share the class registry): the lecturer starts a
class in the sidebar, a student opening its link follows the lecturer's run and frame, breaks away and follows
again; a wrong code or lecturer key is a message. (Waking a follower's page from the lecturer's step needs a real
server: tests/test_browser_class.py.)"""

from session.classroom import LECTURER_ENV, classes
from tests.helpers.app import button, control, fake_model_app, lab, no_errors, player_message, show


def started(app):
    app.query_params["scenario"] = "02_preemption"
    app.run()
    button(app, "Start a class").click().run()
    return classes().get(app.query_params["class"])


def lecturer_link(app) -> str:
    app.toggle(key="class_show_secret").set_value(True).run()
    return app.code[-1].value


def test_the_lecturer_starts_a_class_and_a_student_follows_their_run_and_frame(app, monkeypatch):
    room = started(app)
    assert no_errors(app) and "key" not in app.query_params  # the address bar is projected: no secret in it
    assert any(room.code in m.value for m in app.markdown)
    assert lecturer_link(app).endswith(f"?class={room.code}&key={room.secret}")
    show(app, 4)
    assert room.lead.frame == 4 and room.lead.scenario == "02_preemption"
    student = fake_model_app(monkeypatch)
    student.query_params["class"] = room.code
    student.run()
    assert no_errors(student) and lab(student).shared_run is lab(app).shared_run and lab(student).cursor == 4
    assert student.selectbox(key="scenario_choice").value == "02_preemption"  # the sidebar shows the lecturer's
    assert "key" not in student.query_params and student.query_params["class"] == room.code
    assert any(f"Following the lecturer (class {room.code})" in i.value for i in student.info)
    button(student, "Break away").click().run()
    show(student, 1)
    show(app, 6)
    student.run()
    assert lab(student).cursor == 1  # on their own: the lecturer's steps leave them where they are
    button(student, "Follow again").click().run()
    assert lab(student).cursor == 6
    control(app, "max_num_seqs").set_value(1).run()  # the lecturer changes a setting mid-run: a branch
    student.run()
    assert lab(student).shared_run is lab(app).shared_run and lab(student).cursor == 6
    assert control(student, "max_num_seqs").value == 1  # the sidebar shows the lecturer's settings


def test_followers_play_along_while_the_lecturer_plays_and_stop_on_the_lecturers_frame(app, monkeypatch):
    room = started(app)
    show(app, 12)
    show(app, 2)
    student = fake_model_app(monkeypatch)
    student.query_params["class"] = room.code
    student.run()
    assert player_message(student)["playing"] == 0.0 and lab(student).cursor == 2  # the lecturer stands still
    app.session_state["stage_player"] = {"play": {"frame": 2, "speed": 5}}  # the Play the player tells
    app.session_state["class_playing"] = 5.0
    app.run()
    assert room.lead.playing == 5.0 and room.lead.frame == 2
    student.run()  # woken by the lead (ui/wake.py, in a real server)
    message = player_message(student)
    assert message["playing"] == 5.0 and message["cursor"] >= 2 and message["last"] >= 12  # frames ahead, held
    show(app, 9)  # the lecturer's Pause at 9, told with speed 0
    app.session_state["class_playing"] = 0.0
    app.run()
    student.run()
    message = player_message(student)
    assert message["playing"] == 0.0 and message["cursor"] == lab(student).cursor == 9


def test_a_wrong_code_is_a_message_and_a_server_key_guards_starting_a_class(app, monkeypatch):
    app.query_params["class"] = "ZZZZZ"
    app.run()
    assert any("There is no class 'ZZZZZ'" in w.value for w in app.warning)
    monkeypatch.setenv(LECTURER_ENV, "s3cret")
    lecturer = fake_model_app(monkeypatch)
    lecturer.run()
    lecturer.text_input(key="class_key_given").set_value("guess")
    button(lecturer, "Start a class").click().run()
    assert "class" not in lecturer.query_params and lecturer.error[-1].value.startswith("That is not the lecturer key")
    lecturer.text_input(key="class_key_given").set_value("s3cret")
    button(lecturer, "Start a class").click().run()
    assert lecturer_link(lecturer).endswith("&key=s3cret")
