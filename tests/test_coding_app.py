"""Coding assignments through the app (AppTest): the lecturer sets one from the form under the stage, a student
sees it with its starter's code and hands code in under their name (one grading at a time), sees the server's grade
per goal and workload, and the lecturer sees it in the table; a gradebook's link to a hand-in opens for its author
and is refused in words to another student. (The sandbox grading real code: tests/test_coding_sandbox.py; a real
server with a lecturer and two students: tests/test_browser_coding_class.py.)"""

import pytest

from engine.inputs.goals import FAIL, PASS, Verdict
from i18n import Message
from session.classroom import classes
from starters import BY_ID, source
from tests.helpers.app import button, no_errors, start_class, student_of
from tests.helpers.coding import WORKLOAD, Recorded

VICTIM = BY_ID["victim"]


@pytest.fixture
def recorded(monkeypatch):
    """The process's grader records each hand-in and grades none (the grade is filed by the test)."""
    grader = Recorded()
    monkeypatch.setattr("session.coding_grade.grader", lambda: grader)
    return grader


def set_assignment(lecturer, name: str = "Victim", max_wait: int = 20):
    lecturer.text_input(key="coding_name").set_value(name)
    lecturer.selectbox(key="coding_starter").set_value(VICTIM.id)
    lecturer.multiselect(key="coding_workloads").set_value([WORKLOAD])
    lecturer.number_input(key="coding_max_wait").set_value(max_wait)
    return button(lecturer, "Set it").click().run()


def test_the_lecturer_sets_one_and_a_student_hands_in_code_and_sees_the_servers_grade(app, monkeypatch, recorded):
    room = classes().get(start_class(app))
    set_assignment(app)
    assert no_errors(app) and [s.value for s in app.success] == [
        "The coding assignment Victim is set: the students see it under their stage."]
    (assignment,) = room.coding.all()
    assert (assignment.starter, assignment.class_name, assignment.workloads, [g.kind for g in assignment.goals]) == (
        "victim", "MyVictim", (WORKLOAD,), ["contract", "latency_vs", "latency"])
    student = student_of(room, monkeypatch)
    assert student.text_area(key="coding_source_Victim").value == source(VICTIM)  # the starter's code to begin from
    assert button(student, "Hand in the code").disabled  # no name yet
    student.text_input(key="class_name_typed").set_value("Ada")
    button(student, "Use this name").click().run()
    student.text_area(key="coding_source_Victim").set_value("my code").run()
    button(student, "Hand in the code").click().run()
    assert no_errors(student) and [h.source for h in recorded.started] == ["my code"]
    assert any(i.value.startswith("Your code is being graded") for i in student.info)
    button(student, "Hand in the code").click().run()  # again while it is graded: refused in words
    assert [e.value for e in student.error] == [
        "Your previous hand-in is still being graded: hand in again once it is."]
    hand = recorded.started[0]
    room.coding.file(hand, ((Message("coding.on_workload", workload=WORKLOAD, goal=assignment.goals[0].words),
                             Verdict(FAIL, Message("coding.no_trace"))),))  # as the grader files it
    student.radio(key="lang").set_value("zh").run()
    assert any(w.value.endswith(" 评分：作业未通过：1 个目标中达成 0 个。") for w in student.warning)
    assert any("在 07_smart_preemption 上" in m.value and "代码没有运行。" in m.value for m in student.markdown)
    app.run()
    assert "**Submissions: 1 student, 0 passed**" in [m.value for m in app.markdown]  # the lecturer's table


def test_a_hand_ins_link_opens_for_its_author_and_is_refused_to_another_student(app, monkeypatch, recorded):
    room = classes().get(start_class(app))
    set_assignment(app)
    ada = student_of(room, monkeypatch, "Ada")
    ada.text_area(key="coding_source_Victim").set_value("Ada's code").run()
    button(ada, "Hand in the code").click().run()
    filed = room.coding.file(recorded.started[0], ((Message("coding.no_trace"), Verdict(PASS, Message(
        "coding.no_trace"))),))
    bob = student_of(room, monkeypatch, "Bob")
    bob.query_params.update({"class": room.code, "submission": filed.run.rsplit("=", 1)[1]})
    bob.run()
    assert "This hand-in is another student's: only its author and the lecturer can open it." in [
        w.value for w in bob.warning]
    assert not bob.session_state["lab"].is_trace  # nothing of Ada's was opened
