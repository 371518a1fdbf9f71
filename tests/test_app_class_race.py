"""A lecturer's move that lands while a follower's page is being drawn (after its sidebar, before its stage) never
fails that page: the stage's fragment follows the new lead without setting a widget's key the page has already
drawn (StreamlitWidgetAlreadyInstantiatedError, seen once under a soak of 199 students). AppTest, in one process:
the lecturer's move is made from inside the follower's page run, where the race puts it."""

import ui.server_panel
from session.classroom import classes
from tests.helpers.app import fake_model_app, lab, no_errors, show, start_class


def test_a_lecturers_move_during_a_followers_page_run_is_followed_without_an_error(app, monkeypatch):
    room = classes().get(start_class(app))
    show(app, 3)
    student = fake_model_app(monkeypatch)
    student.query_params["class"] = room.code
    student.run()
    assert no_errors(student) and lab(student).cursor == 3
    drawn_before_the_stage = ui.server_panel.server_panel  # app.py draws it after the sidebar, before the stage

    def the_lecturer_moves_meanwhile():
        drawn_before_the_stage()
        lecturer, lead = lab(app), room.lead  # the lecturer's two steps, published as the lecturer's page does
        lecturer.run(2)
        room.lectern.publish(lecturer.shared_run, lecturer.inputs, lecturer.cursor, lead.scenario, lead.predicting)

    monkeypatch.setattr(ui.server_panel, "server_panel", the_lecturer_moves_meanwhile)
    student.run()
    assert room.lead.frame == 5
    assert no_errors(student), [e.value for e in student.exception]
    assert lab(student).cursor == 5 and student.selectbox(key="scenario_choice").value == "02_preemption"
