"""Coding assignments through the app (AppTest): the lecturer sets one from the form under the stage, a student
sees it there and hands in the code of their Workbench under their name (one grading at a time), sees the server's
grade per goal and workload, and the lecturer sees it in the table; a gradebook's link to a hand-in opens for its author
and is refused in words to another student. (The sandbox grading real code: tests/test_coding_sandbox.py; a real
server with a lecturer and two students: tests/test_browser_coding_class.py.)"""

import pytest

from engine.inputs.goals import FAIL, PASS, Verdict
from i18n import Message
from session.classroom import classes
from session.own_scheduler import OwnScheduler
from starters import BY_ID
from tests.helpers.app import button, named, no_errors, page_app, start_class, student_of
from tests.helpers.coding import WORKLOAD, Recorded
from ui.classroom import CODE
from ui.workbench_state import BENCH_KEY, OWN_KEY, Bench

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


def workbench_of(student, code: str, class_name: str = "MyVictim"):
    """The student's Workbench (the same browser, in the class), its editor holding `code`."""
    page = page_app("workbench")
    for key in (CODE, "browser_token"):
        page.session_state[key] = student.session_state[key]
    page.session_state[OWN_KEY], page.session_state[BENCH_KEY] = OwnScheduler(code, class_name, VICTIM.id), Bench()
    page.run()
    return page


def test_the_lecturer_sets_one_and_a_student_hands_in_code_and_sees_the_servers_grade(app, monkeypatch, recorded):
    room = classes().get(start_class(app))
    set_assignment(app)
    assert no_errors(app) and [s.value for s in app.success] == [
        "The coding assignment Victim is set: the students see it under their stage."]
    (assignment,) = room.coding.all()
    assert (assignment.starter, assignment.class_name, assignment.workloads, [g.kind for g in assignment.goals]) == (
        "victim", "MyVictim", (WORKLOAD,), ["contract", "latency_vs", "latency"])
    student = student_of(room, monkeypatch)
    assert any(e.proto.label == "Coding assignment: Victim" for e in student.expander)  # the task, on the stepper
    bench = workbench_of(student, "my code", "MySmartVictim")
    assert button(bench, "Hand in the code").disabled  # no name yet
    named(student, "Ada")
    bench.run()
    sent = {w.key for kind in ("button", "selectbox", "text_input", "number_input", "checkbox", "radio")
            for w in getattr(bench, kind) if (w.key or "").startswith("coding_")}
    assert sent == {"coding_hand_in_on", "coding_hand_in"}  # what the page sends: which assignment, and the click
    button(bench, "Hand in the code").click().run()
    assert no_errors(bench) and [(h.source, h.class_name) for h in recorded.started] == [("my code", "MySmartVictim")]
    assert any(i.value.startswith("Your code is being graded") for i in bench.info)
    button(bench, "Hand in the code").click().run()  # again while it is graded: refused in words
    assert [e.value for e in bench.error] == ["Your previous hand-in is still being graded: hand in again once it is."]
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
    button(workbench_of(ada, "Ada's code"), "Hand in the code").click().run()
    filed = room.coding.file(recorded.started[0], ((Message("coding.no_trace"), Verdict(PASS, Message(
        "coding.no_trace"))),))
    bob = student_of(room, monkeypatch, "Bob")
    bob.query_params.update({"class": room.code, "submission": filed.run.rsplit("=", 1)[1]})
    bob.run()
    assert "This hand-in is another student's: only its author and the lecturer can open it." in [
        w.value for w in bob.warning]
    assert not bob.session_state["lab"].is_trace  # nothing of Ada's was opened
