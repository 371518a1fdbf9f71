"""An assignment through the app (AppTest): the panel under the stage shows the goals, undecided until the run's
end, then met or not with the reason, in the session's language; the sidebar locks what the assignment locks and
says why; in a class a student hands in the ended run under a name and the lecturer sees it by name. (A real
server with a lecturer and two students: tests/test_browser_assignment.py.)"""

from engine.inputs.goals import gather
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.run.engine import Engine
from session.classroom import classes
from tests.helpers.app import button, control, lab, named, no_errors, show, start_class, student_of

VIP = "assignment_1_vip_deadline"


def opened(app, scenario: str = VIP):
    app.query_params["scenario"] = scenario
    return app.run()


STATES = {"green": "met", "red": "not met", "gray": "open"}  # the colour of each goal's icon


def goal_lines(app) -> list[str]:
    """Each goal's line: its state (by its icon's colour), its words and its verdict's reason."""
    return [f"{STATES[m.value[1:m.value.index('[')]]}: {m.value.split('] ', 1)[1]}" for m in app.markdown
            if m.value.startswith(tuple(f":{colour}[" for colour in STATES))]


def test_the_panel_judges_the_run_at_its_end_and_the_sidebar_locks_the_rest(app):
    opened(app)
    assert no_errors(app)
    assert goal_lines(app)[0].startswith("open: **Request 3 finishes by step 20.** Not decided yet: the run has not "
                                         "finished (step 0).")
    assert control(app, "num_kvcache_blocks").disabled and not control(app, "queue_policy").disabled
    assert app.radio(key="runner_choice").disabled and button(app, "Add request").disabled
    assert any(c.value.startswith(":material/lock: Locked by this scenario's assignment, which lets you change only: "
                                  "max_num_seqs (requests per batch)") for c in app.caption)
    button(app, "Run to the end").click().run()
    assert lab(app).is_over and goal_lines(app) == [
        "not met: **Request 3 finishes by step 20.** Request 3 finished at step 29, after step 20.",
        "met: **Every request finishes by step 45.** Every request finished by step 45 (the last at step 42)."]
    assert [w.value for w in app.warning] == ["Assignment not passed: 1 of 2 goals met."]
    show(app, 0)
    control(app, "queue_policy").set_value("priority").run()  # the setting the assignment frees: a branch
    button(app, "Run to the end").click().run()
    assert goal_lines(app)[0] == "met: **Request 3 finishes by step 20.** Request 3 finished at step 12, by step 20."
    assert [s.value for s in app.success] == ["Assignment passed: every goal met."]
    app.radio(key="lang").set_value("zh").run()
    assert goal_lines(app)[0] == "met: **请求 3 在第 20 步或之前完成。** 请求 3 在第 12 步完成，不晚于第 20 步。"


def test_a_locked_setting_changed_by_a_link_breaks_the_rules(app):
    app.query_params.update({"scenario": VIP, "num_kvcache_blocks": "6", "queue_policy": "priority"})
    app.run()
    button(app, "Run to the end").click().run()
    assert any("num_kvcache_blocks was changed at frame 0, but the assignment locks it." in e.value for e in app.error)
    assert [w.value for w in app.warning] == ["Assignment not passed: 2 of 2 goals met."]


def test_no_panel_without_an_assignment(app):
    opened(app, "02_preemption")
    assert not goal_lines(app) and not control(app, "num_kvcache_blocks").disabled


def test_a_student_hands_in_under_their_name_and_the_lecturer_filters_sorts_and_deletes(app, monkeypatch):
    room = classes().get(start_class(app, VIP))
    student = student_of(room, monkeypatch)
    assert button(student, "Submit to the lecturer").disabled  # no name yet
    assert any(c.value == "Give your name above the stage to submit." for c in student.caption)
    named(student, "  Ada\tLovelace ")
    assert button(student, "Submit to the lecturer").disabled  # following: the lecturer's run is not theirs
    assert any(c.value.startswith("You are following the lecturer") for c in student.caption)
    button(student, "Break away").click().run()
    assert button(student, "Submit to the lecturer").disabled  # not ended yet
    button(student, "Run to the end").click().run()
    button(student, "Submit to the lecturer").click().run()
    assert no_errors(student)
    assert any(c.value.startswith("Submitted as Ada Lovelace at ") and c.value.endswith(
        "Assignment not passed: 1 of 2 goals met.") for c in student.caption)
    for browser, name in (("b", "Bob"), ("c", "Cy " + "x" * 37)):  # two more, handed in from the session layer
        room.names.claim(browser, name)
        room.hand_in(browser, VIP, _judged())
    app.run()
    assert any(m.value == "**Submissions: 3 students, 0 passed**" for m in app.markdown)
    table = app.table[-1].value
    assert list(table.index) == ["Ada Lovelace", "Bob", "Cy " + "x" * 37]
    assert table.iloc[0, 1] == "✗ not met: Request 3 finished at step 29, after step 20."
    app.text_input(key="assignment_filter").set_value("BOB").run()  # compared as names are
    assert list(app.table[-1].value.index) == ["Bob"]
    app.text_input(key="assignment_filter").set_value("").run()
    app.selectbox(key="assignment_order").set_value("latest").run()
    assert list(app.table[-1].value.index)[-1] == "Ada Lovelace"
    app.selectbox(key="assignment_delete_who").set_value("bob")
    button(app, "Delete it").click().run()
    assert [s.name for s in room.submissions.of(VIP)] == ["Ada Lovelace", "Cy " + "x" * 37]
    run = room.submissions.of(VIP)[0].run
    assert f"scenario={VIP}" in run and "frame=" in run  # reopens the very run handed in
    assert room.submissions.csv(room.code, "en").count("Ada Lovelace") == 2  # a row per goal


def test_the_gradebook_link_is_built_by_the_server_never_from_the_address_a_page_reports(app, monkeypatch):
    room = classes().get(start_class(app, VIP))
    student = student_of(room, monkeypatch, "Mallory")
    button(student, "Break away").click().run()
    button(student, "Run to the end").click().run()
    reported = "https://phish.example/login"  # the page address a crafted page reports (st.context.url)
    monkeypatch.setattr("streamlit.runtime.context._context_info_field",
                        lambda field: reported if field == "url" else None)
    button(student, "Submit to the lecturer").click().run()
    assert no_errors(student) and "phish" not in room.submissions.of(VIP)[0].run
    row = room.gradebook_csv("http://10.0.0.5:8501").splitlines()[-1]
    assert f"http://10.0.0.5:8501/?scenario={VIP}&" in row and "frame=" in row and "phish" not in row



def _judged():
    """Assignment 1's run to its end as it opens, judged (what a student hands in without changing anything)."""
    scenario = load_scenario(SCENARIOS_DIR / f"{VIP}.toml")
    engine = Engine(scenario.spec)
    engine.run()
    return scenario.assignment.judge(gather(engine.frames, ended=True), scenario.spec, scenario.spec)
